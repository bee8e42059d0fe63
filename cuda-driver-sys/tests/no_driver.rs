//! On a machine without the driver, loading fails with a typed error.

use cuda_driver_sys::{Driver, LoadError, Resolution};

#[cfg(feature = "discover")]
#[test]
fn loading_without_a_driver_is_a_typed_error() {
    if std::path::Path::new("/dev/nvidiactl").exists() {
        use std::io::Write as _;
        // Past the harness's capture of `eprintln!`: a skip is said, not hidden.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: this machine has an NVIDIA driver; see the GPU tests"
        );
        return;
    }
    match Driver::load() {
        Err(LoadError::NotFound(err)) => {
            let text = err.to_string();
            assert!(text.contains("libcuda.so.1"), "{text}");
            assert!(!err.attempts.is_empty());
        }
        Ok(driver) => panic!("a driver loaded on a machine without one: {driver:?}"),
        Err(other) => panic!("unexpected error: {other}"),
    }
}

#[test]
fn an_explicit_missing_file_names_the_path() {
    // SAFETY: no file exists there.
    let err =
        unsafe { Driver::open("/nonexistent/libcuda.so.1", Resolution::ProcAddress) }.unwrap_err();
    assert!(
        err.to_string().contains("/nonexistent/libcuda.so.1"),
        "{err}"
    );
}

#[test]
fn a_library_without_driver_symbols_is_refused() {
    // libc is everywhere and exports no cuInit.
    // SAFETY: libc is already loaded; opening it again runs nothing.
    match unsafe { Driver::open("libc.so.6", Resolution::DlsymOnly) } {
        Err(LoadError::MissingSymbol { missing, .. }) => assert_eq!(missing.symbol, "cuInit"),
        other => panic!("expected MissingSymbol, got {other:?}"),
    }
}

/// A vendor that opens the library itself hands it in; one without the
/// driver's symbols is refused before anything is called.
#[test]
fn a_library_the_caller_opened_is_checked() {
    // SAFETY: libc is already loaded; opening it again runs nothing.
    let libc = unsafe { cuda_driver_sys::libloading::Library::new("libc.so.6") }.unwrap();
    // SAFETY: libc exports no driver symbol, so nothing is called.
    match unsafe { Driver::from_library(libc, "libc.so.6".into(), Resolution::ProcAddress) } {
        Err(LoadError::MissingSymbol { missing, path }) => {
            assert_eq!(missing.symbol, "cuInit");
            assert_eq!(path, std::path::Path::new("libc.so.6"));
        }
        other => panic!("expected MissingSymbol, got {other:?}"),
    }
}
