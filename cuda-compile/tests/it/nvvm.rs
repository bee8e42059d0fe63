//! NVVM programs: numba-cuda's IR compiled by both libNVVM majors at
//! compute_90 and compute_100 to PTX, LTO-IR and cubins, through the
//! caches, with libdevice found, and every hostile input a typed error.

use std::sync::Arc;

use cuda_compile::{CompileError, Libdevice, NvvmCompiler, NvvmOptions, NvvmProgram, Target};
use cuda_link::inspect::Contents;
use cuda_link::nvvm::{Nvvm, NvvmFailure};
use cuda_link::{Arch, Isolation, LinkCache, ObjectKind};
use cuda_link_tests::{NUMBA_KERNELS, numba_bitcode, numba_kernel, nvvm_libraries, serial};

fn program(kernel: &str) -> NvvmProgram {
    let (modules, _) = numba_kernel(kernel);
    modules
        .into_iter()
        .fold(NvvmProgram::new(kernel), |program, (name, bytes)| {
            program.module(bytes, name).unwrap()
        })
}

fn compilers() -> Vec<(u32, NvvmCompiler)> {
    nvvm_libraries()
        .into_iter()
        .map(|(major, path)| {
            // SAFETY: the pinned libNVVM wheel that `cargo xtask test` installed.
            let lib = unsafe { Nvvm::open(&path) }.unwrap_or_else(|e| panic!("{e}"));
            (major, NvvmCompiler::with_nvvm(Arc::new(lib)))
        })
        .collect()
}

#[test]
fn numba_kernels_to_ptx_and_ltoir_with_both_majors() {
    let _serial = serial();
    for (major, compiler) in compilers() {
        for sm in [90, 100] {
            let options = NvvmOptions::for_arch(Arch::sm(sm)).opt_level(3);
            for kernel in NUMBA_KERNELS {
                let program = program(kernel);
                let ptx = compiler
                    .compile(&program, Target::Ptx, &options)
                    .unwrap_or_else(|e| panic!("NVVM {major}, sm_{sm}, {kernel}: {e:?}"));
                let info = ptx.code.inspect().unwrap();
                assert_eq!(info.kernels().len(), 1, "NVVM {major}, sm_{sm}: {info}");
                assert!(info.kernels()[0].contains(kernel));
                let ltoir = compiler
                    .compile(&program, Target::Ltoir, &options)
                    .unwrap_or_else(|e| panic!("NVVM {major}, sm_{sm}, {kernel}: {e:?}"));
                assert_eq!(ltoir.code.kind(), ObjectKind::Ltoir);
                let Contents::Ltoir(header) = ltoir.code.inspect().unwrap().contents else {
                    panic!("{kernel}: not LTO-IR")
                };
                assert_eq!(header.arch, Arch::sm(sm), "NVVM {major}, {kernel}");
            }
        }
    }
}

/// Bitcode, as cuda.core's `code_type="nvvm"` takes it: numba's records
/// module through `llvm-as`, to the same kernel as its text, both majors,
/// compute_90 and compute_100.
#[test]
fn bitcode_compiles_as_its_text_does() {
    let _serial = serial();
    for (major, compiler) in compilers() {
        for sm in [90, 100] {
            let options = NvvmOptions::for_arch(Arch::sm(sm));
            let program = NvvmProgram::new("records.bc")
                .module(numba_bitcode(), "records.bc")
                .unwrap();
            let ptx = compiler
                .compile(&program, Target::Ptx, &options)
                .unwrap_or_else(|e| panic!("NVVM {major}, sm_{sm}: {e:?}"));
            let from_text = compiler
                .compile(&self::program("records"), Target::Ptx, &options)
                .unwrap();
            assert_eq!(
                ptx.code.inspect().unwrap().kernels(),
                from_text.code.inspect().unwrap().kernels(),
                "NVVM {major}, sm_{sm}"
            );
        }
    }
}

/// A relocatable program's cubin would need the later link it is made
/// for: refused by name; its LTO-IR is made.
#[test]
fn a_relocatable_program_makes_no_cubin() {
    let _serial = serial();
    for (major, compiler) in compilers() {
        let options = NvvmOptions::for_arch(Arch::sm(90));
        let program = NvvmProgram::new("m0.ll")
            .module(numba_kernel("device_functions").0[0].1.clone(), "m0.ll")
            .unwrap()
            .relocatable(true);
        let refused = compiler.compile(&program, Target::Cubin, &options);
        assert!(
            matches!(
                refused,
                Err(CompileError::InvalidOption {
                    option: "relocatable",
                    ..
                })
            ),
            "NVVM {major}: {refused:?}"
        );
        let ltoir = compiler.compile(&program, Target::Ltoir, &options).unwrap();
        assert_eq!(ltoir.code.kind(), ObjectKind::Ltoir);
    }
}

