//! One `nvrtcProgram`, owned: created, compiled, read and destroyed on
//! every path. The only module that calls NVRTC.

use std::ffi::{CStr, CString, c_char};

use nvrtc_sys::{Call, Nvrtc, NvrtcError, nvrtc_call, sys::nvrtcProgram, sys::nvrtcResult};

use crate::error::CompileError;

/// What NVRTC is asked to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// PTX text, for `compute_XX`: JIT-compiled by the driver at load, or
    /// linked.
    Ptx,
    /// LTO-IR (`-dlto`), for link-time optimisation with nvJitLink.
    Ltoir,
    /// A cubin for `sm_XX`: loaded as it is.
    Cubin,
}

impl Target {
    /// `"PTX"`, `"LTO-IR"`, `"cubin"`.
    pub fn name(self) -> &'static str {
        match self {
            Target::Ptx => "PTX",
            Target::Ltoir => "LTO-IR",
            Target::Cubin => "cubin",
        }
    }
}

/// Makes NVRTC's precompiled-header heap large enough for CUDA's and
/// CCCL's headers (CUB's need about 320 MB; NVRTC's default is smaller,
/// and a PCH that does not fit is not made), once per process, before a
/// PCH is made. The heap is address space, used as PCHs are made. A
/// failure leaves NVRTC's own size: compiles then only take longer.
pub(crate) fn reserve_pch_heap(lib: &Nvrtc) {
    const HEAP: usize = 1 << 30;
    // Per NVRTC file loaded (the tests load two majors).
    static RESERVED: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());
    let mut reserved = RESERVED.lock().unwrap_or_else(|p| p.into_inner());
    if reserved.iter().any(|path| path == lib.path()) {
        return;
    }
    reserved.push(lib.path().to_path_buf());
    let mut size = 0usize;
    // SAFETY: an out-pointer, then a plain size. NVRTC refuses a change
    // once a PCH exists (an error, ignored: the default size stays).
    unsafe {
        if lib.nvrtcGetPCHHeapSize(&mut size) == Ok(nvrtcResult::NVRTC_SUCCESS) && size < HEAP {
            let _ = lib.nvrtcSetPCHHeapSize(HEAP);
        }
    }
}

/// A program NVRTC holds; destroyed on drop.
pub(crate) struct RawProgram<'a> {
    lib: &'a Nvrtc,
    raw: nvrtcProgram,
    name: &'a str,
}

impl<'a> RawProgram<'a> {
    /// `nvrtcCreateProgram` with in-memory headers `(include name,
    /// contents)`.
    pub fn create(
        lib: &'a Nvrtc,
        source: &CStr,
        name: &'a str,
        headers: &[(CString, CString)],
    ) -> Result<Self, CompileError> {
        let c_name = c_string(name, "name")?;
        let contents: Vec<*const c_char> = headers.iter().map(|(_, text)| text.as_ptr()).collect();
        let names: Vec<*const c_char> = headers.iter().map(|(name, _)| name.as_ptr()).collect();
        let count = i32::try_from(headers.len()).map_err(|_| CompileError::InvalidOption {
            option: "headers",
            detail: format!("{} headers are more than NVRTC takes", headers.len()),
        })?;
        let mut raw: nvrtcProgram = std::ptr::null_mut();
        // SAFETY: an out-pointer; C strings and two arrays of `count` C
        // strings, all alive for the call (NVRTC copies them).
        let call = unsafe {
            nvrtc_call!(
                lib,
                nvrtcCreateProgram(
                    &mut raw,
                    source.as_ptr(),
                    c_name.as_ptr(),
                    count,
                    contents.as_ptr(),
                    names.as_ptr(),
                )
            )
        }?;
        let program = RawProgram { lib, raw, name };
        if call.result != nvrtcResult::NVRTC_SUCCESS || raw.is_null() {
            return Err(program.failure(call, String::new()));
        }
        Ok(program)
    }

    /// `nvrtcAddNameExpression`: the lowered name is read after compiling.
    pub fn add_name_expression(&self, expression: &str) -> Result<(), CompileError> {
        let c = c_string(expression, "name expression")?;
        // SAFETY: a live program and a C string alive for the call.
        let call = unsafe { nvrtc_call!(self.lib, nvrtcAddNameExpression(self.raw, c.as_ptr())) }?;
        self.check(call)
    }

