//! `FatbinBuilder`: what it refuses before writing, and what it writes
//! reads back entry for entry, in every codec.

use cuda_link::inspect::{Compression, EntryKind, Payload};
use cuda_link::{Arch, FatbinBuilder, FatbinError, ObjectCode};
use cuda_link_tests::{fixtures, nvrtc, ptxas};

/// saxpy as an sm_80 relocatable cubin.
fn sm80_cubin() -> ObjectCode {
    let ptx = nvrtc(
        fixtures::SAXPY_CU,
        "saxpy.cu",
        &["-arch=compute_80", "-rdc=true"],
    )
    .unwrap()
    .ptx
    .unwrap();
    let cubin = ptxas(&ptx, "sm_80", true).unwrap();
    ObjectCode::from_cubin(cubin, "saxpy.sm_80.cubin").unwrap()
}

fn inputs() -> Option<(ObjectCode, ObjectCode, ObjectCode, ObjectCode)> {
    let ptx = ObjectCode::from_ptx(fixtures::saxpy_ptx()?, "saxpy.ptx").unwrap();
    let relocatable =
        ObjectCode::from_cubin(fixtures::saxpy_relocatable_cubin()?, "saxpy.rel.cubin").unwrap();
    let executable =
        ObjectCode::from_cubin(fixtures::saxpy_executable_cubin()?, "saxpy.exe.cubin").unwrap();
    let ltoir = ObjectCode::from_ltoir(fixtures::saxpy_ltoir()?, "saxpy.ltoir").unwrap();
    Some((ptx, relocatable, executable, ltoir))
}

/// Each lie is refused with its own error, before anything is written.
#[test]
fn what_cannot_go_in_is_refused_by_name() {
    let _serial = cuda_link_tests::serial();
    let Some((ptx, cubin, executable, ltoir)) = inputs() else {
        return;
    };
    let sm80 = sm80_cubin();
    let builder = FatbinBuilder::new;
    assert!(matches!(
        builder().add(&cubin, Some(Arch::sm(80))),
        Err(FatbinError::CubinArchMismatch { cubin, slot, .. }) if cubin == Arch::sm(90) && slot == Arch::sm(80)
    ));
    assert!(matches!(
        builder().add(&ptx, Some(Arch::sm(80))),
        Err(FatbinError::PtxTargetAboveSlot { slot, .. }) if slot == Arch::sm(80)
    ));
    assert!(matches!(
        builder().relocatable(true).add(&executable, None),
        Err(FatbinError::ExecutableCubin { .. })
    ));
    assert!(matches!(
        builder().add(&ltoir, Some(Arch::sm(100))),
        Err(FatbinError::LtoirArchMismatch { .. })
    ));
    let twice = builder().add(&cubin, None).unwrap().add(&cubin, None);
    assert!(
        matches!(twice, Err(FatbinError::Duplicate { .. })),
        "{twice:?}"
    );
    let fatbin = builder()
        .add(&sm80, None)
        .unwrap()
        .build("two.fatbin")
        .unwrap();
    assert!(matches!(
        builder().add(&fatbin, None),
        Err(FatbinError::NestedFatbin { .. })
    ));
    // A host object is for nvFatbin's nvFatbinAddReloc: the Rust writer
    // refuses it when it writes.
    let object = ObjectCode::from_object(fixtures::cudadevrt_object().unwrap(), "devrt.o").unwrap();
    let with_object = builder().add(&object, None).unwrap();
    assert!(matches!(
        with_object.build("with-object.fatbin"),
        Err(FatbinError::UnsupportedKind { .. })
    ));
}

/// Two cubins and PTX for a later arch, in each codec: the fatbin reads
/// back with the entries in order, compressed as asked, and PTX as text.
#[test]
fn what_it_writes_reads_back_in_every_codec() {
    let _serial = cuda_link_tests::serial();
    let Some((ptx, cubin, _, ltoir)) = inputs() else {
        return;
    };
    let sm80 = sm80_cubin();
    for codec in [Compression::None, Compression::Lz4, Compression::Zstd] {
        let fatbin = FatbinBuilder::new()
            .compression(codec)
            .add(&sm80, None)
            .and_then(|b| b.add(&cubin, None))
            .and_then(|b| b.add(&ptx, Some(Arch::sm(100))))
            .and_then(|b| b.add(&ltoir, None))
            .and_then(|b| b.build("saxpy.fatbin"))
            .unwrap_or_else(|e| panic!("{codec:?}: {e}"));
        let info = fatbin.inspect().unwrap();
        let entries: Vec<_> = info.fatbin_entries().collect();
        let kinds: Vec<_> = entries
            .iter()
            .map(|e| (e.kind, e.arch.to_string()))
            .collect();
        assert_eq!(
            kinds,
            [
                (EntryKind::Cubin, "sm_80".into()),
                (EntryKind::Cubin, "sm_90".into()),
                (EntryKind::Ptx, "sm_100".into()),
                (EntryKind::Ltoir, "sm_90".into()),
            ]
        );
        for entry in &entries[..3] {
            assert_eq!(entry.compression, codec);
            assert!(
                matches!(&entry.payload, Payload::Cubin(_) | Payload::Ptx(_)),
                "{codec:?}: {:?}",
                entry.payload
            );
        }
        // LTO-IR stays plain: nvFatbin's compressed LTO-IR is encoded.
        assert_eq!(entries[3].compression, Compression::None);
        assert_eq!(info.kernels(), ["saxpy"]);
    }
}

/// An sm_100 cubin's entry carries its `.nv.compat` records as nvFatbin
/// writes them: the same flags and options slot as nvFatbin's own entry.
#[test]
fn sm100_entries_match_nvfatbins_layout() {
    let _serial = cuda_link_tests::serial();
    let Some(ptx) = fixtures::saxpy_ptx() else {
        return;
    };
    let cubin = ptxas(&ptx, "sm_100", true).unwrap();
    let cubin = ObjectCode::from_cubin(cubin, "saxpy.sm_100.cubin").unwrap();
    let ours = FatbinBuilder::new()
        .add(&cubin, None)
        .unwrap()
        .build("ours")
        .unwrap();
    let entry = |code: &ObjectCode| {
        let parsed = cuda_link::fuzzing::parse_all(code.as_bytes()).unwrap();
        let entry = parsed[0].1.entries().next().unwrap().unwrap();
        (entry.flags, entry.options_raw.map(<[u8]>::to_vec))
    };
    let (flags, blob) = entry(&ours);
    assert_eq!(flags & 0x100_0000, 0x100_0000, "{flags:#x}");
    let blob = blob.expect("the compat records");
    assert_eq!(blob[0], 0);
    assert!(blob.len() > 8, "{blob:?}");
}
