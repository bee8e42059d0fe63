//! Host-code files through nvcc (the pip wheels' nvcc 13, on the CPU):
//! the split from device-only files, the archive and its link lines, the
//! cache of nvcc's objects keyed by what nvcc read, and the errors that
//! name every failing file.

// Tests read their own switches; the ban is for the library's reads.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::Command;

use cuda_build::{Build, BuildError, Cudart, Route};

/// A candle-style MoE file: a template kernel instantiated only by its
/// `extern "C"` launcher, which Rust calls over FFI.
const MOE_CU: &str = "#include <cuda_runtime.h>\n#include \"moe.h\"\n\n\
    template <typename T> __global__ void moe_scale(T *x, T a, int n) {\n\
      int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
      if (i < n) x[i] = x[i] * a * MOE_FACTOR;\n}\n\n\
    extern \"C\" int moe_launch(float *x, float a, int n,\n\
                               cudaStream_t stream) {\n\
      moe_scale<float><<<(n + 255) / 256, 256, 0, stream>>>(x, a, n);\n\
      return (int)cudaGetLastError();\n}\n";
const MOE_H: &str = "#pragma once\n#define MOE_FACTOR 2\n";
const AFFINE_CU: &str = "extern \"C\" __global__ void affine(float *y, float a, int n) {\n\
      int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = a * y[i];\n}\n";

/// nvcc (the workspace's wheel) and the libraries, else the test is
/// skipped, as every test of this crate is without them.
fn nvcc() -> Option<PathBuf> {
    cuda_link_tests::redist("CUDA_LINK_NVRTC_PATH")?;
    cuda_link_tests::redist("CUDA_LINK_NVJITLINK_PATH")?;
    cuda_link_tests::redist("CUDA_LINK_NVCC")
}

fn project(dir: &Path) -> Build {
    let kernels = dir.join("kernels");
    std::fs::create_dir_all(&kernels).unwrap();
    std::fs::write(kernels.join("moe.cu"), MOE_CU).unwrap();
    std::fs::write(kernels.join("moe.h"), MOE_H).unwrap();
    std::fs::write(kernels.join("affine.cu"), AFFINE_CU).unwrap();
    for file in ["moe.cu", "moe.h", "affine.cu"] {
        backdate(&kernels.join(file));
    }
    Build::new()
        .files([kernels.join("moe.cu"), kernels.join("affine.cu")])
        .archs(["sm_80"])
        .out_dir(dir.join("out"))
        .cache_dir(dir.join("cache"))
        .cargo_metadata(false)
        .clone()
}

/// Dates `file` a minute back: nvcc's objects are stored only when what
/// it read is older than the compile by 2 s (a coarse timestamp could
/// hide an edit made while it ran), and a test writes its files just
/// before building.
fn backdate(file: &Path) {
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    let file = std::fs::File::options().append(true).open(file).unwrap();
    file.set_modified(past).unwrap();
}

/// The global symbols an archive defines, by `nm`.
fn defined(archive: &Path) -> Vec<String> {
    let out = Command::new("nm")
        .args(["-g", "--defined-only"])
        .arg(archive)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2).map(str::to_owned))
        .collect()
}

/// The host-code file goes to nvcc, into `libkernels.a` with its
/// launcher; the device-only file goes to NVRTC, into the fatbin; the
/// link lines name the archive and the static cudart.
#[test]
fn a_launcher_file_is_compiled_by_nvcc_into_the_archive() {
    let Some(_) = nvcc() else { return };
    let dir = tempfile::tempdir().unwrap();
    let built = project(dir.path()).compile("kernels").unwrap();
    assert_eq!(built.kernels, ["affine"]);
    assert_eq!((built.nvcc_compiled, built.nvcc_cached), (1, 0));
    let archive = built.archive.clone().unwrap();
    assert!(archive.ends_with("libkernels.a"), "{archive:?}");
    let symbols = defined(&archive);
    assert!(symbols.iter().any(|s| s == "moe_launch"), "{symbols:?}");
    assert!(
        built
            .link
            .iter()
            .any(|l| l == "cargo:rustc-link-lib=static=kernels"),
        "{:?}",
        built.link
    );
    assert!(
        built
            .link
            .iter()
            .any(|l| l == "cargo:rustc-link-lib=static=cudart_static"),
        "{:?}",
        built.link
    );
    // The search folder holds the static cudart nvcc links.
    let cudart_dir = built
        .link
        .iter()
        .filter_map(|l| l.strip_prefix("cargo:rustc-link-search=native="))
        .find(|dir| Path::new(dir).join("libcudart_static.a").is_file());
    assert!(cudart_dir.is_some(), "{:?}", built.link);
    // The header nvcc read is watched.
    assert!(
        built.dependencies.iter().any(|d| d.ends_with("moe.h")),
        "{:?}",
        built.dependencies
    );
}

