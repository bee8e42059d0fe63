//! One libNVVM program's calls: create, add the modules, verify, add
//! libdevice lazily, compile, read the output and the log; and how they
//! fail. Run in the caller or in an isolated worker
//! (`linker/isolated/nvvm_wire.rs`); [`crate::nvvm`] checks around them.

use std::ffi::{CString, c_char};

use nvvm_sys::sys::{nvvmProgram, nvvmResult};
use nvvm_sys::{Nvvm, nvvm_call};

/// What a compile made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NvvmOutput {
    /// PTX text, or LTO-IR with `-gen-lto`.
    pub code: Vec<u8>,
    /// libNVVM's log: its warnings, empty when it had none.
    pub log: String,
}

/// Why a compile of NVVM IR failed. Each names the modules.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NvvmFailure {
    /// `nvvmVerifyProgram` refused the modules (a wrong datalayout or
    /// triple, malformed IR, a construct this libNVVM cannot take).
    #[error("libNVVM's verifier refuses {}{}", names(.modules), crate::log_suffix("libNVVM log", .log))]
    Verify {
        /// The modules' names.
        modules: Vec<String>,
        /// libNVVM's log.
        log: String,
    },
    /// IR that this libNVVM's front end for the arch cannot take:
    /// compute_90 and older go through an LLVM 7 front end, which reads
    /// no opaque pointers (`ptr`); compute_100 and newer through a newer
    /// one.
    #[error(
        "{library} cannot take {construct} at {arch}, which it compiles with its LLVM 7 \
         front end (compute_90 and older), in {}: compile for compute_100 or newer, or \
         write typed pointers{}",
        names(.modules),
        crate::log_suffix("libNVVM log", .log)
    )]
    UnsupportedIr {
        /// The modules' names.
        modules: Vec<String>,
        /// What it cannot take, e.g. "opaque pointers (`ptr`)".
        construct: &'static str,
        /// The arch, e.g. `compute_90`.
        arch: String,
        /// libNVVM's version and file.
        library: String,
        /// libNVVM's log.
        log: String,
    },
    /// `nvvmCompileProgram` failed.
    #[error("libNVVM cannot compile {}{}", names(.modules), crate::log_suffix("libNVVM log", .log))]
    Compile {
        /// The modules' names.
        modules: Vec<String>,
        /// libNVVM's log (it writes none for some failures).
        log: String,
    },
    /// Another libNVVM call failed: adding a module (bitcode it cannot
    /// read, an IR version it does not know), or reading the output.
    #[error(
        "{call} failed with {error} for {}{}",
        names(.modules),
        crate::log_suffix("libNVVM log", .log)
    )]
    Call {
        /// The C function.
        call: &'static str,
        /// What it returned.
        error: nvvm_sys::NvvmError,
        /// The modules' names.
        modules: Vec<String>,
        /// libNVVM's log, if it wrote one.
        log: String,
    },
    /// The loaded libNVVM lacks a function.
    #[error(transparent)]
    Missing(#[from] nvvm_sys::SymbolUnavailable),
    /// libNVVM crashed, or was stopped at its deadline or memory limit,
    /// in the worker process that ran it; the caller is untouched.
    #[error("libNVVM {how} compiling {}", names(.modules))]
    Crashed {
        /// The modules' names.
        modules: Vec<String>,
        /// How the worker ended: `was killed by SIGSEGV`, `ran past its
        /// 300s deadline`, ...
        how: String,
    },
    /// An input that is not NVVM IR, or an option or name with a NUL.
    #[error("{name}: {detail}")]
    Input {
        /// The input's name.
        name: String,
        /// What is wrong with it.
        detail: String,
    },
    /// A `linkonce` definition that libNVVM dropped: no module added
    /// before the one defining it used it (the first module added keeps
    /// all of its own), so a later module's call to it is left
    /// unresolved. Add the modules that call a function before the
    /// module that defines it, as numba-cuda does.
    #[error(
        "{function}, defined in {definer}, is dropped by libNVVM: only {user}, added after it, \
         calls it; add the modules that call a function before the one that defines it"
    )]
    DroppedByOrder {
        /// The function.
        function: String,
        /// The module whose definition was dropped.
        definer: String,
        /// The module that calls it.
        user: String,
    },
    /// Functions that are declared and defined nowhere: not by a module,
    /// not by libdevice, and not named as resolved later.
    #[error(
        "{} left unresolved in {}: {}{}",
        if .functions.len() == 1 { "a function is" } else { "functions are" },
        names(.modules),
        .functions.join(", "),
        if .functions.iter().any(|f| f.starts_with("__nv_")) {
            " (`__nv_*` functions are libdevice's: link libdevice)"
        } else {
            " (name the ones another input of a later link defines as resolved later, \
             or compile it as relocatable code)"
        }
    )]
    Unresolved {
        /// The modules' names.
        modules: Vec<String>,
        /// The functions, in order.
        functions: Vec<String>,
    },
}

