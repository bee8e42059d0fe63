//! `Build` on kernel files written for nvcc, with the pinned NVRTC and
//! nvJitLink: nvcc's habits (`-U`, raw options, implicit math constants,
//! the standard headers), and warnings as cc prints them.

// Tests read their own switches; the ban is for the library's reads.
#![allow(clippy::disallowed_methods)]

use std::path::Path;
use std::process::Command;

use cuda_build::{Build, BuildError};

fn have_libraries() -> bool {
    cuda_link_tests::redist("CUDA_LINK_NVRTC_PATH").is_some()
        && cuda_link_tests::redist("CUDA_LINK_NVJITLINK_PATH").is_some()
}

/// A build of `files` (name, text) written into `dir`, for sm_80 and
/// sm_90, printing no cargo directives.
fn build_of(dir: &Path, files: &[(&str, &str)]) -> Build {
    let mut build = Build::new();
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
        build.file(dir.join(name));
    }
    build
        .archs(["sm_80", "sm_90"])
        .out_dir(dir.join("out"))
        .cache_dir(dir.join("cache"))
        .cargo_metadata(false);
    build
}

/// `undefine` comes after every `define`, as nvcc's `-U`; `flag` passes an
/// NVRTC option as it is written (`-default-device` makes a helper
/// without `__device__` device code) and takes nvcc's spellings
/// (`--expt-relaxed-constexpr` does the same; nvcc's host-side options
/// change nothing); an option neither knows fails the build naming it.
#[test]
fn undefine_raw_and_nvcc_flags_reach_nvrtc() {
    if !have_libraries() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("relaxed.cu");
    std::fs::write(
        &file,
        "#ifdef NO_HALF_OPERATORS\n#error undefined too late\n#endif\n\
         constexpr float twice(float x) { return 2 * x; }\n\
         extern \"C\" __global__ void relaxed(float *y) { y[0] = twice(y[0]); }\n",
    )
    .unwrap();
    let build = |dir: &Path| {
        Build::new()
            .file(&file)
            .archs(["sm_90"])
            .define("NO_HALF_OPERATORS", None)
            .undefine("NO_HALF_OPERATORS")
            .out_dir(dir.join("out"))
            .cache_dir(dir.join("cache"))
            .cargo_metadata(false)
            .clone()
    };
    let plain = build(dir.path()).compile("relaxed");
    assert!(
        matches!(plain, Err(BuildError::HostCode { line: 4, .. })),
        "NVRTC refuses a helper without `__device__` by default: {plain:?}"
    );
    let built = build(dir.path())
        .flag("-default-device")
        .compile("relaxed")
        .unwrap();
    assert_eq!(built.kernels, ["relaxed"]);
    let built = build(dir.path())
        .flag("--expt-relaxed-constexpr")
        .flag("-O3")
        .flag("-Xcompiler")
        .flag("-fPIC")
        .flag("--default-stream")
        .flag("per-thread")
        .compile("relaxed")
        .unwrap();
    assert_eq!(built.kernels, ["relaxed"]);
    let error = build(dir.path())
        .flag("--no-such-option")
        .compile("relaxed")
        .unwrap_err();
    match &error {
        BuildError::Compile { error, .. } => assert!(
            matches!(&**error, cuda_compile::CompileError::UnknownOption { option, .. }
                if option == "--no-such-option"),
            "{error:?}"
        ),
        other => panic!("{other:?}"),
    }
}

/// The file shapes real kernels have that NVRTC used to refuse: `FLT_MAX`,
/// `assert`, `INFINITY` without an include and `<algorithm>`; `<cstdint>`
/// next to a CUB header; a constexpr helper without `__device__`. Each
/// builds, for both arches.
#[test]
fn files_written_for_nvcc_build_unmodified() {
    if !have_libraries() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let files = [
        (
            "limits.cu",
            "#include <float.h>\n#include <cassert>\n#include <algorithm>\n\
             extern \"C\" __global__ void clamp_inf(float *y, int n) {\n\
               assert(n > 0);\n\
               float best = -FLT_MAX;\n\
               for (int i = 0; i < n; ++i) best = std::max(best, y[i]);\n\
               y[0] = best < INFINITY ? best : 0.0f;\n}\n",
        ),
        (
            "reduce.cu",
            "#include <cstdint>\n#include <cub/block/block_reduce.cuh>\n\
             extern \"C\" __global__ void block_sum(const float *x, float *out, int64_t n) {\n\
               using Reduce = cub::BlockReduce<float, 128>;\n\
               __shared__ typename Reduce::TempStorage storage;\n\
               float v = threadIdx.x < n ? x[threadIdx.x] : 0.0f;\n\
               float total = Reduce(storage).Sum(v);\n\
               if (threadIdx.x == 0) *out = total;\n}\n",
        ),
    ];
    let built = build_of(dir.path(), &files).compile("nvcc_shaped").unwrap();
    let mut kernels = built.kernels.clone();
    kernels.sort();
    assert_eq!(kernels, ["block_sum", "clamp_inf"]);
}