/// The link lines link: a C++ program calling the launcher, linked by the
/// host compiler with exactly the lines cargo gets (static cudart and
/// all), runs and gets the CUDA runtime's answer. This machine has no
/// GPU, so the answer is an error code, not a crash or a missing symbol.
#[test]
fn the_archive_links_with_the_lines_cargo_gets() {
    let Some(_) = nvcc() else { return };
    for cudart in [Cudart::Static, Cudart::Shared] {
        links_and_runs(cudart);
    }
}

fn links_and_runs(cudart: Cudart) {
    let dir = tempfile::tempdir().unwrap();
    let built = project(dir.path())
        .cudart(cudart)
        .compile("kernels")
        .unwrap();
    let main = dir.path().join("main.cpp");
    std::fs::write(
        &main,
        "#include <stdio.h>\nextern \"C\" int moe_launch(float *, float, int, void *);\n\
         int main(void) { printf(\"moe_launch: %d\\n\", moe_launch(0, 2.0f, 0, 0)); return 0; }\n",
    )
    .unwrap();
    let program = dir.path().join("main");
    let mut link = Command::new("c++");
    link.arg(&main).arg("-o").arg(&program);
    for line in &built.link {
        if let Some(dir) = line.strip_prefix("cargo:rustc-link-search=native=") {
            link.arg(format!("-L{dir}"));
        } else if let Some(name) = line.strip_prefix("cargo:rustc-link-lib=static=") {
            link.arg(format!("-l:lib{name}.a"));
        } else if let Some(name) = line.strip_prefix("cargo:rustc-link-lib=dylib=") {
            link.arg(format!("-l{name}"));
        } else if let Some(file) = line.strip_prefix("cargo:rustc-link-lib=dylib:+verbatim=") {
            link.arg(format!("-l:{file}"));
        } else {
            panic!("a line the test does not know: {line}");
        }
    }
    let linked = link.output().unwrap();
    assert!(
        linked.status.success(),
        "{}",
        String::from_utf8_lossy(&linked.stderr)
    );
    // The shared cudart is found where the link found it.
    let search: Vec<&str> = built
        .link
        .iter()
        .filter_map(|l| l.strip_prefix("cargo:rustc-link-search=native="))
        .collect();
    let ran = Command::new(&program)
        .env("LD_LIBRARY_PATH", search.join(":"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&ran.stdout);
    assert!(ran.status.success(), "{ran:?}");
    // cudaSuccess (0) only where a GPU ran it; here the runtime's error.
    assert!(text.starts_with("moe_launch: "), "{text}");
}

/// nvcc's objects come from the cache for a second checkout; an edit of
/// a header nvcc reported reading misses.
#[test]
fn nvcc_objects_are_cached_by_what_nvcc_read() {
    let Some(_) = nvcc() else { return };
    let dir = tempfile::tempdir().unwrap();
    let first = project(dir.path()).compile("kernels").unwrap();
    assert_eq!((first.nvcc_compiled, first.nvcc_cached), (1, 0));
    let again = project(dir.path())
        .out_dir(dir.path().join("out2"))
        .compile("kernels")
        .unwrap();
    assert_eq!((again.nvcc_compiled, again.nvcc_cached), (0, 1));
    assert!(defined(again.archive.as_ref().unwrap()).contains(&"moe_launch".to_owned()));
    // Written a second ago would be "during the build": backdate nothing,
    // just change the header's bytes.
    std::fs::write(
        dir.path().join("kernels/moe.h"),
        "#pragma once\n#define MOE_FACTOR 3\n",
    )
    .unwrap();
    let edited = project_files_only(dir.path())
        .out_dir(dir.path().join("out3"))
        .compile("kernels")
        .unwrap();
    assert_eq!((edited.nvcc_compiled, edited.nvcc_cached), (1, 0));
}

/// [`project`] without rewriting its files.
fn project_files_only(dir: &Path) -> Build {
    let kernels = dir.join("kernels");
    Build::new()
        .files([kernels.join("moe.cu"), kernels.join("affine.cu")])
        .archs(["sm_80"])
        .out_dir(dir.join("out"))
        .cache_dir(dir.join("cache"))
        .cargo_metadata(false)
        .clone()
}

/// `-default-device` (what `--expt-relaxed-constexpr` builds pass) makes
/// NVRTC compile a launcher as device code and drop it; the verdict runs
/// first, so the file still goes to nvcc.
#[test]
fn default_device_does_not_hide_a_launcher() {
    let Some(_) = nvcc() else { return };
    let dir = tempfile::tempdir().unwrap();
    let built = project(dir.path())
        .flag("-default-device")
        .compile("kernels")
        .unwrap();
    assert_eq!(built.nvcc_compiled, 1);
    assert!(defined(built.archive.as_ref().unwrap()).contains(&"moe_launch".to_owned()));
}

/// Routed to NVRTC by hand, the launcher file is a host-code error that
/// names the launcher's definition (line 9), not a line inside it.
#[test]
fn the_verdict_names_the_launchers_definition() {
    let Some(_) = nvcc() else { return };
    let dir = tempfile::tempdir().unwrap();
    let moe = dir.path().join("kernels/moe.cu");
    let result = project(dir.path())
        .route(&moe, Route::Nvrtc)
        .compile("kernels");
    let (file, line, construct) = host_code_verdict(result);
    assert_eq!((file, line), (moe, 9), "{construct}");
    assert!(construct.contains("moe_launch"), "{construct}");
}

/// The file, line and construct of a build's `BuildError::HostCode`.
fn host_code_verdict<T: std::fmt::Debug>(
    result: Result<T, BuildError>,
) -> (PathBuf, usize, String) {
    match result {
        Err(BuildError::HostCode {
            file,
            line,
            construct,
            ..
        }) => (file, line, construct),
        other => panic!("{other:?}"),
    }
}

/// A table of `extern "C"` launchers made by a macro, as quantization
/// kernels write them: nothing in the file's own lines launches, yet it
/// goes to nvcc with every launcher; routed to NVRTC by hand, the verdict
/// names the first expansion and the macro.
#[test]
fn launchers_made_by_a_macro_go_to_nvcc() {
    const TABLE_CU: &str = "#include <cuda_runtime.h>\n\
        template <typename T> __global__ void fill(T *x, T v, int n) {\n\
          int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
          if (i < n) x[i] = v;\n}\n\
        #define DEFINE_FILL(T, name)                                      \\\n\
          extern \"C\" void fill_##name(T *x, T v, int n, cudaStream_t s) { \\\n\
            cudaMemsetAsync(x, 0, n * sizeof(T), s);                       \\\n\
            fill<T><<<(n + 255) / 256, 256, 0, s>>>(x, v, n);              \\\n\
          }\n\
        DEFINE_FILL(float, f32)\n\
        DEFINE_FILL(double, f64)\n";
    let Some(_) = nvcc() else { return };
    let dir = tempfile::tempdir().unwrap();
    let build = project(dir.path());
    let table = dir.path().join("kernels/table.cu");
    std::fs::write(&table, TABLE_CU).unwrap();
    backdate(&table);
    let built = build.clone().file(&table).compile("kernels").unwrap();
    assert_eq!(built.nvcc_compiled, 2);
    let symbols = defined(built.archive.as_ref().unwrap());
    for launcher in ["fill_f32", "fill_f64", "moe_launch"] {
        assert!(
            symbols.iter().any(|s| s == launcher),
            "{launcher}: {symbols:?}"
        );
    }
    let result = build
        .clone()
        .file(&table)
        .route(&table, Route::Nvrtc)
        .compile("kernels");
    let (file, line, construct) = host_code_verdict(result);
    assert_eq!((file, line), (table, 11), "{construct}");
    assert!(construct.contains("`DEFINE_FILL` (line 6)"), "{construct}");
}