fn names(modules: &[String]) -> String {
    match modules {
        [one] => one.clone(),
        _ => format!("[{}]", modules.join(", ")),
    }
}

impl NvvmFailure {
    /// libNVVM's log, where the failure has one.
    pub fn log(&self) -> Option<&str> {
        match self {
            NvvmFailure::Verify { log, .. }
            | NvvmFailure::UnsupportedIr { log, .. }
            | NvvmFailure::Compile { log, .. }
            | NvvmFailure::Call { log, .. } => Some(log),
            _ => None,
        }
    }
}

/// What libNVVM itself is given: the modules' names and bytes, libdevice
/// and the options.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawRequest<'a> {
    pub modules: &'a [(&'a str, &'a [u8])],
    pub libdevice: Option<&'a [u8]>,
    pub options: &'a [String],
}

/// libNVVM's calls: create, add the modules, verify, add libdevice
/// lazily, compile, read the output and log. Run in the caller, or in an
/// isolated worker.
pub(crate) fn run(lib: &Nvvm, request: &RawRequest<'_>) -> Result<NvvmOutput, NvvmFailure> {
    let names: Vec<String> = request
        .modules
        .iter()
        .map(|(n, _)| (*n).to_owned())
        .collect();
    let program = Program::new(lib, &names)?;
    for (name, bytes) in request.modules {
        program.add(bytes, name, false)?;
    }
    let options = c_strings(request.options, "an option")?;
    let mut pointers: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
    program.verify(&mut pointers)?;
    if let Some(libdevice) = request.libdevice {
        program.add(libdevice, "libdevice", true)?;
    }
    let ltoir = request.options.iter().any(|o| o == "-gen-lto");
    program.compile(&mut pointers, ltoir)
}

fn c_strings(strings: &[String], what: &str) -> Result<Vec<CString>, NvvmFailure> {
    strings
        .iter()
        .map(|s| {
            CString::new(s.as_str()).map_err(|_| NvvmFailure::Input {
                name: s.replace('\0', "\\0"),
                detail: format!("{what} with a NUL byte"),
            })
        })
        .collect()
}

/// A libNVVM program, destroyed on drop.
struct Program<'a> {
    lib: &'a Nvvm,
    raw: nvvmProgram,
    modules: &'a [String],
}

