//! What nvFatbin itself does with the real 12 and 13 wheels that `cargo
//! xtask test` provisions: a fatbin written with each.

mod common;

use common::provisioned;
use nvfatbin_sys::{NvFatbin, NvFatbinError, nvfatbin_call};

/// A fatbin of one PTX entry, written by the nvFatbin of `major`: it
/// starts with the fatbin magic and holds the text.
fn check_major(major: u32) {
    let Some(path) = provisioned(major) else {
        return;
    };
    // SAFETY: the pinned nvFatbin wheel that `cargo xtask test` installed.
    let lib = unsafe { NvFatbin::open(&path) }.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(lib.version().0, major, "{lib:?}");
    let mut handle = std::ptr::null_mut();
    let mut options = [c"-64".as_ptr()];
    // SAFETY: an out-pointer and a one-element option array.
    let created =
        unsafe { nvfatbin_call!(lib, nvFatbinCreate(&mut handle, options.as_mut_ptr(), 1)) }
            .unwrap();
    NvFatbinError::check(created.result).unwrap();
    let ptx = b".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() { ret; }\n\0";
    // SAFETY: a live handle, the text with its size, C strings.
    let added = unsafe {
        lib.nvFatbinAddPTX(
            handle,
            ptx.as_ptr().cast(),
            ptx.len(),
            c"80".as_ptr(),
            c"k".as_ptr(),
            std::ptr::null(),
        )
    }
    .unwrap();
    NvFatbinError::check(added).unwrap();
    let mut size = 0;
    // SAFETY: a live handle and an out-pointer.
    NvFatbinError::check(unsafe { lib.nvFatbinSize(handle, &mut size) }.unwrap()).unwrap();
    let mut fatbin = vec![0u8; size];
    // SAFETY: a buffer of the size nvFatbin reported.
    NvFatbinError::check(unsafe { lib.nvFatbinGet(handle, fatbin.as_mut_ptr().cast()) }.unwrap())
        .unwrap();
    assert_eq!(&fatbin[..4], &0xBA55_ED50u32.to_le_bytes());
    // SAFETY: the handle came from nvFatbinCreate and is destroyed once.
    NvFatbinError::check(unsafe { lib.nvFatbinDestroy(&mut handle) }.unwrap()).unwrap();
}

#[test]
fn nvfatbin_12_writes_a_fatbin() {
    check_major(12);
}

#[test]
fn nvfatbin_13_writes_a_fatbin() {
    check_major(13);
}
