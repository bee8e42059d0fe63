//! [`ObjectCode`]: one piece of device code of any kind, with its name.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use serde::Serialize;

use crate::cubin::{self, ElfType};
use crate::error::{ObjectError, ParseResult, Reason};
use crate::inspect::{self, Inspection};
use crate::{fatbin, host, ltoir, ptx};

/// The kinds of device code a linker takes or produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ObjectKind {
    /// A CUDA ELF (`.cubin`).
    Cubin,
    /// PTX assembly text (`.ptx`).
    Ptx,
    /// NVVM IR for link-time optimisation (`.ltoir`).
    Ltoir,
    /// A fat binary of several of the above (`.fatbin`).
    Fatbin,
    /// A host object with embedded device code (`.o`).
    Object,
    /// An `ar` archive of host objects (`.a`, `.lib`).
    Library,
}

impl ObjectKind {
    /// Every kind, in the order of the `ObjectCode::from_*` constructors.
    pub const ALL: [ObjectKind; 6] = [
        ObjectKind::Cubin,
        ObjectKind::Ptx,
        ObjectKind::Ltoir,
        ObjectKind::Fatbin,
        ObjectKind::Object,
        ObjectKind::Library,
    ];

    /// A short lowercase name: `"cubin"`, `"ptx"`, ...
    pub fn name(self) -> &'static str {
        match self {
            ObjectKind::Cubin => "cubin",
            ObjectKind::Ptx => "ptx",
            ObjectKind::Ltoir => "ltoir",
            ObjectKind::Fatbin => "fatbin",
            ObjectKind::Object => "object",
            ObjectKind::Library => "library",
        }
    }

    /// The kind a file extension names, with numba-cuda's table:
    /// `o ptx a lib cubin fatbin ltoir`.
    pub fn from_extension(extension: &str) -> Option<Self> {
        Some(match extension.to_ascii_lowercase().as_str() {
            "cubin" => ObjectKind::Cubin,
            "ptx" => ObjectKind::Ptx,
            "ltoir" => ObjectKind::Ltoir,
            "fatbin" => ObjectKind::Fatbin,
            "o" => ObjectKind::Object,
            "a" | "lib" => ObjectKind::Library,
            _ => return None,
        })
    }

    /// The kind the leading bytes show.
    pub fn detect(data: &[u8]) -> ParseResult<Self> {
        if fatbin::has_magic(data) {
            Ok(ObjectKind::Fatbin)
        } else if data.starts_with(b"\x7fELF") {
            if cubin::is_cubin(data) {
                Ok(ObjectKind::Cubin)
            } else {
                Ok(ObjectKind::Object)
            }
        } else if host::is_archive(data) {
            Ok(ObjectKind::Library)
        } else if ltoir::has_magic(data) {
            Ok(ObjectKind::Ltoir)
        } else if ltoir::is_llvm_bitcode(data) {
            Err(Reason::LlvmBitcode)
        } else if ptx::looks_like_ptx(data) {
            Ok(ObjectKind::Ptx)
        } else {
            Err(Reason::Unrecognized)
        }
    }

    /// Checks that `data` is well-formed as this kind, reading headers only.
    fn validate(self, data: &[u8]) -> ParseResult<()> {
        match self {
            ObjectKind::Cubin => cubin::elf_type(data).map(drop),
            ObjectKind::Ptx => ptx::validate(data),
            ObjectKind::Ltoir => ltoir::inspect(data).map(drop),
            ObjectKind::Fatbin => fatbin::parse(data).map(drop),
            ObjectKind::Object => host::parse_object(data).map(drop),
            ObjectKind::Library => host::validate_archive(data),
        }
    }
}

impl fmt::Display for ObjectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Device code of any kind, with a name for logs and errors.
///
/// Construction checks the headers, so a value of this type is known to be
/// of its kind. Bytes are shared: cloning is cheap and the linker passes
/// them to the backend without copying.
///
/// ```
/// use cuda_link::{ObjectCode, ObjectKind};
///
/// let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n\
///            .visible .entry noop() { ret; }\n";
/// let code = ObjectCode::from_bytes(ptx.as_bytes().to_vec(), "noop.ptx")?;
/// assert_eq!(code.kind(), ObjectKind::Ptx);
/// assert_eq!(code.inspect()?.kernels(), ["noop"]);
/// # Ok::<(), cuda_link::ObjectError>(())
/// ```
#[derive(Clone)]
pub struct ObjectCode {
    name: Arc<str>,
    kind: ObjectKind,
    data: Arc<[u8]>,
}

impl fmt::Debug for ObjectCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectCode")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("size", &self.data.len())
            .finish()
    }
}

impl ObjectCode {
    /// Detects the kind from the leading bytes.
    pub fn from_bytes(
        data: impl Into<Arc<[u8]>>,
        name: impl Into<String>,
    ) -> Result<Self, ObjectError> {
        let data = data.into();
        let name = name.into();
        let kind = ObjectKind::detect(&data).map_err(|reason| ObjectError::new(&name, reason))?;
        Self::with_kind(kind, data, name)
    }

