//! Never stale, through `Build`: an include folder given as a flag
//! reaches NVRTC's scan; nvcc's objects miss when a header newly shadows
//! the one nvcc found, in a subfolder of an include folder, a `CPATH`
//! folder, a `CPLUS_INCLUDE_PATH` one or an `-isystem` one; `-dc` means
//! relocatable code to both stages; and docs.rs's kernel list reads a
//! file with non-ASCII comments.

// Tests read their own switches; the ban is for the library's reads.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::Command;

use cuda_build::Build;

/// NVRTC, nvJitLink and nvcc from the workspace's wheels, else the test
/// is skipped, as every test of this crate is without them.
fn nvcc() -> Option<PathBuf> {
    cuda_link_tests::redist("CUDA_LINK_NVRTC_PATH")?;
    cuda_link_tests::redist("CUDA_LINK_NVJITLINK_PATH")?;
    cuda_link_tests::redist("CUDA_LINK_NVCC")
}

/// Writes `text`, dated a minute back: the cache must tell an edit by
/// more than a file's modification time, which tools set back (and which
/// nvcc's cache once trusted when older than 2 s).
fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    let file = std::fs::File::options().append(true).open(path).unwrap();
    file.set_modified(past).unwrap();
}

fn build(dir: &Path) -> Build {
    Build::new()
        .archs(["sm_80"])
        .ptx(None)
        .out_dir(dir.join("out"))
        .cache_dir(dir.join("cache"))
        .cargo_metadata(false)
        .clone()
}

/// A device-only file whose header is found through a folder given as a
/// flag (`-Idir`, `-I dir`, `-isystem dir`): an edit of the header
/// recompiles.
#[test]
fn an_include_folder_given_as_a_flag_reaches_the_scan() {
    let Some(_) = nvcc() else { return };
    for spelling in ["-I", "-I ", "-isystem "] {
        let dir = tempfile::tempdir().unwrap();
        let inc = dir.path().join("inc");
        write(&inc.join("v.h"), "#define V 1\n");
        let file = dir.path().join("k.cu");
        write(
            &file,
            "#include \"v.h\"\nextern \"C\" __global__ void k(int *p) { *p = V; }\n",
        );
        let flags: Vec<String> = match spelling.strip_suffix(' ') {
            Some(option) => vec![option.to_owned(), inc.display().to_string()],
            None => vec![format!("{spelling}{}", inc.display())],
        };
        let mut build = build(dir.path());
        build.file(&file);
        for flag in &flags {
            build.flag(flag);
        }
        let first = build.compile("kernels").unwrap();
        assert_eq!((first.compiled, first.cached), (1, 0), "{spelling}");
        write(&inc.join("v.h"), "#define V 2\n");
        let edited = build.compile("kernels").unwrap();
        assert_eq!(
            (edited.compiled, edited.cached),
            (1, 0),
            "{spelling}: the edited header is seen"
        );
    }
}

/// A host-code file: its launcher, and a marker naming the header it
/// read, which the archive holds.
const LAUNCH_CU: &str = "#include <a/b.h>\n\
    extern \"C\" const char marker[] = \"value=\" V;\n\
    __global__ void k(int *p) { *p = 1; }\n\
    extern \"C\" void launch(int *p) { k<<<1, 1>>>(p); }\n";

/// Builds `file` with `build`; the marker's value in the archive, and
/// whether nvcc compiled (not the cache).
fn host_build(build: &mut Build, out: &Path) -> (String, bool) {
    let built = build.out_dir(out).compile("kernels").unwrap();
    let archive = std::fs::read(built.archive.unwrap()).unwrap();
    let text = String::from_utf8_lossy(&archive);
    let value = text
        .split("value=")
        .nth(1)
        .map(|rest| rest.chars().take_while(char::is_ascii_digit).collect())
        .unwrap_or_default();
    (value, built.nvcc_compiled == 1)
}

/// `a/b.h` is found in `second`; then one appears in `first`'s existing
/// subfolder `a/`, which the compiler searches first: the rebuild
/// recompiles and reads it.
fn shadowed(dir: &Path, first: &Path, second: &Path, mut build: Build) {
    write(&first.join("a/other.h"), "\n");
    write(&second.join("a/b.h"), "#define V \"1\"\n");
    // In a folder of its own: nothing but the file changes in it.
    let file = dir.join("src/launch.cu");
    write(&file, LAUNCH_CU);
    build.file(&file);
    assert_eq!(
        host_build(&mut build, &dir.join("out1")),
        ("1".to_owned(), true)
    );
    assert_eq!(
        host_build(&mut build, &dir.join("out2")),
        ("1".to_owned(), false),
        "unchanged: the cache serves it"
    );
    write(&first.join("a/b.h"), "#define V \"2\"\n");
    assert_eq!(
        host_build(&mut build, &dir.join("out3")),
        ("2".to_owned(), true),
        "the shadowing header is read"
    );
}

/// `-I first -I second` (as `Build::include`) and `-isystem` flags.
#[test]
fn a_header_newly_shadowing_another_in_a_subfolder_misses() {
    let Some(_) = nvcc() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (dir.path().join("inc1"), dir.path().join("inc2"));
    shadowed(
        dir.path(),
        &first,
        &second,
        build(dir.path()).include(&first).include(&second).clone(),
    );
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (dir.path().join("sys1"), dir.path().join("sys2"));
    let mut flagged = build(dir.path());
    for folder in [&first, &second] {
        flagged.flag("-isystem").flag(&folder.display().to_string());
    }
    shadowed(dir.path(), &first, &second, flagged);
}

