//! What NVRTC itself does with the real 12 and 13 wheels that `cargo xtask
//! test` provisions: a kernel compiled with each, and optional symbols.

mod common;

use common::provisioned;
use nvrtc_sys::{Nvrtc, NvrtcError, nvrtc_call, sys::nvrtcResult};

/// Compiles a kernel to PTX with the NVRTC of `major` (`version` names
/// the wheel: 12, 13, or 130 for 13.0): the builtins load (preloaded
/// beside the library), and the PTX names the kernel.
fn check_major(major: u32, version: u32) {
    let Some(path) = provisioned(version) else {
        return;
    };
    // SAFETY: the pinned NVRTC wheel that `cargo xtask test` installed.
    let lib = unsafe { Nvrtc::open(&path) }.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(lib.version().0, major, "{lib:?}");
    assert_eq!(lib.path(), path);

    let mut program = std::ptr::null_mut();
    let source = c"extern \"C\" __global__ void answer(int *out) { *out = 42; }";
    // SAFETY: an out-pointer, C-string source and name, no headers.
    let created = unsafe {
        nvrtc_call!(
            lib,
            nvrtcCreateProgram(
                &mut program,
                source.as_ptr(),
                c"answer.cu".as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        )
    }
    .unwrap();
    assert_eq!(created.symbol, "nvrtcCreateProgram");
    NvrtcError::check(created.result).unwrap();
    let options = [c"-arch=compute_90".as_ptr()];
    // SAFETY: a live program and a one-element option array.
    let compiled = unsafe { lib.nvrtcCompileProgram(program, 1, options.as_ptr()) }.unwrap();
    assert_eq!(compiled, nvrtcResult::NVRTC_SUCCESS);
    let mut size = 0;
    // SAFETY: a compiled program and an out-pointer.
    NvrtcError::check(unsafe { lib.nvrtcGetPTXSize(program, &mut size) }.unwrap()).unwrap();
    let mut ptx = vec![0u8; size];
    // SAFETY: a buffer of the size NVRTC reported.
    NvrtcError::check(unsafe { lib.nvrtcGetPTX(program, ptx.as_mut_ptr().cast()) }.unwrap())
        .unwrap();
    let text = String::from_utf8_lossy(&ptx);
    assert!(text.contains(".entry answer"), "{text}");
    // SAFETY: the program came from nvrtcCreateProgram and is destroyed once.
    NvrtcError::check(unsafe { lib.nvrtcDestroyProgram(&mut program) }.unwrap()).unwrap();
}

#[test]
fn nvrtc_12_compiles() {
    check_major(12, 12);
}

#[test]
fn nvrtc_13_compiles() {
    check_major(13, 13);
}

/// 13.0.88's `libnvrtc.so.13` has no RPATH: opened by path, without the
/// builtins preloaded beside it, its first compile fails with
/// NVRTC_ERROR_BUILTIN_OPERATION_FAILURE ("failed to open
/// libnvrtc-builtins.so.13.0").
#[test]
fn nvrtc_13_0_without_rpath_compiles() {
    check_major(13, 130);
}

/// Bundled headers arrived in 13.3: 13.5 has them, 12.9 says which symbol
/// is missing instead of crashing.
#[test]
fn optional_symbols_are_typed_errors() {
    for major in [12, 13] {
        let Some(path) = provisioned(major) else {
            return;
        };
        // SAFETY: the pinned wheel.
        let lib = unsafe { Nvrtc::open(&path) }.unwrap();
        let mut info = nvrtc_sys::sys::nvrtcBundledHeadersInfo::default();
        // SAFETY: an out-pointer; no error log asked for.
        let queried = unsafe { lib.nvrtcGetBundledHeadersInfo(&mut info, std::ptr::null_mut()) };
        match (major, queried) {
            (13, Ok(result)) => {
                NvrtcError::check(result).unwrap();
                assert_ne!(info.available, 0);
                assert_eq!(info.cudaVersionMajor, 13);
            }
            (12, Err(missing)) => assert_eq!(missing.symbol, "nvrtcGetBundledHeadersInfo"),
            other => panic!("NVRTC {major}: {other:?}"),
        }
    }
}
