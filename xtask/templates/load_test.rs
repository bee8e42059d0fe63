//! Loading {{display}}: the real 12 and 13 wheels that `cargo xtask test`
//! provisions, the search, and the typed errors of files that are not
//! {{display}}.

mod common;

use std::path::PathBuf;

use common::provisioned;
use {{crate}}::{Call, {{fns}}, {{loader}}, LoadError, {{macro}}, sys::{{result}}};

/// The library of CUDA `release`'s wheel opens by path, reports its
/// major, and says it was not found by the search.
fn check_major(release: u32, major: u32) {
    let Some(path) = provisioned(release) else {
        return;
    };
    // SAFETY: the pinned {{display}} wheel that `cargo xtask test` installed.
    let lib = unsafe { {{loader}}::open(&path) }.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(lib.version().0, major, "{lib:?}");
    assert_eq!(lib.version_string(), format!("{}.{}", lib.version().0, lib.version().1));
    assert_eq!(lib.path(), path);
    #[cfg(feature = "discover")]
    assert_eq!(lib.source(), None, "opened by path, not found by the search");
}

#[test]
fn {{test_prefix}}_12_loads_and_reports_its_version() {
    check_major(12, {{version12}});
}

#[test]
fn {{test_prefix}}_13_loads_and_reports_its_version() {
    check_major(13, {{version13}});
}

#[cfg(feature = "discover")]
#[test]
fn search_finds_a_wheel_layout_in_site_packages() {
    let Some(path) = provisioned(13) else { return };
    // The wheel's file is `<site-packages>/nvidia/cu13/lib/<file>`.
    let site = path.ancestors().nth(4).unwrap().to_path_buf();
    let env = {{crate}}::SearchEnv {
        site_packages: vec![site],
        ..Default::default()
    };
    // SAFETY: the site-packages folder holds only the pinned wheel.
    let lib = unsafe { {{loader}}::load_with(&env) }.unwrap();
    assert_eq!(lib.source(), Some({{crate}}::Source::PythonWheel));
    assert_eq!(lib.path(), path);
    assert_eq!(lib.version().0, {{version13}});
}

#[test]
fn a_missing_file_is_a_typed_error() {
    let missing = "/nonexistent/{{file13}}";
    // SAFETY: the file does not exist, so nothing is loaded.
    match unsafe { {{loader}}::open(missing) } {
        Err(LoadError::Open { path, .. }) => assert_eq!(path, PathBuf::from(missing)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_file_that_is_no_library_gives_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("{{file13}}");
    std::fs::write(&fake, b"definitely not ELF").unwrap();
    // SAFETY: a text file, which the loader refuses to open.
    match unsafe { {{loader}}::open(&fake) } {
        Err(err @ LoadError::Open { .. }) => {
            assert!(err.to_string().contains(&fake.display().to_string()), "{err}")
        }
        other => panic!("expected Open, got {other:?}"),
    }
}

/// A vendor that opens the library itself hands it in; a library without
/// {{display}}'s symbols is refused by name.
#[test]
fn a_library_the_caller_opened_is_accepted() {
    let Some(path) = provisioned(13) else { return };
    // SAFETY: the pinned {{display}} wheel that `cargo xtask test` installed.
    let library = unsafe { {{crate}}::libloading::Library::new(&path) }.unwrap();
    // SAFETY: as above.
    let lib = unsafe { {{loader}}::from_library(library, path.clone()) }.unwrap();
    assert_eq!(lib.version().0, {{version13}});
    assert_eq!(lib.path(), path);

    // SAFETY: libc is already loaded; opening it again runs nothing.
    let libc = unsafe { {{crate}}::libloading::Library::new("libc.so.6") }.unwrap();
    // SAFETY: libc exports no {{display}} symbol, so nothing is called.
    match unsafe { {{loader}}::from_library(libc, "libc.so.6".into()) } {
        Err(LoadError::MissingSymbol { missing, .. }) => {
            assert_eq!(missing.symbol, "{{first_core}}")
        }
        other => panic!("expected MissingSymbol, got {other:?}"),
    }
}

extern "C" fn fake_version(
    major: *mut {{version_int}},
    minor: *mut {{version_int}},
) -> {{result}} {
    // SAFETY: the test passes two valid out-pointers.
    unsafe { (*major, *minor) = (13, 5) };
    {{result}}::{{success}}
}

/// `{{macro}}!` names the symbol it called, and a missing one as the
/// table names it.
#[test]
fn the_call_macro_names_the_symbol_it_called() {
    let resolve = |name: &std::ffi::CStr| -> *mut std::ffi::c_void {
        if name == c"{{version_fn}}" {
            fake_version as *mut std::ffi::c_void
        } else {
            std::ptr::null_mut()
        }
    };
    // SAFETY: the one address is a function with the header's signature
    // for its name, and lives as long as the program.
    let fns = unsafe { {{fns}}::load(resolve) };
    let (mut major, mut minor) = (0, 0);
    // SAFETY: two out-pointers.
    let call = unsafe { {{macro}}!(fns, {{version_fn}}(&mut major, &mut minor)) };
    let expected = Call {
        symbol: "{{version_fn}}",
        result: {{result}}::{{success}},
    };
    assert_eq!((call, major, minor), (Ok(expected), 13, 5));
    // SAFETY: the symbol is missing, so nothing is called.
    let missing = unsafe { {{macro}}!(fns, {{destroy_fn}}(&mut std::ptr::null_mut())) }.unwrap_err();
    assert_eq!(missing.symbol, "{{destroy_fn}}");
}