/// Every failing file is reported in one build, each with its first
/// error; nvcc's failure is among them.
#[test]
fn every_failing_file_is_reported_at_once() {
    let Some(_) = nvcc() else { return };
    let dir = tempfile::tempdir().unwrap();
    let build = project(dir.path());
    let kernels = dir.path().join("kernels");
    std::fs::write(kernels.join("bad1.cu"), "__global__ void a() { one(); }\n").unwrap();
    std::fs::write(kernels.join("bad2.cu"), "__global__ void b() { two(); }\n").unwrap();
    for (file, missing) in [("moe.cu", "three()"), ("moe2.cu", "four()")] {
        let text = MOE_CU.replace(
            "cudaGetLastError()",
            &format!("cudaGetLastError() + {missing}"),
        );
        let launcher = file.replace(".cu", "_launch");
        std::fs::write(kernels.join(file), text.replace("moe_launch", &launcher)).unwrap();
    }
    let error = build
        .clone()
        .files(["bad1.cu", "bad2.cu", "moe2.cu"].map(|f| kernels.join(f)))
        .compile("kernels")
        .unwrap_err();
    let BuildError::Files { errors } = &error else {
        panic!("{error:?}")
    };
    assert_eq!(errors.len(), 4, "{error:?}");
    let text = format!("{error:?}");
    for name in ["\"one\"", "\"two\"", "\"three\"", "\"four\""] {
        assert!(text.contains(name), "{name}: {text}");
    }
}

