//! Any byte string gives `Ok` or `Err` from construction and inspection,
//! never a panic: random bytes, and real inputs mutated and truncated.

use cuda_link::{ObjectCode, ObjectKind};
use proptest::prelude::*;

fn exercise(bytes: Vec<u8>) {
    if let Ok(code) = ObjectCode::from_bytes(bytes.clone(), "fuzz") {
        let _ = code
            .inspect()
            .map(|info| (info.to_string(), info.to_json(), info.kernels().len()));
        let _ = code.check_linkable();
    }
    for kind in ObjectKind::ALL {
        let _ = ObjectCode::with_kind(kind, bytes.clone(), "fuzz").map(|c| c.inspect());
    }
}

/// Small real inputs of every kind, built in pure Rust so this test needs
/// no NVIDIA library.
fn seeds() -> Vec<Vec<u8>> {
    let ptx = b".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n ret;\n}\n".to_vec();
    let fatbin = cuda_link_tests::hostile::raw_fatbin(&[(1, 90, &ptx)]);
    let object = cuda_link_tests::host_object(&fatbin, ".nv_fatbin");
    let archive = cuda_link_tests::ar_archive("k.o", &object);
    let mut ltoir = vec![0xED, 0x43, 0x4E, 0x7F, 1, 0x40];
    ltoir.resize(0x40, 0);
    ltoir[0x1a..0x1c].copy_from_slice(&900u16.to_le_bytes());
    let nvvm_ir = b"target triple = \"nvptx64-nvidia-cuda\"\n\
        define linkonce_odr void @\"h\\2E1\"(i8* %p) {\n ret void\n}\n\
        define ptx_kernel void @k(ptr %p) {\n ret void\n}\ndeclare double @__nv_sin(double)\n\
        !nvvm.annotations = !{!0}\n!0 = !{void (i8*)* @\"h\\2E1\", !\"kernel\", i32 1}\n\
        !nvvmir.version = !{!1}\n!1 = !{i32 2, i32 0}\n"
        .to_vec();
    let bitcode = b"BC\xC0\xDE\x35\x14\x00\x00\x05\x00\x00\x00\x62\x0c\x30\x24".to_vec();
    vec![ptx, fatbin, object, archive, ltoir, nvvm_ir, bitcode]
}

#[test]
fn seeds_are_valid() {
    let kinds: Vec<ObjectKind> = seeds()
        .into_iter()
        .map(|s| ObjectCode::from_bytes(s, "seed").unwrap().kind())
        .collect();
    assert_eq!(
        kinds,
        [
            ObjectKind::Ptx,
            ObjectKind::Fatbin,
            ObjectKind::Object,
            ObjectKind::Archive,
            ObjectKind::Ltoir,
            ObjectKind::NvvmIr,
            ObjectKind::NvvmIr,
        ]
    );
}

/// NVVM IR's reader holds maps, not scans: a module of 100,000 kernels
/// and nodes, or one 4 MB name, reads in one pass.
#[test]
fn nvvm_ir_reads_in_linear_time() {
    let mut many = String::from("target triple = \"nvptx64-nvidia-cuda\"\n!nvvm.annotations = !{");
    let count = 100_000;
    many.push_str(
        &(0..count)
            .map(|i| format!("!{i}"))
            .collect::<Vec<_>>()
            .join(", "),
    );
    many.push_str("}\n");
    for i in 0..count {
        many.push_str(&format!(
            "define void @k{i}() {{\n ret void\n}}\ndeclare void @d{i}()\n"
        ));
        many.push_str(&format!("!{i} = !{{void ()* @k{i}, !\"kernel\", i32 1}}\n"));
    }
    let long = format!(
        "target triple = \"nvptx64\"\ndeclare void @\"{}\"()\n",
        "\\41".repeat(1 << 20)
    );
    for text in [many, long] {
        let started = std::time::Instant::now();
        let code = ObjectCode::from_nvvm_ir(text, "big.ll").unwrap();
        let info = code.inspect().unwrap();
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "{:?}",
            started.elapsed()
        );
        assert!(info.kernels().len() == count || info.kernels().is_empty());
    }
}

#[test]
fn every_truncation_of_every_seed() {
    for seed in seeds() {
        for len in 0..seed.len() {
            exercise(seed[..len].to_vec());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        exercise(bytes);
    }

    #[test]
    fn mutated_seeds(seed in 0usize..7, flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..16)) {
        let mut bytes = seeds().swap_remove(seed);
        for (at, value) in flips {
            let len = bytes.len();
            bytes[at % len] = value;
        }
        exercise(bytes);
    }
}
