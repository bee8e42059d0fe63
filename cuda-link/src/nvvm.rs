//! NVVM IR through libNVVM: modules added in order, libdevice added
//! lazily, the program verified before it is compiled (libNVVM segfaults
//! on some IR its verifier refuses), and what libNVVM gets wrong silently
//! turned into errors: definitions dropped for the order modules were
//! added in, and functions left unresolved.
//!
//! [`compile`] is the one compile that [`Linker`](crate::Linker) (NVVM IR
//! inputs to LTO-IR) and `cuda-compile`'s NVVM programs both run.

use std::collections::{HashMap, HashSet};
use std::ffi::{CString, c_char};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;

use nvvm_sys::nvvm_call;
use nvvm_sys::sys::{nvvmProgram, nvvmResult};
/// The libNVVM bindings: [`Nvvm`] loads it, `libdevice_beside` finds its
/// libdevice.
pub use nvvm_sys::{self, Nvvm, libdevice_beside};

use crate::inspect::NvvmIrInfo;
use crate::kind::ObjectKind;
use crate::object_code::ObjectCode;

/// Functions a GPU program calls that no module defines and nothing links
/// in: the driver resolves them when it loads the code.
const SYSTEM_FUNCTIONS: [&str; 4] = ["vprintf", "malloc", "free", "__assertfail"];

/// What one compile takes.
#[derive(Debug, Clone, Copy)]
pub struct NvvmRequest<'a> {
    /// The modules, NVVM IR, in the order they are added (it matters:
    /// see [`NvvmFailure::DroppedByOrder`]).
    pub modules: &'a [ObjectCode],
    /// libdevice's bitcode, added lazily after the modules (libNVVM links
    /// only the functions they call), and not verified, as numba-cuda
    /// adds it.
    pub libdevice: Option<&'a [u8]>,
    /// libNVVM's options: `-arch=compute_90`, `-opt=3`, `-gen-lto`, ...
    pub options: &'a [String],
    /// Functions the caller resolves later (in a link with other code):
    /// left unresolved without an error.
    pub resolved_later: &'a [String],
    /// Whether a function that nothing defines is an error
    /// ([`NvvmFailure::Unresolved`]); a link leaves it to nvJitLink,
    /// which knows the other inputs. A dropped definition is an error
    /// either way.
    pub check_unresolved: bool,
    /// Where libNVVM runs: in this process, or in a worker process that
    /// a crash on the input takes down instead.
    pub isolation: crate::Isolation,
}

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
            " (name those another input of the link defines as resolved later)"
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

/// Verifies and compiles `request` with `lib`, then checks that nothing
/// was dropped or left unresolved: before the compile on the text modules,
/// and after it on PTX output (LTO-IR is opaque). With
/// [`Isolation::Process`](crate::Isolation::Process), libNVVM runs in a
/// worker process, as an isolated link's nvJitLink does: a crash on the
/// input is [`NvvmFailure::Crashed`], and the caller is untouched.
pub fn compile(lib: &Arc<Nvvm>, request: &NvvmRequest<'_>) -> Result<NvvmOutput, NvvmFailure> {
    let infos = module_infos(request.modules)?;
    check_order(&infos, request)?;
    let modules: Vec<(&str, &[u8])> = request
        .modules
        .iter()
        .map(|m| (m.name(), m.as_bytes()))
        .collect();
    let raw = RawRequest {
        modules: &modules,
        libdevice: request.libdevice,
        options: request.options,
    };
    let output = match request.isolation {
        #[cfg(unix)]
        crate::Isolation::Process {
            timeout,
            memory_limit,
        } => crate::linker::compile_nvvm_isolated(lib, &raw, timeout, memory_limit),
        _ => run(lib, &raw),
    }
    .map_err(|failure| explained(failure, lib, &infos, request.options))?;
    if !request.options.iter().any(|o| o == "-gen-lto") {
        check_ptx(&output.code, &infos, request)?;
    }
    Ok(output)
}