    /// `nvrtcCompileProgram`; a compile error carries the log.
    pub fn compile(&self, args: &[CString]) -> Result<(), CompileError> {
        let pointers: Vec<*const c_char> = args.iter().map(|arg| arg.as_ptr()).collect();
        let count = i32::try_from(pointers.len()).map_err(|_| CompileError::InvalidOption {
            option: "options",
            detail: format!("{} options are more than NVRTC takes", pointers.len()),
        })?;
        // SAFETY: a live program and `count` C strings alive for the call.
        let call = unsafe {
            nvrtc_call!(
                self.lib,
                nvrtcCompileProgram(self.raw, count, pointers.as_ptr())
            )
        }?;
        match call.result {
            nvrtcResult::NVRTC_SUCCESS => Ok(()),
            nvrtcResult::NVRTC_ERROR_COMPILATION => Err(CompileError::Compilation {
                program: self.name.to_owned(),
                log: without_pch_notes(&self.log()),
            }),
            nvrtcResult::NVRTC_ERROR_INVALID_OPTION => {
                let log = self.log();
                match unknown_option(&log) {
                    Some(option) => Err(CompileError::UnknownOption {
                        option: option.to_owned(),
                        nvrtc: self.lib.version(),
                        program: self.name.to_owned(),
                    }),
                    None => Err(self.failure(call, log)),
                }
            }
            _ => Err(self.failure(call, self.log())),
        }
    }

    /// The program's log: warnings after a successful compile.
    pub fn log(&self) -> String {
        let mut size = 0usize;
        // SAFETY: a live program and an out-pointer.
        let sized = unsafe { self.lib.nvrtcGetProgramLogSize(self.raw, &mut size) };
        if sized != Ok(nvrtcResult::NVRTC_SUCCESS) || size == 0 {
            return String::new();
        }
        let mut log = vec![0u8; size];
        // SAFETY: a buffer of the size NVRTC reported.
        let read = unsafe {
            self.lib
                .nvrtcGetProgramLog(self.raw, log.as_mut_ptr().cast())
        };
        if read != Ok(nvrtcResult::NVRTC_SUCCESS) {
            return String::new();
        }
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        String::from_utf8_lossy(&log[..end]).trim_end().to_owned()
    }

    /// The compiled output of `target`.
    pub fn output(&self, target: Target) -> Result<Vec<u8>, CompileError> {
        let mut size = 0usize;
        // SAFETY: a compiled program and an out-pointer.
        let sized = unsafe {
            match target {
                Target::Ptx => nvrtc_call!(self.lib, nvrtcGetPTXSize(self.raw, &mut size)),
                Target::Ltoir => nvrtc_call!(self.lib, nvrtcGetLTOIRSize(self.raw, &mut size)),
                Target::Cubin => nvrtc_call!(self.lib, nvrtcGetCUBINSize(self.raw, &mut size)),
            }
        }?;
        self.check(sized)?;
        let mut bytes = vec![0u8; size];
        let out = bytes.as_mut_ptr().cast::<c_char>();
        // SAFETY: a buffer of exactly the size NVRTC reported.
        let copied = unsafe {
            match target {
                Target::Ptx => nvrtc_call!(self.lib, nvrtcGetPTX(self.raw, out)),
                Target::Ltoir => nvrtc_call!(self.lib, nvrtcGetLTOIR(self.raw, out)),
                Target::Cubin => nvrtc_call!(self.lib, nvrtcGetCUBIN(self.raw, out)),
            }
        }?;
        self.check(copied)?;
        Ok(bytes)
    }

    /// The lowered name of a name expression added before compiling.
    pub fn lowered_name(&self, expression: &str) -> Result<String, CompileError> {
        let c = c_string(expression, "name expression")?;
        let mut lowered: *const c_char = std::ptr::null();
        // SAFETY: a compiled program, a C string and an out-pointer.
        let call = unsafe {
            nvrtc_call!(
                self.lib,
                nvrtcGetLoweredName(self.raw, c.as_ptr(), &mut lowered)
            )
        }?;
        if call.result != nvrtcResult::NVRTC_SUCCESS || lowered.is_null() {
            return Err(CompileError::NameExpression {
                program: self.name.to_owned(),
                expression: expression.to_owned(),
            });
        }
        // SAFETY: NVRTC returned a NUL-terminated string it owns until the
        // program is destroyed; it is copied at once.
        Ok(unsafe { CStr::from_ptr(lowered) }
            .to_string_lossy()
            .into_owned())
    }

    fn check(&self, call: Call) -> Result<(), CompileError> {
        match call.result {
            nvrtcResult::NVRTC_SUCCESS => Ok(()),
            _ => Err(self.failure(call, self.log())),
        }
    }

    fn failure(&self, call: Call, log: String) -> CompileError {
        CompileError::Nvrtc {
            call: call.symbol,
            error: NvrtcError {
                result: call.result,
            },
            program: self.name.to_owned(),
            log,
        }
    }
}

/// The option of NVRTC's "unrecognized option X found" (12.x and 13.x
/// write it so).
fn unknown_option(log: &str) -> Option<&str> {
    let rest = log.split_once("unrecognized option ")?.1;
    let option = rest.split_once(" found").map_or(rest, |(option, _)| option);
    Some(option.trim()).filter(|option| !option.is_empty())
}

