//! NVVM IR through libNVVM: modules added in order, libdevice added
//! lazily, the program verified before it is compiled (libNVVM segfaults
//! on some IR its verifier refuses), and what libNVVM gets wrong silently
//! turned into errors: definitions dropped for the order modules were
//! added in, and functions left unresolved.
//!
//! [`compile`] is the one compile that [`Linker`](crate::Linker) (NVVM IR
//! inputs to LTO-IR, `link.rs`) and `cuda-compile`'s NVVM programs both
//! run.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
/// The libNVVM bindings: [`Nvvm`] loads it, `libdevice_beside` finds its
/// libdevice.
pub use nvvm_sys::{self, Nvvm, libdevice_beside};

use crate::inspect::NvvmIrInfo;
use crate::kind::ObjectKind;
pub use crate::nvvm_program::{NvvmFailure, NvvmOutput};
use crate::nvvm_program::{RawRequest, run};
use crate::object_code::ObjectCode;

mod checks;
mod link;
mod used;

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

/// Verifies and compiles `request` with `lib`, then checks that nothing
/// was dropped or left unresolved: before the compile on the text modules,
/// and after it on PTX output (LTO-IR is opaque). With
/// [`Isolation::Process`](crate::Isolation::Process), libNVVM runs in a
/// worker process, as an isolated link's nvJitLink does: a crash on the
/// input is [`NvvmFailure::Crashed`], and the caller is untouched.
pub fn compile(lib: &Arc<Nvvm>, request: &NvvmRequest<'_>) -> Result<NvvmOutput, NvvmFailure> {
    // LTO-IR keeps a kernel only where `@llvm.used` names it.
    let marked;
    let request = &match request.options.iter().any(|o| o == "-gen-lto") {
        true => {
            marked = kernels_marked_used(request.modules);
            NvvmRequest {
                modules: &marked,
                ..*request
            }
        }
        false => *request,
    };
    let infos = checks::module_infos(request.modules)?;
    checks::check_order(&infos, request)?;
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
        checks::check_ptx(&output.code, &infos, request)?;
    }
    Ok(output)
}

/// `modules` with every text module's kernels in `@llvm.used`
/// ([`used`]); the others as they are.
fn kernels_marked_used(modules: &[ObjectCode]) -> Vec<ObjectCode> {
    modules
        .iter()
        .map(|module| {
            let marked = module
                .nvvm_ir()
                .filter(|info| info.form == crate::inspect::NvvmIrForm::Text)
                .and_then(|info| {
                    let text = std::str::from_utf8(module.as_bytes()).ok()?;
                    used::with_kernels_used(text, info)
                })
                .and_then(|text| ObjectCode::from_nvvm_ir(text.into_bytes(), module.name()).ok());
            marked.unwrap_or_else(|| module.clone())
        })
        .collect()
}

/// What every key of an NVVM compile holds of how its modules are
/// prepared: outputs made before kernels were marked used (and lacked
/// them) are never served for outputs made after.
pub const PREPARATION: &str = "kernels marked used (1)";

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
            // nvvmVersion says 2.0 in CUDA 12 and 13 alike: the path
            // tells the release.
            library: format!("the libNVVM at {}", lib.path().display()),
            log,
        },
        false => NvvmFailure::Verify { modules, log },
    }
}

/// Whether a program needs libdevice, from what its modules show; the
/// needs of several modules combine with `max`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Default)]
pub enum LibdeviceNeed {
    /// No module calls an `__nv_*` function.
    #[default]
    NotNeeded,
    /// A bitcode module may call one (its calls are not read here):
    /// linked when found, and a call left unresolved is named after the
    /// compile.
    IfFound,
    /// A text module calls one: a compile without libdevice fails.
    Required,
}

impl LibdeviceNeed {
    /// The need of one module (nothing for what is not NVVM IR).
    pub fn of(module: &ObjectCode) -> Self {
        match (module.kind(), calls_libdevice(module)) {
            (_, Some(true)) => LibdeviceNeed::Required,
            (ObjectKind::NvvmIr, None) => LibdeviceNeed::IfFound,
            _ => LibdeviceNeed::NotNeeded,
        }
    }

    /// The need of a program of `modules`.
    pub fn of_all<'a>(modules: impl IntoIterator<Item = &'a ObjectCode>) -> Self {
        modules
            .into_iter()
            .map(LibdeviceNeed::of)
            .max()
            .unwrap_or_default()
    }
}

/// Whether an NVVM IR module calls libdevice: for text, whether it
/// declares an `__nv_*` function; `None` for bitcode, whose calls are not
/// read here (and for anything that is not NVVM IR).
pub fn calls_libdevice(module: &ObjectCode) -> Option<bool> {
    let ir = module.nvvm_ir()?;
    (ir.form == crate::inspect::NvvmIrForm::Text)
        .then(|| ir.declared.iter().any(|name| name.starts_with("__nv_")))
}

/// The bytes of the libdevice at `path` and their SHA-256 in hex: read
/// and hashed once per process for each version of the file (0.5 MB, which
/// a repeated compile would read and hash each time), a version being its
/// size, modification time and inode, looked up with one `stat` a call so
/// that a file replaced in place is read again.
pub fn read_libdevice(path: &std::path::Path) -> std::io::Result<(Bytes, String)> {
    /// A file's size, modification time and inode.
    type Version = (u64, Option<std::time::SystemTime>, u64);
    /// Each file's version as read, its bytes and their digest.
    type Read = HashMap<PathBuf, (Version, Bytes, String)>;
    static READ: OnceLock<Mutex<Read>> = OnceLock::new();
    let version = |metadata: &std::fs::Metadata| -> Version {
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(metadata);
        #[cfg(not(unix))]
        let inode = 0;
        (metadata.len(), metadata.modified().ok(), inode)
    };
    let now = version(&std::fs::metadata(path)?);
    let read = READ.get_or_init(Mutex::default);
    if let Some((seen, bytes, digest)) = read.lock().unwrap_or_else(|p| p.into_inner()).get(path)
        && *seen == now
    {
        return Ok((bytes.clone(), digest.clone()));
    }
    let mut file = std::fs::File::open(path)?;
    let opened = version(&file.metadata()?);
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut file, &mut bytes)?;
    let bytes = Bytes::from(bytes);
    let digest = {
        use sha2::Digest as _;
        let digest = sha2::Sha256::digest(&bytes);
        digest
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    // Kept under the version of the file it read, which the next call's
    // `stat` must match.
    read.lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(path.to_owned(), (opened, bytes.clone(), digest.clone()));
    Ok((bytes, digest))
}
