//! What nvJitLink itself does with the real 12 and 13 wheels: a handle
//! for an arch, and the typed error of a symbol 12.x lacks.

mod common;

use common::provisioned;
use nvjitlink_sys::{NvJitLink, sys::nvJitLinkResult};

/// A link handle for `sm_90` is created and destroyed.
fn check_major(major: u32) {
    let Some(path) = provisioned(major) else {
        return;
    };
    // SAFETY: the pinned nvJitLink wheel that `cargo xtask test` installed.
    let lib = unsafe { NvJitLink::open(&path) }.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(lib.version().0, major, "{lib:?}");
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
fn nvjitlink_12_creates_a_handle_for_sm_90() {
    check_major(12);
}

#[test]
fn nvjitlink_13_creates_a_handle_for_sm_90() {
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
