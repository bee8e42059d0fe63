//! `cuda-link compile`, `link` and `inspect` of NVVM IR as numba-cuda
//! writes it, with the provisioned libNVVM and nvJitLink of CUDA 13.

use std::path::Path;
use std::process::{Command, Output};

use cuda_link::ObjectCode;
use cuda_link::inspect::Contents;

/// `cuda-link` in `dir`, with libNVVM 13 (the nvJitLink the environment
/// names is 13's: it reads 13's LTO-IR).
fn run_in(dir: &Path, args: &[&str]) -> Option<Output> {
    let nvvm = cuda_link_tests::redist("CUDA_LINK_NVVM13_PATH")?;
    Some(
        Command::new(env!("CARGO_BIN_EXE_cuda-link"))
            .current_dir(dir)
            .env("CUDA_LINK_NVVM_PATH", nvvm)
            .args(args)
            .output()
            .unwrap(),
    )
}

fn succeeded(output: &Output) {
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A folder with numba's `math.ll` (it calls libdevice) and `records.ll`.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (kernel, file) in [("math_libdevice", "math.ll"), ("records", "records.ll")] {
        let (modules, _) = cuda_link_tests::numba_kernel(kernel);
        std::fs::write(dir.path().join(file), &modules[0].1).unwrap();
    }
    dir
}

fn read(dir: &Path, file: &str) -> ObjectCode {
    ObjectCode::from_path(dir.join(file)).unwrap()
}

#[test]
fn compile_ir_to_each_kind_and_a_fatbin() {
    let dir = project();
    let Some(output) = run_in(dir.path(), &["compile", "math.ll", "-arch=sm_90", "--ptx"]) else {
        return;
    };
    succeeded(&output);
    let ptx = read(dir.path(), "math.ptx").inspect().unwrap();
    assert!(ptx.kernels()[0].contains("math_libdevice"), "{ptx}");
    let cubins = run_in(
        dir.path(),
        &[
            "compile",
            "math.ll",
            "-arch=sm_90,sm_100",
            "-use_fast_math",
            "-O3",
        ],
    );
    succeeded(&cubins.unwrap());
    for (file, sm) in [("math.sm_90.cubin", 90), ("math.sm_100.cubin", 100)] {
        let info = read(dir.path(), file).inspect().unwrap();
        assert_eq!(info.arches(), [cuda_link::Arch::sm(sm)], "{info}");
    }
    succeeded(
        &run_in(
            dir.path(),
            &["compile", "records.ll", "-arch=sm_90", "--ltoir"],
        )
        .unwrap(),
    );
    assert!(matches!(
        read(dir.path(), "records.ltoir")
            .inspect()
            .unwrap()
            .contents,
        Contents::Ltoir(_)
    ));
    succeeded(
        &run_in(
            dir.path(),
            &[
                "compile",
                "records.ll",
                "-arch=sm_90,compute_90",
                "--fatbin",
            ],
        )
        .unwrap(),
    );
    let fatbin = read(dir.path(), "records.fatbin").inspect().unwrap();
    assert_eq!(fatbin.fatbin_entries().count(), 2, "{fatbin}");
}

#[test]
fn link_and_inspect_ir() {
    let dir = project();
    let Some(output) = run_in(
        dir.path(),
        &[
            "link",
            "math.ll",
            "records.ll",
            "-arch=sm_90",
            "-o",
            "both.cubin",
        ],
    ) else {
        return;
    };
    succeeded(&output);
    let info = read(dir.path(), "both.cubin").inspect().unwrap();
    assert_eq!(info.kernels().len(), 2, "{info}");
    let inspected = run_in(dir.path(), &["inspect", "math.ll"]).unwrap();
    succeeded(&inspected);
    let text = String::from_utf8_lossy(&inspected.stdout);
    assert!(
        text.contains("nvvm-ir")
            && text.contains("nvvmir.version 2.0")
            && text.contains("math_libdevice"),
        "{text}"
    );
}

#[test]
fn bad_ir_names_the_file_and_the_log() {
    let dir = project();
    std::fs::write(
        dir.path().join("bad.ll"),
        "target triple = \"nvptx64-nvidia-cuda\"\ndefine vid @k() {\n}\n",
    )
    .unwrap();
    let Some(output) = run_in(dir.path(), &["compile", "bad.ll", "-arch=sm_90"]) else {
        return;
    };
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("bad.ll") && stderr.contains("libNVVM log"),
        "{stderr}"
    );
}