impl<'a> Program<'a> {
    fn new(lib: &'a Nvvm, modules: &'a [String]) -> Result<Self, NvvmFailure> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: an out-pointer.
        let call = unsafe { nvvm_call!(lib, nvvmCreateProgram(&mut raw)) }?;
        let program = Program { lib, raw, modules };
        match call.result {
            nvvmResult::NVVM_SUCCESS if !raw.is_null() => Ok(program),
            result => Err(program.failed(call.symbol, result)),
        }
    }

    /// Adds a module, or libdevice lazily.
    fn add(&self, bytes: &[u8], name: &str, lazy: bool) -> Result<(), NvvmFailure> {
        let name = CString::new(name.replace('\0', "?")).unwrap_or_default();
        // SAFETY: the live program; `bytes` is live for the call and its
        // length is given (libNVVM copies it); `name` is a C string.
        let call = unsafe {
            match lazy {
                true => nvvm_call!(
                    self.lib,
                    nvvmLazyAddModuleToProgram(
                        self.raw,
                        bytes.as_ptr().cast(),
                        bytes.len(),
                        name.as_ptr()
                    )
                ),
                false => nvvm_call!(
                    self.lib,
                    nvvmAddModuleToProgram(
                        self.raw,
                        bytes.as_ptr().cast(),
                        bytes.len(),
                        name.as_ptr()
                    )
                ),
            }
        }?;
        match call.result {
            nvvmResult::NVVM_SUCCESS => Ok(()),
            result => Err(self.failed(call.symbol, result)),
        }
    }

    fn verify(&self, options: &mut [*const c_char]) -> Result<(), NvvmFailure> {
        let count = i32::try_from(options.len()).unwrap_or(i32::MAX);
        // SAFETY: the live program; `options` holds `count` C strings that
        // outlive the call.
        let call = unsafe {
            nvvm_call!(
                self.lib,
                nvvmVerifyProgram(self.raw, count, options.as_mut_ptr())
            )
        }?;
        match call.result {
            nvvmResult::NVVM_SUCCESS => Ok(()),
            nvvmResult::NVVM_ERROR_INVALID_IR | nvvmResult::NVVM_ERROR_INVALID_OPTION => {
                Err(NvvmFailure::Verify {
                    modules: self.modules.to_vec(),
                    log: self.log(),
                })
            }
            result => Err(self.failed(call.symbol, result)),
        }
    }

    /// Compiles, and reads the output: PTX without its NUL, or LTO-IR
    /// (`ltoir`) as it is.
    fn compile(
        &self,
        options: &mut [*const c_char],
        ltoir: bool,
    ) -> Result<NvvmOutput, NvvmFailure> {
        let count = i32::try_from(options.len()).unwrap_or(i32::MAX);
        // SAFETY: as in `verify`.
        let call = unsafe {
            nvvm_call!(
                self.lib,
                nvvmCompileProgram(self.raw, count, options.as_mut_ptr())
            )
        }?;
        if call.result != nvvmResult::NVVM_SUCCESS {
            return Err(NvvmFailure::Compile {
                modules: self.modules.to_vec(),
                log: self.log(),
            });
        }
        let mut size = 0usize;
        // SAFETY: the compiled program and an out-pointer.
        let sized =
            unsafe { nvvm_call!(self.lib, nvvmGetCompiledResultSize(self.raw, &mut size)) }?;
        if sized.result != nvvmResult::NVVM_SUCCESS {
            return Err(self.failed(sized.symbol, sized.result));
        }
        let mut code = vec![0u8; size];
        // SAFETY: a buffer of the size libNVVM gave for this program.
        let copied = unsafe {
            nvvm_call!(
                self.lib,
                nvvmGetCompiledResult(self.raw, code.as_mut_ptr().cast())
            )
        }?;
        if copied.result != nvvmResult::NVVM_SUCCESS {
            return Err(self.failed(copied.symbol, copied.result));
        }
        // PTX comes NUL-terminated; LTO-IR is binary, and may end in a 0.
        if !ltoir {
            while code.last() == Some(&0) {
                code.pop();
            }
        }
        Ok(NvvmOutput {
            code,
            log: self.log(),
        })
    }

    /// The program's log, without its NUL; empty when there is none.
    fn log(&self) -> String {
        let mut size = 0usize;
        // SAFETY: the live program and an out-pointer.
        let sized = unsafe { nvvm_call!(self.lib, nvvmGetProgramLogSize(self.raw, &mut size)) };
        if !matches!(sized, Ok(call) if call.result == nvvmResult::NVVM_SUCCESS) || size <= 1 {
            return String::new();
        }
        let mut log = vec![0u8; size];
        // SAFETY: a buffer of the size libNVVM gave.
        let copied = unsafe {
            nvvm_call!(
                self.lib,
                nvvmGetProgramLog(self.raw, log.as_mut_ptr().cast())
            )
        };
        if !matches!(copied, Ok(call) if call.result == nvvmResult::NVVM_SUCCESS) {
            return String::new();
        }
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        String::from_utf8_lossy(&log[..end]).trim_end().to_owned()
    }

    fn failed(&self, call: &'static str, result: nvvmResult) -> NvvmFailure {
        NvvmFailure::Call {
            call,
            error: nvvm_sys::NvvmError { result },
            modules: self.modules.to_vec(),
            log: if self.raw.is_null() {
                String::new()
            } else {
                self.log()
            },
        }
    }
}

impl Drop for Program<'_> {
    fn drop(&mut self) {
        if !self.raw.is_null() {
            // SAFETY: `raw` came from nvvmCreateProgram and is destroyed once.
            let _ = unsafe { nvvm_call!(self.lib, nvvmDestroyProgram(&mut self.raw)) };
        }
    }
}