    /// Reads a file; the kind comes from the bytes first, the extension
    /// second (for bytes that match no magic, e.g. PTX with odd headers).
    ///
    /// The file is read into memory rather than mapped: a file truncated
    /// while mapped would fault the process.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, ObjectError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let data =
            std::fs::read(path).map_err(|e| ObjectError::new(&name, Reason::Io(e.to_string())))?;
        let kind = match ObjectKind::detect(&data) {
            Ok(kind) => kind,
            Err(reason) => path
                .extension()
                .and_then(|e| e.to_str())
                .and_then(ObjectKind::from_extension)
                .ok_or_else(|| ObjectError::new(&name, reason))?,
        };
        Self::with_kind(kind, data, name)
    }

    /// Builds an object of a known kind, checking that the bytes are of it.
    pub fn with_kind(
        kind: ObjectKind,
        data: impl Into<Arc<[u8]>>,
        name: impl Into<String>,
    ) -> Result<Self, ObjectError> {
        let data = data.into();
        let name: String = name.into();
        let fail = |reason| ObjectError::new(&name, reason);
        match ObjectKind::detect(&data) {
            // A host ELF offered as a cubin gets the more precise NotEmCuda.
            Ok(ObjectKind::Object) if kind == ObjectKind::Cubin => {}
            Ok(found) if found != kind => {
                return Err(fail(Reason::KindMismatch {
                    expected: kind.name(),
                    found: found.name(),
                }));
            }
            _ => {}
        }
        kind.validate(&data).map_err(fail)?;
        Ok(ObjectCode {
            name: name.into(),
            kind,
            data,
        })
    }

    /// A cubin (relocatable or executable).
    pub fn from_cubin(
        data: impl Into<Arc<[u8]>>,
        name: impl Into<String>,
    ) -> Result<Self, ObjectError> {
        Self::with_kind(ObjectKind::Cubin, data, name)
    }

    /// PTX text; trailing NULs are allowed.
    pub fn from_ptx(
        data: impl Into<Arc<[u8]>>,
        name: impl Into<String>,
    ) -> Result<Self, ObjectError> {
        Self::with_kind(ObjectKind::Ptx, data, name)
    }

    /// LTO-IR from NVRTC or nvcc `-dlto`.
    pub fn from_ltoir(
        data: impl Into<Arc<[u8]>>,
        name: impl Into<String>,
    ) -> Result<Self, ObjectError> {
        Self::with_kind(ObjectKind::Ltoir, data, name)
    }

    /// A fatbin.
    pub fn from_fatbin(
        data: impl Into<Arc<[u8]>>,
        name: impl Into<String>,
    ) -> Result<Self, ObjectError> {
        Self::with_kind(ObjectKind::Fatbin, data, name)
    }

    /// A host object with device code in `.nv_fatbin` or `__nv_relfatbin`.
    pub fn from_object(
        data: impl Into<Arc<[u8]>>,
        name: impl Into<String>,
    ) -> Result<Self, ObjectError> {
        Self::with_kind(ObjectKind::Object, data, name)
    }

    /// An `ar` archive of host objects, such as `libcudadevrt.a`.
    pub fn from_library(
        data: impl Into<Arc<[u8]>>,
        name: impl Into<String>,
    ) -> Result<Self, ObjectError> {
        Self::with_kind(ObjectKind::Library, data, name)
    }

    /// The name given at construction.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The kind.
    pub fn kind(&self) -> ObjectKind {
        self.kind
    }

    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.data
    }

    /// The bytes, shared.
    pub fn shared_bytes(&self) -> Arc<[u8]> {
        Arc::clone(&self.data)
    }

    /// The object under another name.
    pub fn renamed(&self, name: impl Into<String>) -> Self {
        ObjectCode {
            name: name.into().into(),
            ..self.clone()
        }
    }

    /// Refuses inputs a linker would mishandle: an executable cubin, whose
    /// kernels nvJitLink silently drops.
    pub fn check_linkable(&self) -> Result<(), ObjectError> {
        if self.kind == ObjectKind::Cubin && cubin::elf_type(&self.data) == Ok(ElfType::Executable)
        {
            return Err(ObjectError::new(&self.name, Reason::ExecutableCubin));
        }
        Ok(())
    }

    /// Reads everything this object holds, in pure Rust: arches, kernels,
    /// fatbin entries (decompressed to look inside), archive members.
    pub fn inspect(&self) -> Result<Inspection, ObjectError> {
        inspect::inspect(self.kind, &self.data)
            .map(|contents| Inspection {
                name: self.name.to_string(),
                kind: self.kind,
                size: self.data.len(),
                contents,
            })
            .map_err(|reason| ObjectError::new(&self.name, reason))
    }
}