/// Warnings as cc prints them: the source's own, once per file whatever
/// the number of arches; none of CCCL's; none at all with
/// `warnings(false)`. Checked on what a child process prints.
#[test]
fn warnings_are_the_sources_own_once() {
    if !have_libraries() {
        return;
    }
    let printed = |quiet: &str| {
        let run = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "warnings_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("CUDA_BUILD_WARNINGS_CHILD", quiet)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&run.stdout).into_owned();
        assert!(run.status.success() && text.contains("1 passed"), "{text}");
        text.lines()
            .filter(|line| line.starts_with("cargo:warning="))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let shown = printed("loud");
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(
        shown[0].contains("unused") && shown[0].contains("noisy.cu"),
        "{shown:?}"
    );
    assert_eq!(printed("quiet"), Vec::<String>::new());
}

#[test]
fn warnings_child() {
    let Ok(mode) = std::env::var("CUDA_BUILD_WARNINGS_CHILD") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let files = [(
        "noisy.cu",
        "#include <cstdint>\n#include <cub/block/block_reduce.cuh>\n\
         extern \"C\" __global__ void noisy(int64_t *y) { int unused; y[0] = INT8_MIN; }\n",
    )];
    build_of(dir.path(), &files)
        .cargo_metadata(true)
        .warnings(mode != "quiet")
        .compile("noisy")
        .unwrap();
}

/// A launcher in a header the kernel file includes: the verdict names the
/// header and the launcher's line in it, not a line of the `.cu`.
#[test]
fn host_code_in_a_header_is_named_there() {
    if !have_libraries() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("launch.cuh"),
        "#pragma once\n__global__ void fill(float *y) { y[0] = 1; }\n\
         void run(float *y) {\n  fill<<<1, 1>>>(y);\n}\n",
    )
    .unwrap();
    let files = [(
        "kernels.cu",
        "#include \"launch.cuh\"\n__global__ void other(float *y) { y[0] = 2; }\n",
    )];
    // nvcc would take it (tests/host_code.rs): NVRTC is made to.
    let mut build = build_of(dir.path(), &files);
    build.route(dir.path().join("kernels.cu"), cuda_build::Route::Nvrtc);
    match build.compile("launcher") {
        Err(BuildError::HostCode {
            file,
            line,
            construct,
            ..
        }) => {
            assert!(file.ends_with("launch.cuh"), "{}", file.display());
            // The launcher's definition, not the launch inside it.
            assert_eq!(line, 3);
            assert_eq!(
                construct,
                "a host function (`void run(float *y)`) with a `<<<...>>>` kernel launch"
            );
        }
        other => panic!("{other:?}"),
    }
}

/// A file of kernels including `<cub/cub.cuh>`: CCCL 12 under NVRTC
/// fails on its host functions, CCCL 13 refuses NVRTC.
const WHOLE_CUB: &str = "#include <cub/cub.cuh>\nextern \"C\" __global__ void k(float *y) {\n\
     typedef cub::BlockReduce<float, 128> R; __shared__ typename R::TempStorage t;\n\
     float s = R(t).Sum(y[threadIdx.x]); if (threadIdx.x == 0) y[0] = s; }\n";

/// `#include <cub/cub.cuh>` (CUB's host-side dispatch, which no NVRTC
/// compiles) sends its file to nvcc, where nvcc is found: the kernels are
/// built all the same.
#[test]
fn the_whole_cub_header_goes_to_nvcc() {
    if !have_libraries() || cuda_link_tests::redist("CUDA_LINK_NVCC").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let built = build_of(dir.path(), &[("reduce.cu", WHOLE_CUB)])
        .compile("reduce")
        .unwrap_or_else(|e| panic!("{e}: {e:?}"));
    // And CUB's own `EmptyKernel`, as nvcc builds it for any file that
    // includes all of CUB.
    assert!(
        built.kernels.iter().any(|k| k == "k"),
        "{:?}",
        built.kernels
    );
}

/// Without nvcc, the same file is an error that says what to include
/// instead and how to install nvcc, not CCCL's log alone. Checked in a
/// child process that finds no nvcc.
#[test]
fn the_whole_cub_header_says_what_to_include() {
    const CHILD: &str = "CUDA_BUILD_NO_NVCC_CHILD";
    if !have_libraries() {
        return;
    }
    if std::env::var_os(CHILD).is_none() {
        let run = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "the_whole_cub_header_says_what_to_include"])
            .args(["--test-threads=1"])
            .env(CHILD, "1")
            .env("PATH", "/usr/bin:/bin")
            .env_remove("NVCC")
            .env_remove("CUDA_LINK_NVCC")
            .env_remove("CUDA_HOME")
            .env_remove("CUDA_PATH")
            .env_remove("CUDA_LINK_SITE_PACKAGES")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&run.stdout);
        let errors = String::from_utf8_lossy(&run.stderr);
        assert!(
            run.status.success() && text.contains("1 passed"),
            "{text}{errors}"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let error = build_of(dir.path(), &[("reduce.cu", WHOLE_CUB)])
        .compile("reduce")
        .unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, BuildError::WholeCub { .. }), "{error:?}");
    assert!(text.contains("cub/block/block_reduce.cuh"), "{text}");
    assert!(text.contains("pip install nvidia-cuda-nvcc"), "{text}");
}
