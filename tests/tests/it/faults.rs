//! Faults: missing library, wrong major, missing symbol, errors mid-link, a
//! vanishing input file. Each is a typed error, and no handle leaks.
#![allow(clippy::result_large_err)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use std::time::{Duration, Instant};

use cuda_link::{Arch, Isolation, LinkError, Linker, LinkerOptions, ObjectCode, OutputKind};
use nvjitlink_sys::{LoadError, NvJitLink};

/// Compiles the stub nvJitLink with `defines` into `dir`.
fn stub(dir: &Path, name: &str, defines: &[&str]) -> PathBuf {
    cuda_link_tests::stub_nvjitlink(dir, name, defines)
}

fn ptx(name: &str) -> ObjectCode {
    let text = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry {name}() {{ ret; }}\n"
    );
    ObjectCode::from_ptx(text.into_bytes(), format!("{name}.ptx")).unwrap()
}

fn live_handles(path: &Path) -> i32 {
    // SAFETY: the stub's own function, `int (void)`; the library is the one
    // the linker loaded (the loader hands back the same instance).
    unsafe {
        let library = libloading::Library::new(path).unwrap();
        let live: libloading::Symbol<unsafe extern "C" fn() -> i32> =
            library.get(b"stub_live_handles\0").unwrap();
        live()
    }
}

#[test]
fn a_missing_library_names_where_it_looked() {
    let _serial = cuda_link_tests::serial();
    // SAFETY: no file exists there.
    let err = unsafe { NvJitLink::open("/nonexistent/libnvJitLink.so.13") }.unwrap_err();
    assert!(matches!(err, LoadError::Open { .. }), "{err:?}");
    assert!(
        err.to_string().contains("/nonexistent/libnvJitLink.so.13"),
        "{err}"
    );
}

#[test]
fn a_library_of_the_wrong_major_is_refused() {
    let _serial = cuda_link_tests::serial();
    let dir = tempfile::tempdir().unwrap();
    let path = stub(dir.path(), "major11", &["STUB_MAJOR=11"]);
    // SAFETY: our own stub, with no initialisers.
    match unsafe { NvJitLink::open(&path) } {
        Err(LoadError::UnsupportedMajor { major: 11, .. }) => {}
        other => panic!("expected UnsupportedMajor, got {other:?}"),
    }
}

#[test]
fn a_missing_symbol_is_refused_at_load() {
    let _serial = cuda_link_tests::serial();
    let dir = tempfile::tempdir().unwrap();
    let path = stub(dir.path(), "nocomplete", &["STUB_NO_COMPLETE"]);
    // SAFETY: our own stub, with no initialisers.
    match unsafe { NvJitLink::open(&path) } {
        Err(LoadError::MissingSymbol { missing, .. }) => {
            assert_eq!(missing.symbol, "nvJitLinkComplete")
        }
        other => panic!("expected MissingSymbol, got {other:?}"),
    }
}

#[test]
fn an_error_mid_link_carries_the_log_and_frees_the_handle() {
    let _serial = cuda_link_tests::serial();
    let dir = tempfile::tempdir().unwrap();
    let path = stub(dir.path(), "failadd", &["STUB_FAIL_ADD_AT=2"]);
    // SAFETY: our own stub, with nvJitLink's signatures.
    let lib = Arc::new(unsafe { NvJitLink::open(&path) }.unwrap());
    for _ in 0..3 {
        let mut linker =
            Linker::with_nvjitlink(Arc::clone(&lib), LinkerOptions::for_arch(Arch::sm(90)))
                .unwrap();
        linker
            .add_many([&ptx("first"), &ptx("second"), &ptx("third")])
            .unwrap();
        let err = linker.link(OutputKind::Cubin).unwrap_err();
        let LinkError::NvJitLink {
            call,
            error,
            input,
            error_log,
            ..
        } = &err
        else {
            panic!("{err:?}")
        };
        assert_eq!(*call, "nvJitLinkAddData");
        assert_eq!(
            error.result,
            nvjitlink_sys::sys::nvJitLinkResult::NVJITLINK_ERROR_INVALID_INPUT
        );
        assert_eq!(input.as_deref(), Some("second.ptx"));
        assert_eq!(error_log, "stub: input rejected mid-link");
    }
    assert_eq!(live_handles(&path), 0, "a handle leaked on the error path");
}

#[test]
fn a_successful_link_frees_the_handle_too() {
    let _serial = cuda_link_tests::serial();
    let dir = tempfile::tempdir().unwrap();
    let path = stub(dir.path(), "ok", &[]);
    // SAFETY: our own stub, with nvJitLink's signatures.
    let lib = Arc::new(unsafe { NvJitLink::open(&path) }.unwrap());
    let mut linker =
        Linker::with_nvjitlink(Arc::clone(&lib), LinkerOptions::for_arch(Arch::sm(90))).unwrap();
    linker.add(&ptx("only")).unwrap();
    // The stub returns four bytes of ELF magic: not a valid cubin, which
    // the linker reports as an input error rather than returning it.
    assert!(matches!(
        linker.link(OutputKind::Cubin),
        Err(LinkError::Input(_))
    ));
    assert_eq!(live_handles(&path), 0);
}