/// The folders of `CPATH` and `CPLUS_INCLUDE_PATH`, each in a child with
/// that variable set (`C_INCLUDE_PATH` is gcc's for C alone).
#[test]
fn a_header_newly_shadowing_another_in_an_environment_folder_misses() {
    let Some(_) = nvcc() else { return };
    for var in ["CPATH", "CPLUS_INCLUDE_PATH"] {
        let dir = tempfile::tempdir().unwrap();
        let (first, second) = (dir.path().join("env1"), dir.path().join("env2"));
        let value = std::env::join_paths([&first, &second]).unwrap();
        in_child("environment_child", dir.path(), (var, &value));
    }
}

/// Runs this test binary's `test` in a child with `dir` and `var` set.
fn in_child(test: &str, dir: &Path, (var, value): (&str, &std::ffi::OsStr)) {
    let run = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture"])
        .env("CUDA_BUILD_TEST_CHILD", dir)
        .env(var, value)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success() && text.contains("1 passed"),
        "{test}, {var}: {text}{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

#[test]
fn environment_child() {
    let Some(dir) = std::env::var_os("CUDA_BUILD_TEST_CHILD").map(PathBuf::from) else {
        return;
    };
    let (first, second) = (dir.join("env1"), dir.join("env2"));
    shadowed(&dir, &first, &second, build(&dir));
}

/// `-dc` asks both stages for relocatable code, as `-rdc=true` does: the
/// device-only file is compiled relocatable and linked (NVRTC knows no
/// `-dc`, and was once handed it), and the host-code file's objects are
/// device-linked with the device runtime.
#[test]
fn dc_is_relocatable_code_to_both_stages() {
    let Some(_) = nvcc() else { return };
    for flag in ["-dc", "-rdc=true"] {
        let dir = tempfile::tempdir().unwrap();
        let device = dir.path().join("device.cu");
        write(
            &device,
            "extern \"C\" __global__ void scale(float *y) { y[0] *= 2.0f; }\n",
        );
        let host = dir.path().join("host.cu");
        write(
            &host,
            "__global__ void k(int *p) { *p = 1; }\n\
             extern \"C\" void launch(int *p) { k<<<1, 1>>>(p); }\n",
        );
        let built = build(dir.path())
            .files([&device, &host])
            .flag(flag)
            .compile("kernels")
            .unwrap_or_else(|e| panic!("{flag}: {e}"));
        assert_eq!(built.kernels, ["scale"], "{flag}");
        assert!(
            built
                .link
                .iter()
                .any(|l| l == "cargo:rustc-link-lib=static=cudadevrt"),
            "{flag}: {:?}",
            built.link
        );
    }
}

/// docs.rs lists the `extern "C"` kernels by reading the files: a
/// non-ASCII comment just before `__global__` once split a character and
/// panicked the build.
#[test]
fn docs_rs_reads_non_ascii_comments() {
    let dir = tempfile::tempdir().unwrap();
    in_child("docs_rs_child", dir.path(), ("DOCS_RS", "1".as_ref()));
}

#[test]
fn docs_rs_child() {
    let Some(dir) = std::env::var_os("CUDA_BUILD_TEST_CHILD").map(PathBuf::from) else {
        return;
    };
    let file = dir.join("k.cu");
    let comment = "é".repeat(40);
    write(
        &file,
        &format!("extern \"C\" /* {comment} */  __global__ void k(int *p) {{ *p = 1; }}\n"),
    );
    let built = build(&dir).file(&file).compile("kernels").unwrap();
    assert_eq!(built.kernels, ["k"]);
}

/// A header changed and changed back while nvcc reads it (A, B, A): the
/// closure nvcc objects are keyed by ([`cuda_compile::ReadSet`], which the
/// nvcc stage checks before it stores an object) never calls unchanged
/// what nvcc read B from. Fifty rounds of nvcc's preprocessor, which
/// reads what the compile reads, with a thread writing B then A at a
/// point spread over each run.
#[test]
fn what_nvcc_read_of_a_change_undone_is_never_unchanged() {
    let Some(nvcc) = nvcc() else { return };
    let dir = tempfile::tempdir().unwrap();
    let header = dir.path().join("src/v.h");
    write(&header, "#define V \"1\"\n");
    let file = dir.path().join("src/launch.cu");
    write(
        &file,
        "#include \"v.h\"\nextern \"C\" const char marker[] = \"value=\" V;\n",
    );
    let mut search = cuda_compile::IncludeSearch::new();
    search.pre_include(["cuda_runtime.h"]);
    let output = dir.path().join("launch.ii");
    let preprocess = || {
        let run = Command::new(&nvcc)
            .arg("-E")
            .arg("-o")
            .arg(&output)
            .arg(&file)
            .output()
            .unwrap();
        let text = std::fs::read_to_string(&output).unwrap_or_default();
        (run.status.success(), text.contains("\"value=\" \"2\""))
    };
    let started = std::time::Instant::now();
    preprocess();
    let span = started.elapsed().as_micros() as u64;
    let (mut stale, mut read_b) = (0, 0);
    for round in 0..50u64 {
        let read = search.scan(&file).unwrap();
        let toggler = {
            let header = header.clone();
            let at = span * ((round * 37) % 50) / 50;
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_micros(at));
                std::fs::write(&header, "#define V \"2\"\n").unwrap();
                std::thread::sleep(std::time::Duration::from_micros(span / 10));
                std::fs::write(&header, "#define V \"1\"\n").unwrap();
            })
        };
        let (ran, saw_b) = preprocess();
        toggler.join().unwrap();
        read_b += usize::from(ran && saw_b);
        if saw_b && read.unchanged() {
            stale += 1;
        }
    }
    eprintln!("nvcc A, B, A: B was read in {read_b} of 50 rounds");
    assert_eq!(stale, 0, "of 50 rounds, B read in {read_b}");
    assert!(read_b > 0, "no round read B: the toggles missed every run");
}