/// CUDA C++'s flags on NVVM IR alone are refused, not dropped silently
/// (beside a `.cu` input they are its, and said to be ignored for the
/// IR); the same for `link`, which has nothing to compile; `link -O2`,
/// which nvJitLink refuses once loaded, is refused first.
/// `--maxrregcount` reaches a cubin, and for PTX, which carries no limit,
/// is a usage error before anything is written.
#[test]
fn cxx_flags_are_refused_and_a_register_limit_needs_a_cubin() {
    let dir = project();
    let cxx = ["-I", "include", "-DWIDTH=4", "-std=c++17"];
    let Some(output) = run_in(
        dir.path(),
        &[&["compile", "records.ll", "-arch=sm_90"][..], &cxx].concat(),
    ) else {
        return;
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("records.ll: -I, -D, -std apply to CUDA C++, and NVVM IR takes none"),
        "{stderr}"
    );
    std::fs::write(dir.path().join("k.cu"), "__global__ void k() {}\n").unwrap();
    let mixed = run_in(
        dir.path(),
        &[&["compile", "records.ll", "k.cu", "-arch=sm_90"][..], &cxx].concat(),
    )
    .unwrap();
    succeeded(&mixed);
    let stderr = String::from_utf8_lossy(&mixed.stderr);
    assert!(
        stderr.contains("note: records.ll: -I, -D, -std apply to CUDA C++ and are ignored"),
        "{stderr}"
    );
    for args in [
        &[
            &["link", "records.ll", "-arch=sm_90", "-o", "l.cubin"][..],
            &cxx,
        ]
        .concat(),
        &["link", "records.ll", "-arch=sm_90", "-O2", "-o", "l.cubin"][..].to_vec(),
    ] {
        let refused = run_in(dir.path(), args).unwrap();
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(2), "{args:?}: {stderr}");
    }
    let output = run_in(
        dir.path(),
        &[
            "compile",
            "records.ll",
            "-arch=sm_90",
            "--maxrregcount",
            "32",
        ],
    )
    .unwrap();
    succeeded(&output);
    assert!(
        read(dir.path(), "records.cubin")
            .inspect()
            .unwrap()
            .kernels()[0]
            .contains("records")
    );
    for arch in ["-arch=compute_90", "-arch=lto_90"] {
        let output = run_in(
            dir.path(),
            &["compile", "records.ll", arch, "--maxrregcount", "32"],
        )
        .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{arch}: {stderr}");
        assert!(stderr.contains("--maxrregcount 32"), "{arch}: {stderr}");
    }
    assert!(!dir.path().join("records.ptx").exists());
    assert!(!dir.path().join("records.ltoir").exists());
    // With a cubin among the slots it applies to the cubin, as nvcc's.
    let both = run_in(
        dir.path(),
        &[
            "compile",
            "records.ll",
            "-gencode",
            "arch=compute_90,code=[sm_90,compute_90]",
            "--maxrregcount",
            "32",
        ],
    )
    .unwrap();
    succeeded(&both);
    assert!(dir.path().join("records.sm_90.cubin").exists());
    assert!(dir.path().join("records.compute_90.ptx").exists());
}

/// No libNVVM is exit 3 for `compile` and `link` alike, as a missing
/// nvJitLink or NVRTC is.
#[test]
fn no_libnvvm_is_exit_3() {
    let dir = project();
    for args in [
        &["compile", "records.ll", "-arch=sm_90", "--ptx"][..],
        &["link", "records.ll", "-arch=sm_90", "-o", "records.cubin"][..],
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_cuda-link"))
            .current_dir(dir.path())
            .env("CUDA_LINK_NVVM_PATH", "/nowhere/libnvvm.so")
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(3), "{args:?}: {stderr}");
        assert!(stderr.contains("/nowhere/libnvvm.so"), "{args:?}: {stderr}");
    }
}

