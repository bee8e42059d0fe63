//! [`ObjectKind`]: what a byte string is, told from its leading bytes.

use std::fmt;

use crate::error::{ParseResult, Reason};
use crate::{cubin, fatbin, host, ltoir, nvvm_ir, ptx};

/// The kinds of device code a linker takes or produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
#[non_exhaustive]
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
    /// An `ar` archive of host objects (`.a`, `.lib`), such as
    /// `libcudadevrt.a`: what nvJitLink and the driver call a library.
    Archive,
    /// NVVM IR, text (`.ll`) or bitcode (`.bc`): what libNVVM compiles,
    /// and what numba-cuda and cuda.core's `Program` emit.
    NvvmIr,
}

impl ObjectKind {
    /// Every kind, in the order of the `ObjectCode::from_*` constructors.
    pub const ALL: [ObjectKind; 7] = [
        ObjectKind::Cubin,
        ObjectKind::Ptx,
        ObjectKind::Ltoir,
        ObjectKind::Fatbin,
        ObjectKind::Object,
        ObjectKind::Archive,
        ObjectKind::NvvmIr,
    ];

    /// A short lowercase name: `"cubin"`, `"ptx"`, ...
    pub fn name(self) -> &'static str {
        match self {
            ObjectKind::Cubin => "cubin",
            ObjectKind::Ptx => "ptx",
            ObjectKind::Ltoir => "ltoir",
            ObjectKind::Fatbin => "fatbin",
            ObjectKind::Object => "object",
            ObjectKind::Archive => "archive",
            ObjectKind::NvvmIr => "nvvm-ir",
        }
    }

    /// The kind a file extension names, with numba-cuda's table:
    /// `o ptx a lib cubin fatbin ltoir`, and NVVM IR's `ll` and `bc`.
    pub fn from_extension(extension: &str) -> Option<Self> {
        Some(match extension.to_ascii_lowercase().as_str() {
            "cubin" => ObjectKind::Cubin,
            "ptx" => ObjectKind::Ptx,
            "ltoir" => ObjectKind::Ltoir,
            "fatbin" => ObjectKind::Fatbin,
            "o" => ObjectKind::Object,
            "a" | "lib" => ObjectKind::Archive,
            "ll" | "bc" => ObjectKind::NvvmIr,
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
            Ok(ObjectKind::Archive)
        } else if ltoir::has_magic(data) {
            Ok(ObjectKind::Ltoir)
        } else if nvvm_ir::is_bitcode(data) {
            Ok(ObjectKind::NvvmIr)
        } else if ptx::looks_like_ptx(data) {
            Ok(ObjectKind::Ptx)
        } else if nvvm_ir::looks_like_text(data) {
            Ok(ObjectKind::NvvmIr)
        } else if data.is_empty() {
            Err(Reason::Empty)
        } else if looks_like_cuda_source(data) {
            Err(Reason::CudaSource)
        } else {
            Err(Reason::Unrecognized)
        }
    }
}

/// Whether text reads as CUDA C++: a CUDA keyword, or a preprocessor line
/// first, in the first 64 KiB.
fn looks_like_cuda_source(data: &[u8]) -> bool {
    let head = &data[..data.len().min(64 << 10)];
    let first = head.iter().copied().find(|b| !b.is_ascii_whitespace());
    first == Some(b'#')
        || [&b"__global__"[..], b"__device__", b"__host__", b"#include"]
            .iter()
            .any(|word| memchr::memmem::find(head, word).is_some())
}

impl fmt::Display for ObjectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