impl Drop for RawProgram<'_> {
    fn drop(&mut self) {
        if !self.raw.is_null() {
            // SAFETY: a program from nvrtcCreateProgram, destroyed once.
            let _ = unsafe { self.lib.nvrtcDestroyProgram(&mut self.raw) };
        }
    }
}

/// `text` as a C string; a NUL inside is an invalid `option`.
pub(crate) fn c_string(text: &str, option: &'static str) -> Result<CString, CompileError> {
    CString::new(text).map_err(|_| CompileError::InvalidOption {
        option,
        detail: format!("{text:?} holds a NUL byte"),
    })
}

/// The real archs `lib` compiles for (`nvrtcGetSupportedArchs`), oldest
/// first.
pub(crate) fn supported_archs(lib: &Nvrtc) -> Result<Vec<u32>, CompileError> {
    let failure = |call: Call| CompileError::Nvrtc {
        call: call.symbol,
        error: NvrtcError {
            result: call.result,
        },
        program: "(supported archs)".to_owned(),
        log: String::new(),
    };
    let mut count = 0i32;
    // SAFETY: an out-pointer.
    let counted = unsafe { nvrtc_call!(lib, nvrtcGetNumSupportedArchs(&mut count)) }?;
    if counted.result != nvrtcResult::NVRTC_SUCCESS {
        return Err(failure(counted));
    }
    let mut archs = vec![0i32; usize::try_from(count).unwrap_or(0)];
    // SAFETY: a buffer of the `count` entries NVRTC reported.
    let listed = unsafe { nvrtc_call!(lib, nvrtcGetSupportedArchs(archs.as_mut_ptr())) }?;
    if listed.result != nvrtcResult::NVRTC_SUCCESS {
        return Err(failure(listed));
    }
    let mut archs: Vec<u32> = archs
        .into_iter()
        .filter_map(|a| u32::try_from(a).ok())
        .collect();
    archs.sort_unstable();
    archs.dedup();
    Ok(archs)
}
/// `log` without NVRTC's notes on its precompiled headers (#629-D,
/// #630-D and the like: a header file that could not be saved or used),
/// each with the lines it quotes, the blank lines after it and the remark
/// on suppressing warnings that follows the first. They say how fast
/// NVRTC compiled, not what is wrong, and open every error log of a build
/// that uses them. NVRTC writes them located (`k.cu(1): warning #629-D`)
/// or not (`Warning #629-D`).
pub(crate) fn without_pch_notes(log: &str) -> String {
    let mut kept = String::with_capacity(log.len());
    let mut after_note = false;
    for line in log.split_inclusive('\n') {
        let lower = line.to_ascii_lowercase();
        let is_note = lower.contains("warning #")
            && (line.contains("#629-D")
                || line.contains("#630-D")
                || lower.contains("precompiled header"));
        if is_note {
            after_note = true;
            continue;
        }
        // A diagnostic's quoted source and caret lines follow it, up to
        // the next diagnostic.
        let trimmed = line.trim();
        if after_note
            && (trimmed.is_empty()
                || line.starts_with([' ', '\t'])
                || trimmed.starts_with("Remark: The warnings can be suppressed"))
        {
            continue;
        }
        after_note = false;
        kept.push_str(line);
    }
    kept
}

#[cfg(test)]
mod tests {
    #[test]
    fn precompiled_header_notes_leave_the_log() {
        let log = "k.cu(1): warning #629-D: the precompiled header file \"a.pch\" was not \
                   created\n  #include <cuda_fp16.h>\n  ^\n\n\
                   k.cu(3): error: identifier \"x\" is undefined\n  x();\n  ^\n\n\
                   1 error detected in the compilation of \"k.cu\".\n";
        let kept = super::without_pch_notes(log);
        assert!(kept.starts_with("k.cu(3): error"), "{kept}");
        assert!(kept.contains("x();") && !kept.contains("629"), "{kept}");
        // Unlocated, as NVRTC 13 writes them when a PCH does not fit,
        // with the remark after the first.
        let log = "Warning #629-D: the command line options do not match those used when \
                   precompiled header file \"/o/a.pch\" was created\n\n\
                   Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n\n\
                   Warning #630-D: the initial sequence of preprocessing directives is not \
                   compatible with those of precompiled header file \"/o/b.pch\"\n\n\
                   k.cu(367): error: identifier \"cudaMemset\" is undefined\n  L(2)\n  ^\n\n\
                   1 error detected in the compilation of \"k.cu\".\n";
        let kept = super::without_pch_notes(log);
        assert!(kept.starts_with("k.cu(367): error"), "{kept}");
        assert!(kept.contains("1 error detected"), "{kept}");
        let plain = "k.cu(2): warning #177-D: variable \"v\" was declared\n  int v;\n";
        assert_eq!(super::without_pch_notes(plain), plain);
    }
}