/// The README's old guard recipe: the launcher hidden from NVRTC was the
/// template's only instantiation, so NVRTC compiles no kernel. That is
/// an error naming the cause, not an empty fatbin.
#[test]
fn a_build_with_no_kernel_says_why() {
    let Some(_) = nvcc() else { return };
    let dir = tempfile::tempdir().unwrap();
    let guarded = MOE_CU
        .replace("extern \"C\"", "#ifndef __CUDACC_RTC__\nextern \"C\"")
        .replace("#include <cuda_runtime.h>\n", "")
        + "#endif\n";
    let file = dir.path().join("guarded.cu");
    std::fs::write(&file, guarded).unwrap();
    std::fs::write(dir.path().join("moe.h"), MOE_H).unwrap();
    let error = Build::new()
        .file(&file)
        .archs(["sm_80"])
        .out_dir(dir.path().join("out"))
        .cache_dir(dir.path().join("cache"))
        .cargo_metadata(false)
        .compile("kernels")
        .unwrap_err();
    match &error {
        BuildError::NoKernels { files } => assert_eq!(files, &[file]),
        other => panic!("{other:?}"),
    }
    assert!(format!("{error}").contains("instantiate it explicitly"));
}

/// Without NVRTC, as with nvcc's wheels alone, a build whose files all
/// have host code goes to nvcc; one with a file for NVRTC says NVRTC is
/// missing.
#[test]
fn without_nvrtc_host_code_files_still_build() {
    let Some(_) = nvcc() else { return };
    passes_in_a_child(
        "no_nvrtc_child",
        ("CUDA_LINK_NVRTC_PATH", "/nonexistent/lib/libnvrtc.so.13"),
    );
}

/// Runs the test `child` of this binary in a child process with `var`
/// set (a library found nowhere, which this process has loaded).
fn passes_in_a_child(child: &str, (var, value): (&str, &str)) {
    let run = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", child, "--nocapture"])
        .env("CUDA_BUILD_TEST_CHILD", "1")
        .env(var, value)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success() && text.contains("1 passed"), "{text}");
}