#[test]
fn a_cubin_through_nvjitlink_and_a_repeat_from_the_caches() {
    let _serial = serial();
    let folder = tempfile::tempdir().unwrap();
    for (major, compiler) in compilers() {
        let cache = Arc::new(LinkCache::new(folder.path().join(major.to_string())));
        let compiler = compiler.with_cache(Arc::clone(&cache));
        let options = NvvmOptions::for_arch(Arch::sm(90));
        let program = program("device_functions");
        let first = compiler.compile(&program, Target::Cubin, &options).unwrap();
        assert!(!first.from_cache);
        let info = first.code.inspect().unwrap();
        assert_eq!(info.arches(), [Arch::sm(90)]);
        assert!(info.kernels()[0].contains("device_functions"), "{info}");
        let again = compiler.compile(&program, Target::Cubin, &options).unwrap();
        assert!(again.from_cache, "NVVM {major}: the repeat misses");
        assert_eq!(again.code.as_bytes(), first.code.as_bytes());
        // Another option or another module misses.
        let fast = compiler
            .compile(&program, Target::Cubin, &options.clone().fast_math())
            .unwrap();
        assert!(!fast.from_cache);
        let other = compiler
            .compile(&self::program("records"), Target::Cubin, &options)
            .unwrap();
        assert!(!other.from_cache);
        assert_eq!(cache.stats().stores, 3, "NVVM {major}");
    }
}

#[test]
fn libdevice_is_found_when_the_ir_calls_it_and_only_then() {
    let _serial = serial();
    for (major, compiler) in compilers() {
        let options = NvvmOptions::for_arch(Arch::sm(90)).isolation(Isolation::InProcess);
        let math = program("math_libdevice");
        let never = compiler.compile(
            &math.clone().libdevice(Libdevice::Never),
            Target::Ptx,
            &options,
        );
        assert!(
            matches!(&never, Err(CompileError::Nvvm { failure, .. })
                if matches!(&**failure, NvvmFailure::Unresolved { functions, .. }
                    if functions.iter().any(|f| f == "__nv_sin"))),
            "NVVM {major}: {never:?}"
        );
        let later = math.clone().libdevice(Libdevice::Never).resolved_later([
            "__nv_sin",
            "__nv_exp",
            "__nv_sqrt",
            "__nv_pow",
            "__nv_fabs",
        ]);
        let ptx = compiler.compile(&later, Target::Ptx, &options).unwrap();
        assert!(String::from_utf8_lossy(ptx.code.as_bytes()).contains(".extern .func"));
        let missing = math.libdevice(Libdevice::Path("/nowhere/libdevice.10.bc".into()));
        assert!(matches!(
            compiler.compile(&missing, Target::Ptx, &options),
            Err(CompileError::Io { .. })
        ));
    }
}

#[test]
fn options_reach_libnvvm_and_bad_ones_are_refused() {
    let _serial = serial();
    let Some((_, compiler)) = compilers().into_iter().last() else {
        return;
    };
    let program = program("local_array");
    let base = NvvmOptions::for_arch(Arch::sm(90));
    let ptx = |options: &NvvmOptions| {
        let compiled = compiler.compile(&program, Target::Ptx, options).unwrap();
        String::from_utf8_lossy(compiled.code.as_bytes()).into_owned()
    };
    let plain = ptx(&base);
    let fast = ptx(&base.clone().fast_math());
    assert!(
        !plain.contains("div.approx") && fast.contains(".ftz"),
        "{fast}"
    );
    // numba's IR carries no debug metadata: line info adds nothing to
    // it, but libNVVM takes the option.
    ptx(&base.clone().line_info(true));
    assert_ne!(ptx(&base.clone().opt_level(0)), plain);
    assert!(matches!(
        compiler.compile(&program, Target::Ptx, &base.clone().opt_level(4)),
        Err(CompileError::InvalidOption {
            option: "opt_level",
            ..
        })
    ));
    assert!(matches!(
        compiler.compile(&NvvmProgram::new("empty"), Target::Ptx, &base),
        Err(CompileError::InvalidOption {
            option: "modules",
            ..
        })
    ));
}

