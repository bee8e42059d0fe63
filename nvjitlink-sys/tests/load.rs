//! Loads the real nvJitLink 12 and 13 wheels that `cargo xtask test` provisions.

use std::io::Write as _;
use std::path::PathBuf;

use nvjitlink_sys::{LoadError, NvJitLink, sys::nvJitLinkResult};

/// The provisioned library of one major, or `None` (a skip) outside
/// `cargo xtask test`, which sets `CUDA_LINK_REQUIRE_REDIST` to turn the
/// skip into a failure.
fn provisioned(major: u32) -> Option<PathBuf> {
    let var = format!("CUDA_LINK_NVJITLINK{major}_PATH");
    match std::env::var_os(&var) {
        Some(path) => Some(PathBuf::from(path)),
        None if std::env::var_os("CUDA_LINK_REQUIRE_REDIST").is_some() => {
            panic!("{var} is not set although CUDA_LINK_REQUIRE_REDIST is")
        }
        None => {
            // Past the harness's capture of `eprintln!`: a skip is said, not hidden.
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED: {var} not set; run through `cargo xtask test`"
            );
            None
        }
    }
}

fn check_major(major: u32) {
    let Some(path) = provisioned(major) else {
        return;
    };
    // SAFETY: the pinned nvJitLink wheel that `cargo xtask test` installed.
    let lib = unsafe { NvJitLink::open(&path) }.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(lib.version().0, major, "{lib:?}");
    assert_eq!(lib.path(), path);
    #[cfg(feature = "discover")]
    assert_eq!(
        lib.source(),
        None,
        "opened by path, not found by the search"
    );

    let mut handle = std::ptr::null_mut();
    let mut options = [c"-arch=sm_90".as_ptr()];
    // SAFETY: valid out-pointer and a one-element option array.
    let created = unsafe { lib.nvJitLinkCreate(&mut handle, 1, options.as_mut_ptr()) }.unwrap();
    assert_eq!(created, nvJitLinkResult::NVJITLINK_SUCCESS);
    // SAFETY: the handle came from nvJitLinkCreate and is destroyed once.
    let destroyed = unsafe { lib.nvJitLinkDestroy(&mut handle) }.unwrap();
    assert_eq!(destroyed, nvJitLinkResult::NVJITLINK_SUCCESS);
}

#[test]
fn nvjitlink_12_loads_and_reports_its_version() {
    check_major(12);
}

#[test]
fn nvjitlink_13_loads_and_reports_its_version() {
    check_major(13);
}

#[test]
fn linked_ltoir_is_a_typed_error_on_12() {
    let Some(path) = provisioned(12) else { return };
    // SAFETY: the pinned nvJitLink wheel that `cargo xtask test` installed.
    let lib = unsafe { NvJitLink::open(path) }.unwrap();
    let mut size = 0usize;
    // SAFETY: the call never happens: the symbol is missing in 12.x.
    let err =
        unsafe { lib.nvJitLinkGetLinkedLTOIRSize(std::ptr::null_mut(), &mut size) }.unwrap_err();
    assert_eq!(err.symbol, "nvJitLinkGetLinkedLTOIRSize");
    assert!(err.to_string().contains("not available"), "{err}");

    let Some(path) = provisioned(13) else { return };
    // SAFETY: the pinned nvJitLink wheel that `cargo xtask test` installed.
    let lib = unsafe { NvJitLink::open(path) }.unwrap();
    assert!(lib.nvJitLinkGetLinkedLTOIRSize.is_some());
}

#[cfg(feature = "discover")]
#[test]
fn search_finds_a_wheel_layout_in_site_packages() {
    let Some(path) = provisioned(13) else { return };
    // The wheel folder is .../nvjitlink13/nvidia/cu13/lib/libnvJitLink.so.13:
    // its site-packages root is four levels up.
    let site = path.ancestors().nth(4).unwrap().to_path_buf();
    let env = nvjitlink_sys::SearchEnv {
        site_packages: vec![site],
        ..Default::default()
    };
    // SAFETY: the site-packages folder holds only the pinned wheel.
    let lib = unsafe { NvJitLink::load_with(&env) }.unwrap();
    assert_eq!(lib.source(), Some(nvjitlink_sys::Source::PythonWheel));
    assert_eq!(lib.path(), path);
    assert_eq!(lib.version().0, 13);
}

#[test]
fn a_file_that_is_no_library_gives_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("libnvJitLink.so.13");
    std::fs::write(&fake, b"definitely not ELF").unwrap();
    // SAFETY: a text file, which the loader refuses to open.
    match unsafe { NvJitLink::open(&fake) } {
        Err(err @ LoadError::Open { .. }) => {
            assert!(
                err.to_string().contains(&fake.display().to_string()),
                "{err}"
            )
        }
        other => panic!("expected Open, got {other:?}"),
    }
}

/// A vendor that opens the library itself hands it in.
#[test]
fn a_library_the_caller_opened_is_accepted() {
    let Some(path) = provisioned(13) else { return };
    // SAFETY: the pinned nvJitLink wheel that `cargo xtask test` installed.
    let library = unsafe { nvjitlink_sys::libloading::Library::new(&path) }.unwrap();
    // SAFETY: as above.
    let lib = unsafe { NvJitLink::from_library(library, path.clone()) }.unwrap();
    assert_eq!(lib.version().0, 13);
    assert_eq!(lib.path(), path);

    // libc exports none of nvJitLink's symbols.
    // SAFETY: libc is already loaded; opening it again runs nothing.
    let libc = unsafe { nvjitlink_sys::libloading::Library::new("libc.so.6") }.unwrap();
    // SAFETY: libc exports no nvJitLink symbol, so nothing is called.
    match unsafe { NvJitLink::from_library(libc, "libc.so.6".into()) } {
        Err(LoadError::MissingSymbol { missing, .. }) => {
            assert_eq!(missing.symbol, "nvJitLinkVersion")
        }
        other => panic!("expected MissingSymbol, got {other:?}"),
    }
}