#[test]
fn no_nvrtc_child() {
    if std::env::var_os("CUDA_BUILD_TEST_CHILD").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let both = project(dir.path());
    let moe = dir.path().join("kernels/moe.cu");
    let built = Build::new()
        .file(&moe)
        .archs(["sm_80"])
        .out_dir(dir.path().join("out"))
        .cache_dir(dir.path().join("cache"))
        .cargo_metadata(false)
        .compile("kernels")
        .unwrap();
    assert_eq!(built.nvcc_compiled, 1);
    assert!(defined(built.archive.as_ref().unwrap()).contains(&"moe_launch".to_owned()));
    let error = both.clone().compile("kernels").unwrap_err();
    assert!(matches!(error, BuildError::NoNvrtc(_)), "{error:?}");
    // Said before what only NVRTC would answer: the archs to build.
    let error = Build::new()
        .files([moe, dir.path().join("kernels/affine.cu")])
        .out_dir(dir.path().join("out"))
        .cargo_metadata(false)
        .compile("kernels")
        .unwrap_err();
    assert!(matches!(error, BuildError::NoNvrtc(_)), "{error:?}");
}

/// Without nvcc, the error lists the files that need it and how to
/// install it.
#[test]
fn without_nvcc_the_error_lists_the_files_that_need_it() {
    let Some(_) = nvcc() else { return };
    passes_in_a_child("no_nvcc_child", ("NVCC", "/nonexistent/bin/nvcc"));
}

#[test]
fn no_nvcc_child() {
    if std::env::var_os("CUDA_BUILD_TEST_CHILD").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let error = project(dir.path()).compile("kernels").unwrap_err();
    match &error {
        BuildError::NvccMissing { files, .. } => {
            assert_eq!(files, &[dir.path().join("kernels/moe.cu")]);
        }
        other => panic!("{other:?}"),
    }
    assert!(format!("{error}").contains("pip install nvidia-cuda-nvcc"));
}

/// `-rdc=true`: the objects are device-linked, the link object is in the
/// archive, and the device runtime is linked.
#[test]
fn relocatable_host_code_is_device_linked() {
    let Some(_) = nvcc() else { return };
    let dir = tempfile::tempdir().unwrap();
    let built = project(dir.path())
        .flag("-rdc=true")
        .compile("kernels")
        .unwrap();
    let archive = built.archive.clone().unwrap();
    let members = Command::new("ar").arg("t").arg(&archive).output().unwrap();
    let members = String::from_utf8_lossy(&members.stdout);
    assert!(members.contains("kernels-dlink.o"), "{members}");
    assert!(
        built
            .link
            .iter()
            .any(|l| l == "cargo:rustc-link-lib=static=cudadevrt"),
        "{:?}",
        built.link
    );
}

/// Two checkouts of one crate at different paths share the cache: keys
/// name the crate's files relative to its root (`CARGO_MANIFEST_DIR`),
/// so the second checkout's NVRTC compiles and nvcc objects all hit.
#[test]
fn another_checkout_at_another_path_hits() {
    let Some(_) = nvcc() else { return };
    // (NVRTC compiled, NVRTC cached, nvcc compiled, nvcc cached)
    assert_eq!(checkouts(""), ["1 0 1 0", "0 1 0 1"]);
}

/// With `-lineinfo` each output names its files where they are, so a
/// second checkout at another path compiles its own: a hit would carry
/// the first checkout's folder in its line table.
#[test]
fn line_info_keeps_each_checkout_its_own_outputs() {
    let Some(_) = nvcc() else { return };
    assert_eq!(checkouts("-lineinfo"), ["1 0 1 0", "1 0 1 0"]);
}

/// Builds two checkouts of the project, one cache, with `flag` if any:
/// each one's counts.
fn checkouts(flag: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let mut counts = Vec::new();
    for checkout in ["one", "two/deeper"] {
        let root = dir.path().join(checkout);
        // Written, then built from its root as cargo runs a build script.
        drop(project(&root));
        let run = Command::new(std::env::current_exe().unwrap())
            .current_dir(&root)
            .args(["--exact", "checkout_child", "--nocapture"])
            .env("CUDA_BUILD_TEST_CHILD", "1")
            .env("CARGO_MANIFEST_DIR", &root)
            .env("CUDA_BUILD_TEST_CACHE", &cache)
            .env("CUDA_BUILD_TEST_FLAG", flag)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&run.stdout).into_owned();
        assert!(run.status.success() && text.contains("1 passed"), "{text}");
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix("counts "))
            .unwrap()
            .to_owned();
        counts.push(line);
    }
    counts
}