/// What a user of numba's IR reaches for: `-G` for numba's debug build
/// (optimisation off), PTX of several modules through `link --ptx`,
/// relocatable LTO-IR that calls a function defined elsewhere, outputs
/// with the usual permissions, and C++ saved as `.ll` taken as C++.
#[test]
fn debug_relocatable_linked_ptx_and_permissions() {
    let dir = project();
    let Some(plain) = run_in(
        dir.path(),
        &[
            "compile",
            "math.ll",
            "-arch=sm_90",
            "--ptx",
            "-o",
            "plain.ptx",
        ],
    ) else {
        return;
    };
    succeeded(&plain);
    succeeded(
        &run_in(
            dir.path(),
            &[
                "compile",
                "math.ll",
                "-arch=sm_90",
                "--ptx",
                "-G",
                "-o",
                "debug.ptx",
            ],
        )
        .unwrap(),
    );
    succeeded(
        &run_in(
            dir.path(),
            &[
                "compile",
                "math.ll",
                "-arch=sm_90",
                "--ptx",
                "-O0",
                "-o",
                "o0.ptx",
            ],
        )
        .unwrap(),
    );
    let bytes = |file: &str| std::fs::read(dir.path().join(file)).unwrap();
    // `-g` alone adds little to numba's IR, which has no debug metadata;
    // unoptimised, the PTX is half as long again (26 against 40 KB).
    let (plain, debug, o0) = (
        bytes("plain.ptx").len(),
        bytes("debug.ptx").len(),
        bytes("o0.ptx").len(),
    );
    assert!(
        debug > (plain + o0) / 2,
        "-G turns optimisation off: {debug} bytes, -O3 {plain}, -O0 {o0}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(dir.path().join("plain.ptx"))
            .unwrap()
            .permissions()
            .mode();
        assert_ne!(
            mode & 0o044,
            0,
            "an output is readable by others, as nvcc's: {mode:o}"
        );
    }
    // numba's four modules of one kernel, linked to one PTX.
    for (index, module) in cuda_link_tests::numba_kernel("device_functions")
        .0
        .iter()
        .enumerate()
    {
        std::fs::write(dir.path().join(format!("m{index}.ll")), &module.1).unwrap();
    }
    let linked = [
        "link",
        "m0.ll",
        "m1.ll",
        "m2.ll",
        "m3.ll",
        "-arch=sm_90",
        "--ptx",
        "-o",
        "df.ptx",
    ];
    succeeded(&run_in(dir.path(), &linked).unwrap());
    assert!(
        read(dir.path(), "df.ptx").inspect().unwrap().kernels()[0].contains("device_functions")
    );
    // A call to a function another input will define: refused, unless
    // relocatable.
    let calls = "target triple = \"nvptx64-nvidia-cuda\"\n\
                 target datalayout = \"e-i64:64-i128:128-v16:16-v32:32-n16:32:64\"\n\
                 declare float @ext_scale(float)\n\
                 define void @k(float* %p) {\n  %v = load float, float* %p\n  \
                 %s = call float @ext_scale(float %v)\n  store float %s, float* %p\n  ret void\n}\n\
                 !nvvm.annotations = !{!0}\n!0 = !{void (float*)* @k, !\"kernel\", i32 1}\n\
                 !nvvmir.version = !{!1}\n!1 = !{i32 2, i32 0}\n";
    std::fs::write(dir.path().join("calls.ll"), calls).unwrap();
    let refused = run_in(
        dir.path(),
        &["compile", "calls.ll", "-arch=sm_90", "--ltoir"],
    )
    .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("ext_scale"));
    succeeded(
        &run_in(
            dir.path(),
            &["compile", "calls.ll", "-arch=sm_90", "--ltoir", "-dc"],
        )
        .unwrap(),
    );
    // C++ saved as `.ll` is compiled as C++, by NVRTC, when there is one.
    std::fs::write(
        dir.path().join("cpp.ll"),
        "__global__ void k(float *x) { x[0] = 1; }\n",
    )
    .unwrap();
    if cuda_link_tests::redist("CUDA_LINK_NVRTC_PATH").is_some() {
        let cpp = ["compile", "cpp.ll", "-arch=sm_90", "--ptx", "-o", "cpp.ptx"];
        succeeded(&run_in(dir.path(), &cpp).unwrap());
        assert_eq!(
            read(dir.path(), "cpp.ptx").inspect().unwrap().kernels(),
            ["_Z1kPf"]
        );
    }
}

/// No kernel an NVVM IR input defines is lost: hand-written IR,
/// cuda.core-style IR and numba's, each with and without `@llvm.used`,
/// linked to a cubin, to PTX and into a multi-arch fatbin, and compiled to
/// LTO-IR then linked, keep every annotated kernel.
#[test]
fn every_annotated_kernel_survives_link_and_compile() {
    let dir = tempfile::tempdir().unwrap();
    for (case, text, kernels) in cuda_link_tests::nvvm_ir_cases() {
        std::fs::write(dir.path().join("k.ll"), &text).unwrap();
        let runs: [(&[&str], &str); 4] = [
            (&["link", "k.ll", "-arch=sm_90", "-o", "k.cubin"], "k.cubin"),
            (
                &["link", "k.ll", "-arch=sm_90", "--ptx", "-o", "k.ptx"],
                "k.ptx",
            ),
            (
                &[
                    "link",
                    "k.ll",
                    "-arch=sm_80,sm_90,compute_90",
                    "-o",
                    "k.fatbin",
                ],
                "k.fatbin",
            ),
            (
                &["compile", "k.ll", "-arch=sm_90", "--ltoir", "-o", "k.ltoir"],
                "k.ltoir",
            ),
        ];
        for (args, file) in runs {
            let Some(output) = run_in(dir.path(), args) else {
                return;
            };
            succeeded(&output);
            let code = match file {
                // LTO-IR names nothing: linked, the cubin does.
                "k.ltoir" => {
                    let linked = run_in(
                        dir.path(),
                        &["link", "k.ltoir", "-arch=sm_90", "-o", "l.cubin"],
                    )
                    .unwrap();
                    succeeded(&linked);
                    read(dir.path(), "l.cubin")
                }
                _ => read(dir.path(), file),
            };
            let info = code.inspect().unwrap();
            let found = info.kernels();
            for kernel in &kernels {
                assert!(
                    found.iter().any(|k| k.contains(kernel)),
                    "{case}, {args:?}: `{kernel}` missing:\n{info}"
                );
            }
        }
    }
}
