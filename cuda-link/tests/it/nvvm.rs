//! NVVM IR as numba-cuda writes it: detected, inspected, compiled by both
//! libNVVM majors (in this process and isolated), and linked by nvJitLink
//! with the kernels checked in the output.

use std::sync::Arc;

use cuda_link::inspect::{Contents, NvvmIrForm};
use cuda_link::nvvm::Nvvm;
use cuda_link::nvvm::{self, NvvmFailure, NvvmRequest};
use cuda_link::{
    Arch, Isolation, LinkError, Linker, LinkerOptions, ObjectCode, ObjectKind, OutputKind,
};
use cuda_link_tests::{
    NUMBA_KERNELS, fixtures, numba_bitcode, numba_kernel, nvjitlink_libraries, nvvm_libraries,
    serial,
};
use nvjitlink_sys::NvJitLink;

fn modules(kernel: &str) -> Vec<ObjectCode> {
    let (modules, _) = numba_kernel(kernel);
    modules
        .into_iter()
        .map(|(name, bytes)| ObjectCode::from_bytes(bytes, name).unwrap())
        .collect()
}

fn each_nvvm(mut check: impl FnMut(u32, Arc<Nvvm>)) {
    for (major, path) in nvvm_libraries() {
        // SAFETY: the pinned libNVVM wheel that `cargo xtask test` installed.
        let lib = Arc::new(unsafe { Nvvm::open(&path) }.unwrap_or_else(|e| panic!("{e}")));
        check(major, lib);
    }
}

/// Runs `check` once per major that has both libNVVM and nvJitLink: an
/// older nvJitLink cannot read a newer libNVVM's LTO-IR ("may need newer
/// version of nvJitLink").
fn each_pair(mut check: impl FnMut(u32, Arc<Nvvm>, Arc<NvJitLink>)) {
    let nvvms = nvvm_libraries();
    for (major, path) in nvjitlink_libraries() {
        let Some((_, nvvm_path)) = nvvms.iter().find(|(m, _)| *m == major) else {
            continue;
        };
        // SAFETY: the pinned libNVVM and nvJitLink wheels.
        let (nvvm, lib) = unsafe {
            (
                Nvvm::open(nvvm_path).unwrap(),
                NvJitLink::open(&path).unwrap(),
            )
        };
        check(major, Arc::new(nvvm), Arc::new(lib));
    }
}

fn libdevice(lib: &Nvvm) -> cuda_link::Bytes {
    let path = nvvm::libdevice_beside(lib.path()).expect("libdevice beside libNVVM");
    nvvm::read_libdevice(&path).unwrap().0
}

fn request<'a>(
    modules: &'a [ObjectCode],
    libdevice: Option<&'a [u8]>,
    options: &'a [String],
    isolation: Isolation,
) -> NvvmRequest<'a> {
    NvvmRequest {
        modules,
        libdevice,
        options,
        resolved_later: &[],
        check_unresolved: true,
        isolation,
    }
}

#[test]
fn numba_ir_is_detected_and_inspected() {
    for kernel in NUMBA_KERNELS {
        for module in modules(kernel) {
            assert_eq!(module.kind(), ObjectKind::NvvmIr, "{}", module.name());
            let info = module.inspect().unwrap();
            let Contents::NvvmIr(ir) = &info.contents else {
                panic!("{info}")
            };
            assert_eq!(ir.form, NvvmIrForm::Text);
            assert_eq!(ir.triple.as_deref(), Some("nvptx64-nvidia-cuda"));
            if module.name().ends_with("module.0.ll") {
                assert_eq!(ir.ir_version, Some((2, 0)), "{info}");
                assert_eq!(info.kernels().len(), 1, "{info}");
                assert!(info.kernels()[0].contains(kernel), "{info}");
            }
        }
    }
}

/// What a program of some modules needs of libdevice: text that calls
/// it requires it, bitcode may call it, the rest need none.
#[test]
fn libdevice_need_of_text_bitcode_and_the_rest() {
    use nvvm::LibdeviceNeed::{IfFound, NotNeeded, Required};
    let math = modules("math_libdevice");
    let records = modules("records");
    let bitcode = ObjectCode::from_nvvm_ir(cuda_link_tests::numba_bitcode(), "records.bc").unwrap();
    let ptx =
        ObjectCode::from_ptx(".version 8.0\n.target sm_90\n.address_size 64\n", "k.ptx").unwrap();
    for (program, need) in [
        (vec![&math[0]], Required),
        (vec![&records[0]], NotNeeded),
        (vec![&bitcode], IfFound),
        (vec![&records[0], &bitcode], IfFound),
        (vec![&bitcode, &math[0]], Required),
        (vec![&ptx], NotNeeded),
        (vec![], NotNeeded),
    ] {
        let names: Vec<&str> = program.iter().map(|m| m.name()).collect();
        assert_eq!(nvvm::LibdeviceNeed::of_all(program), need, "{names:?}");
    }
}