#[test]
fn hostile_programs_are_typed_errors() {
    let _serial = serial();
    let good = String::from_utf8(numba_kernel("records").0[0].1.clone()).unwrap();
    let cases = [
        (
            "syntax.ll",
            good.replacen("define void", "define vid", 1).into_bytes(),
        ),
        (
            "triple.ll",
            good.replace("nvptx64-nvidia-cuda", "x86_64-unknown-linux-gnu")
                .into_bytes(),
        ),
        (
            "version.ll",
            good.replace("!nvvmir.version = !{ !0 }", "").into_bytes(),
        ),
        ("truncated.bc", b"BC\xC0\xDE\x35\x14\x00\x00".to_vec()),
    ];
    for (major, compiler) in compilers() {
        for (name, bytes) in &cases {
            let program = NvvmProgram::new(*name)
                .module(bytes.clone(), *name)
                .unwrap();
            for sm in [90, 100] {
                let failed =
                    compiler.compile(&program, Target::Ptx, &NvvmOptions::for_arch(Arch::sm(sm)));
                assert!(
                    matches!(&failed, Err(CompileError::Nvvm { failure, .. })
                        if matches!(**failure, NvvmFailure::Verify { .. } | NvvmFailure::Call { .. })),
                    "NVVM {major}, {name}, sm_{sm}: {failed:?}"
                );
            }
        }
    }
    // Not NVVM IR at all.
    assert!(
        NvvmProgram::new("x")
            .module(&b"\x7fELF"[..], "x.o")
            .is_err()
    );
}

#[test]
fn relocatable_programs_leave_calls_for_a_later_link() {
    let _serial = serial();
    let Some((_, compiler)) = compilers().into_iter().last() else {
        return;
    };
    let options = NvvmOptions::for_arch(Arch::sm(90)).isolation(Isolation::InProcess);
    let math = program("math_libdevice").libdevice(Libdevice::Never);
    assert!(compiler.compile(&math, Target::Ptx, &options).is_err());
    let relocatable = math.relocatable(true);
    let ptx = compiler
        .compile(&relocatable, Target::Ptx, &options)
        .unwrap();
    assert!(String::from_utf8_lossy(ptx.code.as_bytes()).contains(".extern .func"));
    // A module that is not NVVM IR is said to be so.
    assert!(matches!(
        NvvmProgram::new("p").module(&b""[..], "empty.ll"),
        Err(CompileError::NotNvvmIr { .. })
    ));
}

/// NVVM IR of a kernel that keeps 64 floats live across a barrier: more
/// registers than 32 unless the assembler spills.
fn register_heavy_ir() -> String {
    let mut ir = String::from(
        "target triple = \"nvptx64-nvidia-cuda\"\n\
         target datalayout = \"e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-\
         i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64\"\n\
         declare void @llvm.nvvm.barrier0()\n\
         define void @heavy(float* %p) {\nentry:\n",
    );
    for i in 0..64 {
        ir += &format!(
            "  %a{i} = getelementptr float, float* %p, i64 {i}\n  \
             %v{i} = load volatile float, float* %a{i}\n"
        );
    }
    ir += "  call void @llvm.nvvm.barrier0()\n";
    for i in 0..64 {
        let (other, at) = (63 - i, 64 + i);
        ir += &format!(
            "  %m{i} = fmul float %v{i}, %v{other}\n  \
             %b{i} = getelementptr float, float* %p, i64 {at}\n  \
             store volatile float %m{i}, float* %b{i}\n"
        );
    }
    ir + "  ret void\n}\n!nvvmir.version = !{!0}\n!nvvm.annotations = !{!1}\n\
          !0 = !{i32 2, i32 0, i32 3, i32 2}\n!1 = !{void (float*)* @heavy, !\"kernel\", i32 1}\n"
}

/// `max_register_count` caps the cubin nvJitLink assembles, and is in
/// its key; PTX and LTO-IR, which carry no limit, refuse it.
#[test]
fn a_register_limit_caps_the_cubin_and_is_refused_elsewhere() {
    let _serial = serial();
    for (major, compiler) in compilers() {
        let folder = tempfile::tempdir().unwrap();
        let compiler = compiler.with_cache(Arc::new(LinkCache::new(folder.path())));
        let program = NvvmProgram::new("heavy.ll")
            .module(register_heavy_ir().into_bytes(), "heavy.ll")
            .unwrap();
        let base = NvvmOptions::for_arch(Arch::sm(90));
        let registers = |options: &NvvmOptions| {
            let compiled = compiler
                .compile(&program, Target::Cubin, options)
                .unwrap_or_else(|e| panic!("NVVM {major}: {e}"));
            let Contents::Cubin(cubin) = compiled.code.inspect().unwrap().contents else {
                panic!("NVVM {major}: not a cubin")
            };
            cubin.registers["heavy"]
        };
        let free = registers(&base);
        let capped = registers(&base.clone().max_register_count(32));
        assert!(
            capped <= 32 && capped < free,
            "NVVM {major}: capped {capped}, free {free}"
        );
        for target in [Target::Ptx, Target::Ltoir] {
            let refused = compiler.compile(&program, target, &base.clone().max_register_count(32));
            assert!(
                matches!(
                    &refused,
                    Err(CompileError::InvalidOption {
                        option: "max_register_count",
                        ..
                    })
                ),
                "NVVM {major}, {target:?}: {:?}",
                refused.map(|c| c.code.kind())
            );
        }
    }
}
