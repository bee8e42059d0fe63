//! What libNVVM itself does with the real 12 and 13 wheels that `cargo
//! xtask test` provisions: NVVM IR compiled to PTX at compute_90 and
//! compute_100, a host's datalayout refused by the verifier, and
//! libdevice found beside each.

mod common;

use common::provisioned;
use nvvm_sys::{Nvvm, NvvmError, nvvm_call, sys::nvvmResult};

const DATALAYOUT: &str = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-\
                          i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-\
                          v128:128:128-n16:32:64";

/// A kernel storing 1.0, as numba-cuda writes NVVM IR (typed pointers).
fn module(datalayout: &str) -> String {
    format!(
        "target datalayout = \"{datalayout}\"\n\
         target triple = \"nvptx64-nvidia-cuda\"\n\
         define void @one(float* %out) {{\n  store float 1.0, float* %out\n  ret void\n}}\n\
         !nvvm.annotations = !{{!0}}\n\
         !0 = !{{void (float*)* @one, !\"kernel\", i32 1}}\n\
         !nvvmir.version = !{{!1}}\n!1 = !{{i32 2, i32 0}}\n"
    )
}

/// Verifies `ir` at `arch`, then compiles it if it verified: each step's
/// result, and the PTX or the log.
fn compile(lib: &Nvvm, ir: &str, arch: &std::ffi::CStr) -> (nvvmResult, nvvmResult, String) {
    let mut program = std::ptr::null_mut();
    // SAFETY: an out-pointer.
    let created = unsafe { nvvm_call!(lib, nvvmCreateProgram(&mut program)) }.unwrap();
    NvvmError::check(created.result).unwrap();
    // SAFETY: the live program, the module's bytes and size, a C string.
    let added = unsafe {
        lib.nvvmAddModuleToProgram(program, ir.as_ptr().cast(), ir.len(), c"one.ll".as_ptr())
    }
    .unwrap();
    NvvmError::check(added).unwrap();
    let mut options = [arch.as_ptr()];
    // SAFETY: the live program and one option.
    let verified = unsafe { lib.nvvmVerifyProgram(program, 1, options.as_mut_ptr()) }.unwrap();
    let (compiled, text) = match verified {
        nvvmResult::NVVM_SUCCESS => {
            // SAFETY: as above; the program verified.
            let compiled =
                unsafe { lib.nvvmCompileProgram(program, 1, options.as_mut_ptr()) }.unwrap();
            let mut size = 0;
            // SAFETY: the compiled program and an out-pointer.
            unsafe { lib.nvvmGetCompiledResultSize(program, &mut size) }.unwrap();
            let mut ptx = vec![0u8; size];
            // SAFETY: a buffer of the size libNVVM gave.
            unsafe { lib.nvvmGetCompiledResult(program, ptx.as_mut_ptr().cast()) }.unwrap();
            (compiled, String::from_utf8_lossy(&ptx).into_owned())
        }
        _ => {
            let mut size = 0;
            // SAFETY: the live program and an out-pointer.
            unsafe { lib.nvvmGetProgramLogSize(program, &mut size) }.unwrap();
            let mut log = vec![0u8; size];
            // SAFETY: a buffer of the size libNVVM gave.
            unsafe { lib.nvvmGetProgramLog(program, log.as_mut_ptr().cast()) }.unwrap();
            (verified, String::from_utf8_lossy(&log).into_owned())
        }
    };
    // SAFETY: the program, destroyed once.
    unsafe { lib.nvvmDestroyProgram(&mut program) }.unwrap();
    (verified, compiled, text)
}

fn check_release(release: u32) {
    let Some(path) = provisioned(release) else {
        return;
    };
    // SAFETY: the pinned libNVVM wheel that `cargo xtask test` installed.
    let lib = unsafe { Nvvm::open(&path) }.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(lib.version(), (2, 0), "CUDA {release}: {lib:?}");
    for arch in [c"-arch=compute_90", c"-arch=compute_100"] {
        let (verified, compiled, ptx) = compile(&lib, &module(DATALAYOUT), arch);
        assert_eq!(
            (verified, compiled),
            (nvvmResult::NVVM_SUCCESS, nvvmResult::NVVM_SUCCESS)
        );
        assert!(
            ptx.contains(".entry one"),
            "CUDA {release}, {arch:?}:\n{ptx}"
        );
    }
    // The verifier refuses a host's datalayout, with a log that says why.
    let x86 = "e-m:e-i64:64-f80:128-n8:16:32:64-S128";
    let (verified, _, log) = compile(&lib, &module(x86), c"-arch=compute_90");
    assert_eq!(
        verified,
        nvvmResult::NVVM_ERROR_INVALID_IR,
        "CUDA {release}: {log}"
    );
    assert!(log.contains("DataLayoutError"), "CUDA {release}: {log}");
    let libdevice = nvvm_sys::libdevice_beside(&path);
    assert!(
        libdevice.as_deref().is_some_and(std::path::Path::is_file),
        "CUDA {release}: libdevice beside {}",
        path.display()
    );
}

#[test]
fn nvvm_12_compiles_verifies_and_has_libdevice() {
    check_release(12);
}

#[test]
fn nvvm_13_compiles_verifies_and_has_libdevice() {
    check_release(13);
}