/// A verifier's refusal of opaque pointers at an arch whose front end is
/// LLVM 7's, said as such.
fn explained(
    failure: NvvmFailure,
    lib: &Nvvm,
    infos: &[(&str, Option<&NvvmIrInfo>)],
    options: &[String],
) -> NvvmFailure {
    let NvvmFailure::Verify { modules, log } = failure else {
        return failure;
    };
    let arch = options
        .iter()
        .rev()
        .find_map(|o| o.strip_prefix("-arch="))
        .unwrap_or("compute_75");
    let number: u32 = arch
        .trim_start_matches("compute_")
        .trim_end_matches(|c: char| c.is_ascii_alphabetic())
        .parse()
        .unwrap_or(0);
    let opaque = infos
        .iter()
        .any(|(_, info)| info.is_some_and(|i| i.opaque_pointers));
    match opaque && number < 100 && log.contains("parse") {
        true => NvvmFailure::UnsupportedIr {
            modules,
            construct: "opaque pointers (`ptr`)",
            arch: arch.to_owned(),
            library: format!(
                "libNVVM {} ({})",
                lib.version_string(),
                lib.path().display()
            ),
            log,
        },
        false => NvvmFailure::Verify { modules, log },
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
    program.compile(&mut pointers)
}

/// The bytes of the libdevice at `path` and their SHA-256 in hex, read
/// once per process (it is 0.5 MB, and a link that needs it would read and hash it
/// each time).
pub fn read_libdevice(path: &std::path::Path) -> std::io::Result<(Bytes, String)> {
    static READ: OnceLock<Mutex<HashMap<PathBuf, (Bytes, String)>>> = OnceLock::new();
    let read = READ.get_or_init(Mutex::default);
    if let Some(found) = read.lock().unwrap_or_else(|p| p.into_inner()).get(path) {
        return Ok(found.clone());
    }
    let bytes = Bytes::from(std::fs::read(path)?);
    let digest = {
        use sha2::Digest as _;
        let digest = sha2::Sha256::digest(&bytes);
        digest
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let found = (bytes, digest);
    read.lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(path.to_owned(), found.clone());
    Ok(found)
}

/// Each module's contents, refusing inputs that are not NVVM IR.
fn module_infos(modules: &[ObjectCode]) -> Result<Vec<(&str, Option<&NvvmIrInfo>)>, NvvmFailure> {
    modules
        .iter()
        .map(|module| match module.kind() {
            ObjectKind::NvvmIr => Ok((module.name(), module.nvvm_ir())),
            other => Err(NvvmFailure::Input {
                name: module.name().to_owned(),
                detail: format!("{other} is not NVVM IR"),
            }),
        })
        .collect()
}

/// Which functions are resolved by something other than the modules.
fn resolved_elsewhere(name: &str, request: &NvvmRequest<'_>) -> bool {
    SYSTEM_FUNCTIONS.contains(&name)
        || name == "__nvvm_reflect"
        || (request.libdevice.is_some() && name.starts_with("__nv_"))
        || request.resolved_later.iter().any(|later| later == name)
}

/// libNVVM's linking of the text modules, simulated: the first module
/// keeps every definition; a later module's `linkonce` definition is kept
/// only if a module before it calls it. A call left with no kept
/// definition is an error; so is one defined nowhere.
fn check_order(
    infos: &[(&str, Option<&NvvmIrInfo>)],
    request: &NvvmRequest<'_>,
) -> Result<(), NvvmFailure> {
    let mut called: HashSet<&str> = HashSet::new();
    let mut kept: HashSet<&str> = HashSet::new();
    let mut dropped: HashMap<&str, &str> = HashMap::new();
    for (index, (name, info)) in infos.iter().enumerate() {
        // Bitcode cannot be read here: the PTX check covers it.
        let Some(info) = info else { return Ok(()) };
        let discardable: HashSet<&str> = info.discardable.iter().collect();
        for function in info.defined.iter() {
            if index == 0 || !discardable.contains(function) || called.contains(function) {
                kept.insert(function);
            } else if !kept.contains(function) {
                dropped.entry(function).or_insert(name);
            }
        }
        called.extend(info.declared.iter());
    }
    let mut unresolved = Vec::new();
    let mut seen = HashSet::new();
    for (user, info) in infos.iter().filter_map(|(n, i)| Some((*n, (*i)?))) {
        for function in info.declared.iter() {
            if kept.contains(function) || resolved_elsewhere(function, request) {
                continue;
            }
            if let Some(definer) = dropped.get(function) {
                return Err(NvvmFailure::DroppedByOrder {
                    function: function.to_owned(),
                    definer: (*definer).to_owned(),
                    user: user.to_owned(),
                });
            }
            if request.check_unresolved && seen.insert(function) {
                unresolved.push(function.to_owned());
            }
        }
    }
    match unresolved.is_empty() {
        true => Ok(()),
        false => Err(NvvmFailure::Unresolved {
            modules: infos.iter().map(|(n, _)| (*n).to_owned()).collect(),
            functions: unresolved,
        }),
    }
}

/// The PTX's `.extern .func` declarations that nothing resolves.
fn check_ptx(
    ptx: &[u8],
    infos: &[(&str, Option<&NvvmIrInfo>)],
    request: &NvvmRequest<'_>,
) -> Result<(), NvvmFailure> {
    let text = String::from_utf8_lossy(ptx);
    let definers: HashMap<&str, &str> = infos
        .iter()
        .filter_map(|(module, info)| Some((*module, (*info)?)))
        .flat_map(|(module, info)| info.defined.iter().map(move |f| (f, module)))
        .collect();
    let unresolved: Vec<String> = extern_functions(&text)
        .filter(|name| !resolved_elsewhere(name, request))
        .filter(|name| request.check_unresolved || definers.contains_key(name))
        .map(str::to_owned)
        .collect();
    if unresolved.is_empty() {
        return Ok(());
    }
    let definer = unresolved.iter().find_map(|function| {
        let module = definers.get(function.as_str())?;
        Some((function.clone(), (*module).to_owned()))
    });
    match definer {
        Some((function, definer)) => Err(NvvmFailure::DroppedByOrder {
            function,
            definer,
            user: "a module added after it".to_owned(),
        }),
        None => Err(NvvmFailure::Unresolved {
            modules: infos.iter().map(|(n, _)| (*n).to_owned()).collect(),
            functions: unresolved,
        }),
    }
}

/// The names of PTX's `.extern .func [(.param ...)] NAME(` lines.
pub(crate) fn extern_functions(ptx: &str) -> impl Iterator<Item = &str> {
    ptx.lines().filter_map(|line| {
        let rest = line.trim_start().strip_prefix(".extern")?.trim_start();
        let rest = rest.strip_prefix(".func")?.trim_start();
        let rest = match rest.strip_prefix('(') {
            Some(returns) => returns.split_once(')')?.1.trim_start(),
            None => rest,
        };
        let end = rest
            .find(|c: char| c == '(' || c == ';' || c.is_whitespace())
            .unwrap_or(rest.len());
        (end > 0).then(|| &rest[..end])
    })
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

    fn compile(&self, options: &mut [*const c_char]) -> Result<NvvmOutput, NvvmFailure> {
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
        // PTX comes NUL-terminated.
        while code.last() == Some(&0) {
            code.pop();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extern_functions_of_ptx() {
        let ptx = ".extern .func  (.param .b32 func_retval0) smooth\n(\n\
                   .extern .func vprintf(.param .b64 a);\n\
                   .visible .func f() {}\n   .extern .func __nv_sinf (";
        assert_eq!(
            extern_functions(ptx).collect::<Vec<_>>(),
            ["smooth", "vprintf", "__nv_sinf"]
        );
    }

    fn ir(name: &str, text: &str) -> ObjectCode {
        ObjectCode::from_nvvm_ir(
            format!("target triple = \"nvptx64-nvidia-cuda\"\n{text}"),
            name,
        )
        .unwrap()
    }

    fn request<'a>(modules: &'a [ObjectCode], libdevice: Option<&'a [u8]>) -> NvvmRequest<'a> {
        NvvmRequest {
            modules,
            libdevice,
            options: &[],
            resolved_later: &[],
            check_unresolved: true,
            isolation: crate::Isolation::InProcess,
        }
    }

    #[test]
    fn a_linkonce_definition_before_its_user_is_dropped() {
        let definer = ir(
            "helper.ll",
            "define linkonce_odr void @h() {\n ret void\n}\n",
        );
        let user = ir(
            "kernel.ll",
            "declare void @h()\ndefine void @k() {\n ret void\n}\n",
        );
        let modules = [user.clone(), definer.clone()];
        let infos = module_infos(&modules).unwrap();
        assert_eq!(check_order(&infos, &request(&modules, None)), Ok(()));
        let modules = [
            ir("first.ll", "define void @x() {\n ret void\n}\n"),
            definer,
            user,
        ];
        let infos = module_infos(&modules).unwrap();
        assert!(matches!(
            check_order(&infos, &request(&modules, None)),
            Err(NvvmFailure::DroppedByOrder { function, definer, user })
                if function == "h" && definer == "helper.ll" && user == "kernel.ll"
        ));
    }

    #[test]
    fn unresolved_functions_and_libdevice() {
        let modules = [ir(
            "k.ll",
            "declare double @__nv_sin(double)\ndeclare void @vprintf()\n",
        )];
        let infos = module_infos(&modules).unwrap();
        let without = check_order(&infos, &request(&modules, None));
        assert!(
            matches!(&without, Err(NvvmFailure::Unresolved { functions, .. }) if functions == &["__nv_sin"]),
            "{without:?}"
        );
        assert!(without.unwrap_err().to_string().contains("link libdevice"));
        assert_eq!(check_order(&infos, &request(&modules, Some(b"BC"))), Ok(()));
        let later = ["__nv_sin".to_owned()];
        let resolved = NvvmRequest {
            resolved_later: &later,
            ..request(&modules, None)
        };
        assert_eq!(check_order(&infos, &resolved), Ok(()));
    }
}
