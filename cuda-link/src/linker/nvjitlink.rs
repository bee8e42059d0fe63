//! The nvJitLink backend.

use std::ffi::{CString, c_char};

use nvjitlink_sys::{
    Call, NvJitLink, NvJitLinkError, nvjitlink_call,
    sys::{nvJitLinkHandle, nvJitLinkInputType, nvJitLinkResult},
};

use super::{LinkError, LiveHandle, Logs, OutputKind, c_input_name, c_strings, log_text};
use crate::kind::ObjectKind;
use crate::object_code::ObjectCode;

/// Owns an nvJitLink handle; destroys it on every path.
struct Handle<'a> {
    lib: &'a NvJitLink,
    raw: nvJitLinkHandle,
    _live: LiveHandle,
}

impl<'a> Handle<'a> {
    fn new(lib: &'a NvJitLink, raw: nvJitLinkHandle) -> Self {
        Handle {
            lib,
            raw,
            _live: LiveHandle::new(),
        }
    }
}

impl Drop for Handle<'_> {
    fn drop(&mut self) {
        // SAFETY: `raw` came from nvJitLinkCreate and is destroyed once. The
        // result is ignored: nothing useful can be done on failure here.
        let _ = unsafe { self.lib.nvJitLinkDestroy(&mut self.raw) };
    }
}

fn input_type(kind: ObjectKind) -> nvJitLinkInputType {
    match kind {
        ObjectKind::Cubin => nvJitLinkInputType::NVJITLINK_INPUT_CUBIN,
        ObjectKind::Ptx => nvJitLinkInputType::NVJITLINK_INPUT_PTX,
        ObjectKind::Ltoir => nvJitLinkInputType::NVJITLINK_INPUT_LTOIR,
        ObjectKind::Fatbin => nvJitLinkInputType::NVJITLINK_INPUT_FATBIN,
        ObjectKind::Object => nvJitLinkInputType::NVJITLINK_INPUT_OBJECT,
        ObjectKind::Archive => nvJitLinkInputType::NVJITLINK_INPUT_LIBRARY,
        // Compiled to LTO-IR before a link (`nvvm::link`); never given.
        ObjectKind::NvvmIr => nvJitLinkInputType::NVJITLINK_INPUT_LTOIR,
    }
}

/// Reads a log through its size and copy functions.
fn read_log(
    size: impl FnOnce(&mut usize) -> Result<nvJitLinkResult, nvjitlink_sys::SymbolUnavailable>,
    copy: impl FnOnce(*mut c_char) -> Result<nvJitLinkResult, nvjitlink_sys::SymbolUnavailable>,
) -> String {
    let mut len = 0usize;
    if size(&mut len) != Ok(nvJitLinkResult::NVJITLINK_SUCCESS) || len == 0 {
        return String::new();
    }
    let mut buffer = vec![0u8; len];
    if copy(buffer.as_mut_ptr().cast()) != Ok(nvJitLinkResult::NVJITLINK_SUCCESS) {
        return String::new();
    }
    log_text(&buffer)
}

impl Handle<'_> {
    fn logs(&self) -> Logs {
        let (lib, raw) = (self.lib, self.raw);
        let info = read_log(
            // SAFETY: a live handle and an out-pointer.
            |len| unsafe { lib.nvJitLinkGetInfoLogSize(raw, len) },
            // SAFETY: a buffer of exactly the size nvJitLink reported.
            |buf| unsafe { lib.nvJitLinkGetInfoLog(raw, buf) },
        );
        let error = read_log(
            // SAFETY: a live handle and an out-pointer.
            |len| unsafe { lib.nvJitLinkGetErrorLogSize(raw, len) },
            // SAFETY: a buffer of exactly the size nvJitLink reported.
            |buf| unsafe { lib.nvJitLinkGetErrorLog(raw, buf) },
        );
        (info, error)
    }

    fn fail(&self, call: Call, input: Option<&str>, inputs: &[ObjectCode]) -> LinkError {
        let (info_log, error_log) = self.logs();
        LinkError::NvJitLink {
            call: call.symbol,
            error: NvJitLinkError {
                result: call.result,
            },
            input: input.map(str::to_owned),
            inputs: inputs.iter().map(|i| i.name().to_owned()).collect(),
            error_log,
            info_log,
        }
    }
}