#[test]
fn both_majors_compile_numba_ir_at_compute_90_and_100() {
    let _serial = serial();
    each_nvvm(|major, lib| {
        let libdevice = libdevice(&lib);
        for arch in ["compute_90", "compute_100"] {
            let options = [format!("-arch={arch}"), "-opt=3".to_owned()];
            for kernel in NUMBA_KERNELS {
                let modules = modules(kernel);
                let isolation = match kernel.len() % 2 {
                    0 => Isolation::InProcess,
                    _ => Isolation::process(),
                };
                let made = nvvm::compile(
                    &lib,
                    &request(&modules, Some(&libdevice), &options, isolation),
                )
                .unwrap_or_else(|e| panic!("NVVM {major}, {arch}, {kernel}: {e}"));
                let ptx = ObjectCode::from_ptx(made.code, kernel).unwrap();
                let info = ptx.inspect().unwrap();
                assert_eq!(
                    info.kernels().len(),
                    1,
                    "NVVM {major}, {arch}, {kernel}: {info}"
                );
                assert!(!String::from_utf8_lossy(ptx.as_bytes()).contains(".extern"));
            }
        }
    });
}

#[test]
fn forgotten_libdevice_and_dropped_definitions_are_errors() {
    let _serial = serial();
    each_nvvm(|major, lib| {
        let options = ["-arch=compute_90".to_owned()];
        let math = modules("math_libdevice");
        let forgot = nvvm::compile(&lib, &request(&math, None, &options, Isolation::InProcess));
        assert!(
            matches!(&forgot, Err(NvvmFailure::Unresolved { functions, .. })
                if functions.iter().all(|f| f.starts_with("__nv_")) && !functions.is_empty()),
            "NVVM {major}: {forgot:?}"
        );
        // numba's order works; the definitions first drop `smooth`.
        let mut reversed = modules("device_functions");
        reversed.reverse();
        let libdevice = libdevice(&lib);
        let dropped = nvvm::compile(
            &lib,
            &request(&reversed, Some(&libdevice), &options, Isolation::InProcess),
        );
        assert!(
            matches!(&dropped, Err(NvvmFailure::DroppedByOrder { function, .. })
                if function.contains("smooth")),
            "NVVM {major}: {dropped:?}"
        );
    });
}

#[test]
fn hostile_ir_is_a_typed_error_in_a_worker_and_here() {
    let _serial = serial();
    let good = String::from_utf8(numba_kernel("float64_int64").0[0].1.clone()).unwrap();
    let x86 = good.replace(
        &good[good.find("target datalayout").unwrap()..][..good
            [good.find("target datalayout").unwrap()..]
            .find('\n')
            .unwrap()],
        "target datalayout = \"e-m:e-i64:64-f80:128-n8:16:32:64-S128\"",
    );
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "syntax.ll",
            good.replacen("define void", "define vid", 1).into_bytes(),
        ),
        ("x86-datalayout.ll", x86.into_bytes()),
        (
            "x86-triple.ll",
            good.replace("nvptx64-nvidia-cuda", "x86_64-unknown-linux-gnu")
                .into_bytes(),
        ),
        (
            "no-version.ll",
            good.replace("!nvvmir.version = !{ !0 }", "").into_bytes(),
        ),
        (
            "truncated.bc",
            b"BC\xC0\xDE\x35\x14\x00\x00\x05\x00\x00\x00".to_vec(),
        ),
    ];
    // LLVM 15's opaque pointers, which compute_100's front end reads.
    let opaque = "target triple = \"nvptx64-nvidia-cuda\"\n\
                  target datalayout = \"e-i64:64-i128:128-v16:16-v32:32-n16:32:64\"\n\
                  define ptx_kernel void @k(ptr %p) {\n  store float 1.0, ptr %p\n  ret void\n}\n\
                  !nvvmir.version = !{!0}\n!0 = !{i32 2, i32 0}\n";
    let opaque = [ObjectCode::from_nvvm_ir(opaque, "opaque.ll").unwrap()];
    each_nvvm(|major, lib| {
        let at = |arch: &str| {
            let options = [format!("-arch={arch}")];
            nvvm::compile(
                &lib,
                &request(&opaque, None, &options, Isolation::process()),
            )
        };
        let refused = at("compute_90");
        assert!(
            matches!(&refused, Err(NvvmFailure::UnsupportedIr { construct, arch, .. })
                if construct.contains("ptr") && arch == "compute_90"),
            "NVVM {major}: {refused:?}"
        );
        let taken = at("compute_100");
        assert!(taken.is_ok(), "NVVM {major}: {taken:?}");
        for arch in ["compute_90", "compute_100"] {
            let options = [format!("-arch={arch}")];
            for (name, bytes) in &cases {
                let module = [ObjectCode::from_nvvm_ir(bytes.clone(), *name).unwrap()];
                for isolation in [Isolation::process(), Isolation::InProcess] {
                    let failed = nvvm::compile(&lib, &request(&module, None, &options, isolation));
                    assert!(
                        matches!(
                            &failed,
                            Err(NvvmFailure::Verify { .. }
                                | NvvmFailure::Call { .. }
                                | NvvmFailure::Compile { .. })
                        ),
                        "NVVM {major}, {arch}, {name}, {isolation:?}: {failed:?}"
                    );
                }
            }
        }
    });
}