#[test]
fn a_file_vanishing_after_from_path_still_links() {
    let _serial = cuda_link_tests::serial();
    let Some(path) = cuda_link_tests::redist("CUDA_LINK_NVJITLINK_PATH") else {
        return;
    };
    let Some(ptx) = cuda_link_tests::fixtures::saxpy_ptx() else {
        return;
    };
    let (dir, file) = cuda_link_tests::temp_file("saxpy.ptx", &ptx);
    let code = ObjectCode::from_path(&file).unwrap();
    drop(dir); // the file and its folder are gone
    assert!(!file.exists());
    // SAFETY: the pinned nvJitLink wheel that `cargo xtask test` installed.
    let lib = Arc::new(unsafe { NvJitLink::open(path) }.unwrap());
    let mut linker = Linker::with_nvjitlink(lib, LinkerOptions::for_arch(Arch::sm(90))).unwrap();
    linker.add(&code).unwrap();
    let cubin = linker.link(OutputKind::Cubin).unwrap();
    assert_eq!(cubin.inspect().unwrap().kernels(), ["saxpy"]);
    // A file that vanished before from_path is an I/O error naming it.
    let err = ObjectCode::from_path(&file).unwrap_err();
    assert!(err.to_string().contains("saxpy.ptx"), "{err}");
}

/// An isolated link of `input` on the stub built with `defines`.
fn isolated_link(name: &str, defines: &[&str], timeout: Option<Duration>) -> LinkError {
    limited_link(
        name,
        defines,
        Isolation::Process {
            timeout,
            memory_limit: None,
        },
    )
}

/// A link of `input` on the stub built with `defines`, isolated as asked.
fn limited_link(name: &str, defines: &[&str], isolation: Isolation) -> LinkError {
    let dir = tempfile::tempdir().unwrap();
    let path = stub(dir.path(), name, defines);
    // SAFETY: our own stub, with nvJitLink's signatures.
    let lib = Arc::new(unsafe { NvJitLink::open(&path) }.unwrap());
    let options = LinkerOptions::for_arch(Arch::sm(90)).isolation(isolation);
    let mut linker = Linker::with_nvjitlink(lib, options).unwrap();
    linker.add(&ptx("victim")).unwrap();
    // The handle lived and died in the child: none is open here.
    let error = linker.link(OutputKind::Cubin).unwrap_err();
    assert_eq!(live_handles(&path), 0);
    error
}

#[test]
fn a_crash_in_an_isolated_link_is_a_typed_error() {
    let _serial = cuda_link_tests::serial();
    let error = isolated_link("segv", &["STUB_COMPLETE_FAULT=1"], None);
    match &error {
        LinkError::Crashed { how, inputs } => {
            assert!(how.contains("SIGSEGV"), "{how}");
            assert_eq!(inputs, &["victim.ptx"]);
        }
        other => panic!("{other:?}"),
    }
    assert!(error.to_string().contains("victim.ptx"), "{error}");
}

#[test]
fn an_abort_in_an_isolated_link_is_a_typed_error() {
    let _serial = cuda_link_tests::serial();
    let error = isolated_link("abort", &["STUB_COMPLETE_FAULT=2"], None);
    assert!(
        matches!(&error, LinkError::Crashed { how, .. } if how.contains("SIGABRT")),
        "{error:?}"
    );
}

#[test]
fn a_hang_in_an_isolated_link_is_stopped_at_its_deadline() {
    let _serial = cuda_link_tests::serial();
    let started = Instant::now();
    let error = isolated_link(
        "hang",
        &["STUB_COMPLETE_FAULT=3"],
        Some(Duration::from_millis(300)),
    );
    assert!(matches!(error, LinkError::TimedOut { .. }), "{error:?}");
    // Killed and reaped, not waited for: well under the test harness's patience.
    assert!(started.elapsed() < Duration::from_secs(30));
}

