//! On a machine without the driver, loading fails with a typed error.

use cuda_driver_sys::{Driver, LoadError, Resolution};

#[test]
fn loading_without_a_driver_is_a_typed_error() {
    if std::env::var_os("CUDA_LINK_EXPECT_GPU").is_some() {
        return; // This machine has a driver; see the GPU tests instead.
    }
    match Driver::load() {
        Err(LoadError::NotFound(err)) => {
            let text = err.to_string();
            assert!(text.contains("libcuda.so.1"), "{text}");
            assert!(!err.attempts.is_empty());
        }
        Ok(driver) => eprintln!("a driver is present here: {driver:?}"),
        Err(other) => panic!("unexpected error: {other}"),
    }
}

#[test]
fn an_explicit_missing_file_names_the_path() {
    let err = Driver::open("/nonexistent/libcuda.so.1", Resolution::ProcAddress).unwrap_err();
    assert!(
        err.to_string().contains("/nonexistent/libcuda.so.1"),
        "{err}"
    );
}

#[test]
fn a_library_without_driver_symbols_is_refused() {
    // libc is everywhere and exports no cuInit.
    match Driver::open("libc.so.6", Resolution::DlsymOnly) {
        Err(LoadError::MissingSymbol { missing, .. }) => assert_eq!(missing.symbol, "cuInit"),
        other => panic!("expected MissingSymbol, got {other:?}"),
    }
}