/// Links numba's IR of two kernels with saxpy's LTO-IR and PTX.
#[test]
fn linker_takes_numba_ir_with_ptx_and_ltoir() {
    let _serial = serial();
    each_pair(|major, nvvm, lib| {
        for isolation in [Isolation::process(), Isolation::InProcess] {
            let options = LinkerOptions::for_arch(Arch::sm(90)).isolation(isolation);
            let mut linker = Linker::with_nvjitlink(Arc::clone(&lib), options)
                .unwrap()
                .with_nvvm(Arc::clone(&nvvm));
            linker.add(&modules("math_libdevice")[0]).unwrap();
            linker.add(&modules("records")[0]).unwrap();
            if let Some(ltoir) = fixtures::ltoir(fixtures::LTO_SCALE_CU, "lto_scale.cu", "sm_90") {
                linker
                    .add(&ObjectCode::from_ltoir(ltoir, "lto_scale.cu").unwrap())
                    .unwrap();
            }
            if let Some(ptx) = fixtures::ptx(fixtures::SAXPY_CU, "saxpy.cu") {
                linker
                    .add(&ObjectCode::from_ptx(ptx, "saxpy.cu").unwrap())
                    .unwrap();
            }
            let cubin = linker
                .link(OutputKind::Cubin)
                .unwrap_or_else(|e| panic!("{major}, {isolation:?}: {e}"));
            let info = cubin.inspect().unwrap();
            for kernel in ["math_libdevice", "records", "saxpy"] {
                assert!(
                    info.kernels().iter().any(|k| k.contains(kernel)),
                    "{major}: {kernel} missing:\n{info}"
                );
            }
        }
    });
}

/// numba's device functions are four modules, the helpers `linkonce_odr`
/// in the last three: a link compiles them as one program, in order, or
/// the helpers would be dropped.
#[test]
fn a_link_of_several_modules_keeps_their_helpers() {
    let _serial = serial();
    each_pair(|major, nvvm, lib| {
        let mut linker = Linker::with_nvjitlink(lib, LinkerOptions::for_arch(Arch::sm(90)))
            .unwrap()
            .with_nvvm(nvvm);
        linker.add_many(&modules("device_functions")).unwrap();
        let cubin = linker
            .link(OutputKind::Cubin)
            .unwrap_or_else(|e| panic!("{major}: {e}"));
        let info = cubin.inspect().unwrap();
        assert!(info.kernels()[0].contains("device_functions"), "{info}");
    });
}