/// A worker whose resident memory passes its limit is stopped: a typed
/// error, within the deadline, and this process untouched.
#[test]
fn an_isolated_link_over_its_memory_limit_is_stopped() {
    let _serial = cuda_link_tests::serial();
    let started = Instant::now();
    let error = limited_link(
        "hog",
        &["STUB_COMPLETE_FAULT=4"],
        Isolation::Process {
            timeout: Some(Duration::from_secs(60)),
            memory_limit: Some(256 << 20),
        },
    );
    assert!(
        matches!(&error, LinkError::MemoryLimit { limit, inputs } if *limit == 256 << 20 && inputs == &["victim.ptx"]),
        "{error:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(30));
}

/// The default linker is isolated, with a time and a memory limit: a
/// crash of nvJitLink is an error, not the end of this process.
#[test]
fn the_default_linker_survives_a_crash() {
    let _serial = cuda_link_tests::serial();
    assert_eq!(LinkerOptions::default().isolation, Isolation::process());
    assert!(matches!(
        Isolation::default(),
        Isolation::Process {
            timeout: Some(Isolation::DEFAULT_TIMEOUT),
            memory_limit: Some(_),
        }
    ));
    let error = limited_link(
        "default-segv",
        &["STUB_COMPLETE_FAULT=1"],
        Isolation::default(),
    );
    assert!(matches!(&error, LinkError::Crashed { .. }), "{error:?}");
}

#[test]
fn an_isolated_link_answers_with_the_backends_error_and_log() {
    let _serial = cuda_link_tests::serial();
    let dir = tempfile::tempdir().unwrap();
    let path = stub(dir.path(), "failadd-isolated", &["STUB_FAIL_ADD_AT=1"]);
    // SAFETY: our own stub, with nvJitLink's signatures.
    let lib = Arc::new(unsafe { NvJitLink::open(&path) }.unwrap());
    let options = LinkerOptions::for_arch(Arch::sm(90)).isolation(Isolation::Process {
        timeout: None,
        memory_limit: None,
    });
    let mut linker = Linker::with_nvjitlink(lib, options).unwrap();
    linker.add(&ptx("first")).unwrap();
    match linker.link(OutputKind::Cubin).unwrap_err() {
        LinkError::NvJitLink {
            call: "nvJitLinkAddData",
            input,
            error_log,
            ..
        } => {
            assert_eq!(input.as_deref(), Some("first.ptx"));
            assert_eq!(error_log, "stub: input rejected mid-link");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(linker.error_log(), "stub: input rejected mid-link");
}

/// The inputs that crashed or hung nvJitLink in `cargo xtask fuzz-link`,
/// kept under `tests/regressions/`: each is refused, or links in a child
/// and ends in a typed outcome; this process survives them all.
#[test]
fn fuzz_regressions_end_in_a_typed_outcome() {
    let _serial = cuda_link_tests::serial();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions");
    let libraries = cuda_link_tests::nvjitlink_libraries();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 5, "{}", files.len());
    for file in files {
        let Ok(code) = ObjectCode::from_path(&file) else {
            continue;
        };
        for (major, path) in &libraries {
            // SAFETY: the pinned nvJitLink wheels that `cargo xtask test` installed.
            let lib = Arc::new(unsafe { NvJitLink::open(path) }.unwrap());
            let options = LinkerOptions::for_arch(Arch::sm(90)).isolation(Isolation::Process {
                timeout: Some(Duration::from_secs(3)),
                memory_limit: None,
            });
            let mut linker = Linker::with_nvjitlink(lib, options).unwrap();
            let outcome = linker.add(&code).and_then(|l| l.link(OutputKind::Cubin));
            eprintln!(
                "nvJitLink {major}, {}: {:?}",
                file.display(),
                outcome.map(drop)
            );
        }
    }
}

/// The crash report of `cuda-link/tests/it/link.rs`: a SIGSEGV in a child
/// prints the signal, the faulting address and frames, then still kills it.
#[test]
fn a_crash_leaves_its_address_and_frames_on_stderr() {
    let _serial = cuda_link_tests::serial();
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "faults::crash_report_child",
            "--include-ignored",
            "--nocapture",
        ])
        .env("CUDA_LINK_CRASH_CHILD", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&output.status),
        Some(libc_sigsegv()),
        "{stderr}"
    );
    assert!(
        stderr.contains("fatal signal 11 at address 0x0000000000000010"),
        "{stderr}"
    );
    // Frames as `binary(+offset)[address]`, for `addr2line -e binary offset`.
    let frames = stderr.lines().filter(|l| l.contains("(+0x")).count();
    assert!(frames >= 3, "no frames: {stderr}");
}

fn libc_sigsegv() -> i32 {
    11
}

#[test]
#[ignore = "run by a_crash_leaves_its_address_and_frames_on_stderr in a child process"]
fn crash_report_child() {
    let _serial = cuda_link_tests::serial();
    assert!(std::env::var_os("CUDA_LINK_CRASH_CHILD").is_some());
    cuda_link_tests::crash_report::install();
    // SAFETY: not safe at all: this child exists to die at address 0x10.
    unsafe { std::ptr::write_volatile(0x10 as *mut u8, 1) };
}