pub(super) fn link(
    lib: &NvJitLink,
    flags: &[String],
    inputs: &[ObjectCode],
    output: OutputKind,
) -> Result<(Vec<u8>, Logs), LinkError> {
    let created_phase = phase!("create");
    let flags = c_strings(flags, "flags")?;
    let mut flag_ptrs: Vec<*const c_char> = flags.iter().map(|f| f.as_ptr()).collect();
    let names: Vec<CString> = inputs.iter().map(c_input_name).collect();

    let mut raw: nvJitLinkHandle = std::ptr::null_mut();
    // SAFETY: an out-pointer and `flag_ptrs.len()` valid C strings.
    let created = unsafe {
        nvjitlink_call!(
            lib,
            nvJitLinkCreate(&mut raw, flag_ptrs.len() as u32, flag_ptrs.as_mut_ptr())
        )
    }?;
    if created.result != nvJitLinkResult::NVJITLINK_SUCCESS {
        if !raw.is_null() {
            // Some results (bad options) come with a handle and a log.
            return Err(Handle::new(lib, raw).fail(created, None, inputs));
        }
        return Err(LinkError::NvJitLink {
            call: created.symbol,
            error: NvJitLinkError {
                result: created.result,
            },
            input: None,
            inputs: inputs.iter().map(|i| i.name().to_owned()).collect(),
            error_log: String::new(),
            info_log: String::new(),
        });
    }
    let handle = Handle::new(lib, raw);
    drop(created_phase);

    let added_phase = phase!("add_data");
    for (input, name) in inputs.iter().zip(&names) {
        let bytes = input.image().as_bytes();
        // SAFETY: a live handle; a pointer and size of a live buffer whose
        // ELF tables and ranges lie inside it and whose PTX ends in a NUL
        // (what nvJitLink reads without checking), and a C-string name,
        // both alive for the call; nvJitLink copies what it keeps. What it
        // makes of the contents is its own: see `Isolation`.
        let added = unsafe {
            nvjitlink_call!(
                lib,
                nvJitLinkAddData(
                    raw,
                    input_type(input.kind()),
                    bytes.as_ptr().cast(),
                    bytes.len(),
                    name.as_ptr(),
                )
            )
        }?;
        if added.result != nvJitLinkResult::NVJITLINK_SUCCESS {
            return Err(handle.fail(added, Some(input.name()), inputs));
        }
    }
    drop(added_phase);
    let completed_phase = phase!("complete");
    // SAFETY: a live handle.
    let completed = unsafe { nvjitlink_call!(lib, nvJitLinkComplete(raw)) }?;
    if completed.result != nvJitLinkResult::NVJITLINK_SUCCESS {
        return Err(handle.fail(completed, None, inputs));
    }

    drop(completed_phase);
    let _phase = phase!("copy_output");
    let mut size = 0usize;
    // SAFETY: a live, completed handle and an out-pointer.
    let sized = unsafe {
        match output {
            OutputKind::Cubin => nvjitlink_call!(lib, nvJitLinkGetLinkedCubinSize(raw, &mut size)),
            OutputKind::Ptx => nvjitlink_call!(lib, nvJitLinkGetLinkedPtxSize(raw, &mut size)),
            OutputKind::Ltoir => nvjitlink_call!(lib, nvJitLinkGetLinkedLTOIRSize(raw, &mut size)),
        }
    }?;
    if sized.result != nvJitLinkResult::NVJITLINK_SUCCESS {
        return Err(handle.fail(sized, None, inputs));
    }
    let mut bytes = vec![0u8; size];
    let out = bytes.as_mut_ptr();
    // SAFETY: a buffer of exactly the size nvJitLink reported.
    let copied = unsafe {
        match output {
            OutputKind::Cubin => nvjitlink_call!(lib, nvJitLinkGetLinkedCubin(raw, out.cast())),
            OutputKind::Ptx => nvjitlink_call!(lib, nvJitLinkGetLinkedPtx(raw, out.cast())),
            OutputKind::Ltoir => nvjitlink_call!(lib, nvJitLinkGetLinkedLTOIR(raw, out.cast())),
        }
    }?;
    if copied.result != nvJitLinkResult::NVJITLINK_SUCCESS {
        return Err(handle.fail(copied, None, inputs));
    }
    Ok((bytes, handle.logs()))
}
