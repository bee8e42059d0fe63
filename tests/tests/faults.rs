//! Faults: missing library, wrong major, missing symbol, errors mid-link, a
//! vanishing input file. Each is a typed error, and no handle leaks.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use cuda_link::{Arch, LinkError, Linker, LinkerOptions, ObjectCode, OutputKind};
use nvjitlink_sys::{LoadError, NvJitLink};

/// Compiles the stub nvJitLink with `defines` into `dir`.
fn stub(dir: &Path, name: &str, defines: &[&str]) -> PathBuf {
    let output = dir.join(format!("libnvJitLink-{name}.so"));
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/stub_nvjitlink.c");
    let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&output)
        .arg(&source)
        .args(defines.iter().map(|d| format!("-D{d}")))
        .status()
        .expect("a C compiler (cc) is needed for the fault tests");
    assert!(status.success());
    output
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