#[test]
fn checkout_child() {
    if std::env::var_os("CUDA_BUILD_TEST_CHILD").is_none() {
        return;
    }
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let cache = PathBuf::from(std::env::var_os("CUDA_BUILD_TEST_CACHE").unwrap());
    // The files as a build script names them: relative to the crate root,
    // its working folder.
    let mut build = Build::new();
    build
        .files(["kernels/moe.cu", "kernels/affine.cu"])
        .archs(["sm_80"])
        .out_dir(root.join("out"))
        .cache_dir(cache)
        .cargo_metadata(false);
    if let Some(flag) = std::env::var("CUDA_BUILD_TEST_FLAG")
        .ok()
        .filter(|f| !f.is_empty())
    {
        build.flag(&flag);
    }
    let built = build.compile("kernels").unwrap();
    println!(
        "counts {} {} {} {}",
        built.compiled, built.cached, built.nvcc_compiled, built.nvcc_cached
    );
}

/// A header appearing in an include folder searched before the one where
/// nvcc found its namesake shadows it: the cached object is not served.
#[test]
fn a_new_shadowing_header_misses() {
    let Some(_) = nvcc() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (dir.path().join("inc1"), dir.path().join("inc2"));
    std::fs::create_dir_all(&first).unwrap();
    std::fs::create_dir_all(&second).unwrap();
    std::fs::write(second.join("moe.h"), MOE_H).unwrap();
    backdate(&second.join("moe.h"));
    let build = |out: &str| {
        project(dir.path())
            .include(&first)
            .include(&second)
            .out_dir(dir.path().join(out))
            .clone()
    };
    // project() writes kernels/moe.h too, found first (the file's folder):
    // it goes, so that the -I folders decide.
    let built = build("out1");
    std::fs::remove_file(dir.path().join("kernels/moe.h")).unwrap();
    let one = built.compile("kernels").unwrap();
    assert_eq!((one.nvcc_compiled, one.nvcc_cached), (1, 0));
    std::fs::write(first.join("moe.h"), "#pragma once\n#define MOE_FACTOR 5\n").unwrap();
    let two = project_files_only(dir.path())
        .include(&first)
        .include(&second)
        .out_dir(dir.path().join("out2"))
        .compile("kernels")
        .unwrap();
    assert_eq!((two.nvcc_compiled, two.nvcc_cached), (1, 0));
}

/// A route names a file however it is spelled; one the build does not
/// have is an error, not ignored.
#[test]
fn routes_name_the_builds_files() {
    let Some(_) = nvcc() else { return };
    let dir = tempfile::tempdir().unwrap();
    let spelled = dir.path().join("kernels/./moe.cu");
    let result = project(dir.path())
        .route(&spelled, Route::Nvrtc)
        .compile("kernels");
    assert!(
        matches!(result, Err(BuildError::HostCode { .. })),
        "{result:?}"
    );
    let result = project(dir.path())
        .route(dir.path().join("kernels/other.cu"), Route::Nvcc)
        .compile("kernels");
    assert!(
        matches!(result, Err(BuildError::UnknownRoute(_))),
        "{result:?}"
    );
}

/// candle's flags for its launcher files (`peers/candle`): a second build
/// takes every object from the cache.
#[test]
fn candles_flags_cache_too() {
    let Some(_) = nvcc() else { return };
    let dir = tempfile::tempdir().unwrap();
    let build = |out: &str| {
        project(dir.path())
            .flag("--expt-relaxed-constexpr")
            .flag("-std=c++17")
            .flag("-O3")
            .flag("-Xcompiler")
            .flag("-fPIC")
            .archs(["sm_90a"])
            .ptx(None)
            .cudart(Cudart::Shared)
            .out_dir(dir.path().join(out))
            .clone()
    };
    let first = build("one").compile("moe").unwrap();
    assert_eq!((first.nvcc_compiled, first.nvcc_cached), (1, 0));
    cuda_link::MemoryCache::clear();
    let second = build("two").compile("moe").unwrap();
    assert_eq!((second.nvcc_compiled, second.nvcc_cached), (0, 1));
}