/// A worker that crashed is replaced: the next isolated link on the same
/// library succeeds and holds its kernel.
#[test]
fn a_good_link_follows_a_crashed_one() {
    let _serial = cuda_link_tests::serial();
    let Some(good) = cuda_link_tests::fixtures::saxpy_ltoir() else {
        return;
    };
    let good = ObjectCode::from_ltoir(good, "saxpy.ltoir").unwrap();
    let crasher = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("regressions/crash-nvjitlink13-ltoir-89f92a676c16f485");
    let crasher = ObjectCode::from_path(crasher).unwrap();
    for (major, path) in cuda_link_tests::nvjitlink_libraries() {
        // SAFETY: the pinned nvJitLink wheels that `cargo xtask test` installed.
        let lib = Arc::new(unsafe { NvJitLink::open(path) }.unwrap());
        let options = LinkerOptions::for_arch(Arch::sm(90)).isolation(Isolation::Process {
            timeout: Some(Duration::from_secs(60)),
            memory_limit: None,
        });
        for round in 0..2 {
            let mut linker = Linker::with_nvjitlink(Arc::clone(&lib), options.clone()).unwrap();
            let crashed = linker.add(&crasher).unwrap().link(OutputKind::Cubin);
            assert!(
                matches!(crashed, Err(LinkError::Crashed { .. })),
                "nvJitLink {major}, round {round}: {crashed:?}"
            );
            let mut linker = Linker::with_nvjitlink(Arc::clone(&lib), options.clone()).unwrap();
            let cubin = linker.add(&good).unwrap().link(OutputKind::Cubin).unwrap();
            assert_eq!(
                cubin.inspect().unwrap().kernels(),
                ["saxpy"],
                "nvJitLink {major}"
            );
        }
    }
}

/// A missing nvJitLink says how to get it, and reads as text where
/// `main() -> Result<(), Box<dyn Error>>` prints it with `{:?}`.
#[test]
fn a_missing_library_says_how_to_get_it_readably() {
    let _serial = cuda_link_tests::serial();
    let env = cuda_dylib::SearchEnv {
        cuda_homes: vec!["/nonexistent/cuda".into()],
        ..cuda_dylib::SearchEnv::default()
    };
    // SAFETY: nothing exists where this search looks.
    let not_found = unsafe { cuda_dylib::open(&nvjitlink_sys::SPEC, &env) }.unwrap_err();
    let error: Box<dyn std::error::Error> =
        Box::new(LinkError::from(LoadError::NotFound(not_found)));
    let shown = format!("{error:?}");
    for expected in [
        "nvJitLink is not available: nvJitLink not found.",
        "pip install nvidia-nvjitlink",
        "nvidia-nvjitlink-cu12",
        "CUDA_HOME",
        "CUDA_LINK_NVJITLINK_PATH",
        "/nonexistent/cuda",
    ] {
        assert!(shown.contains(expected), "{expected}: {shown}");
    }
    assert!(
        !shown.contains("attempts:") && !shown.contains("NotFound {"),
        "{shown}"
    );
}

/// A library's identity in cache keys is that of the file the loader
/// mapped, taken once: replacing the file on disk after the load (as pip
/// does, by a rename) changes nothing for this process, whose code is
/// still the old file's; a load of another file is another identity.
/// (Before, the path was resolved when a key was made: the new file's
/// inode, size and time named the old file's code.)
#[test]
fn a_librarys_identity_is_the_mapped_files() {
    let _serial = cuda_link_tests::serial();
    let dir = tempfile::tempdir().unwrap();
    let path = stub(dir.path(), "identity", &[]);
    // SAFETY: our own stub, with nvJitLink's signatures.
    let lib = unsafe { NvJitLink::open(&path) }.unwrap();
    let symbol = lib.nvJitLinkVersion.map(|f| f as *const std::ffi::c_void);
    let before = cuda_link::library_file_identity(symbol, &path).unwrap();
    assert!(before.contains("mapped device"), "{before}");
    let newer = stub(dir.path(), "identity-newer", &["STUB_MAJOR=12"]);
    std::fs::rename(&newer, &path).unwrap();
    let after = cuda_link::library_file_identity(symbol, &path).unwrap();
    assert_eq!(before, after, "the mapped file did not change");
    // The new file, loaded under another name (the loader reuses a name
    // it has loaded): another mapping, another identity.
    let alias = dir.path().join("libnvJitLink-alias.so");
    std::fs::copy(&path, &alias).unwrap();
    // SAFETY: as above.
    let reloaded = unsafe { NvJitLink::open(&alias) }.unwrap();
    let symbol = reloaded
        .nvJitLinkVersion
        .map(|f| f as *const std::ffi::c_void);
    let other = cuda_link::library_file_identity(symbol, &alias).unwrap();
    assert_ne!(before, other, "another file was mapped");
}