/// LTO-IR is binary and may end in a zero byte, which is not a
/// terminator to strip: nvJitLink refuses LTO-IR cut short ("Invalid
/// bitcode signature"). About one program in 256 ends so; this finds one
/// by the constant it stores.
#[test]
fn ltoir_that_ends_in_zero_is_kept_whole() {
    let _serial = serial();
    let module = |value: u32| {
        let ir = format!(
            "target triple = \"nvptx64-nvidia-cuda\"\n\
             target datalayout = \"e-i64:64-i128:128-v16:16-v32:32-n16:32:64\"\n\
             define void @k(i32* %p) {{\n  store i32 {value}, i32* %p\n  ret void\n}}\n\
             !nvvm.annotations = !{{!0}}\n!0 = !{{void (i32*)* @k, !\"kernel\", i32 1}}\n\
             !nvvmir.version = !{{!1}}\n!1 = !{{i32 2, i32 0}}\n"
        );
        [ObjectCode::from_nvvm_ir(ir, "k.ll").unwrap()]
    };
    let options = ["-arch=compute_90".to_owned(), "-gen-lto".to_owned()];
    each_pair(|major, nvvm, lib| {
        let compile = |value| {
            let modules = module(value);
            nvvm::compile(
                &nvvm,
                &request(&modules, None, &options, Isolation::InProcess),
            )
            .unwrap()
        };
        let Some(made) = (0..4096)
            .map(compile)
            .find(|made| made.code.last() == Some(&0))
        else {
            panic!("NVVM {major}: no LTO-IR of 4096 ends in a zero byte");
        };
        let mut linker =
            Linker::with_nvjitlink(lib, LinkerOptions::for_arch(Arch::sm(90))).unwrap();
        linker
            .add(&ObjectCode::from_ltoir(made.code, "k.ltoir").unwrap())
            .unwrap();
        let linked = linker.link(OutputKind::Cubin);
        assert!(linked.is_ok(), "NVVM {major}: {linked:?}");
    });
}

#[test]
fn the_driver_backend_refuses_nvvm_ir() {
    let module = &modules("records")[0];
    let options = LinkerOptions::for_arch(Arch::sm(90)).backend(cuda_link::Backend::Driver);
    assert!(matches!(
        Linker::check(&options, std::slice::from_ref(module)),
        Err(LinkError::LtoirNeedsNvJitLink { .. })
    ));
}

/// libdevice is read once per version of its file: an edit is read again.
#[test]
fn a_replaced_libdevice_is_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("libdevice.10.bc");
    std::fs::write(&path, b"BC\xC0\xDE first").unwrap();
    let (first, first_digest) = nvvm::read_libdevice(&path).unwrap();
    assert_eq!(nvvm::read_libdevice(&path).unwrap().1, first_digest);
    std::fs::write(&path, b"BC\xC0\xDE the second").unwrap();
    let (second, second_digest) = nvvm::read_libdevice(&path).unwrap();
    assert_ne!(first, second);
    assert_ne!(first_digest, second_digest);
}

/// Bitcode may call libdevice or not: with none beside libNVVM it links
/// without, as `NvvmProgram` compiles it; text that calls `__nv_*` still
/// needs it, and says so.
#[test]
fn bitcode_links_without_libdevice_beside_libnvvm() {
    let _serial = serial();
    each_pair(|major, nvvm, lib| {
        // libNVVM alone in a folder: no libdevice beside it.
        let dir = tempfile::tempdir().unwrap();
        let alone = dir.path().join(nvvm.path().file_name().unwrap());
        std::fs::copy(nvvm.path(), &alone).unwrap();
        assert!(nvvm::libdevice_beside(&alone).is_none());
        // SAFETY: a copy of the pinned libNVVM wheel's library.
        let alone = Arc::new(unsafe { Nvvm::open(&alone) }.unwrap());
        let bitcode = ObjectCode::from_bytes(numba_bitcode(), "records.bc").unwrap();
        assert_eq!(bitcode.kind(), ObjectKind::NvvmIr);
        let linker = |inputs: &[ObjectCode]| {
            let mut linker =
                Linker::with_nvjitlink(Arc::clone(&lib), LinkerOptions::for_arch(Arch::sm(90)))
                    .unwrap()
                    .with_nvvm(Arc::clone(&alone));
            linker.add_many(inputs).unwrap();
            linker.link(OutputKind::Cubin).map_err(Box::new)
        };
        let cubin =
            linker(std::slice::from_ref(&bitcode)).unwrap_or_else(|e| panic!("{major}: {e:?}"));
        let info = cubin.inspect().unwrap();
        assert!(info.kernels()[0].contains("records"), "{info}");

        let math = modules("math_libdevice").remove(0);
        let refused = linker(&[math]).unwrap_err();
        assert!(
            matches!(*refused, LinkError::NoLibdevice { .. }),
            "{major}: {refused}"
        );
    });
}
