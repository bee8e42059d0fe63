//! Errors of [`ObjectCode`](crate::ObjectCode) construction and inspection.

use std::fmt;

/// An error and every cause under it, each once: `a: b: c`. The `Debug`
/// form of this crate's errors, so that `main() -> Result<(), Box<dyn
/// Error>>` prints a readable line.
pub struct Report<'a>(pub &'a dyn std::error::Error);

/// The alternate form (`{:#}`) formats each error in it so too: a
/// library search's whole list of places, say.
impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let all = f.alternate();
        let mut next = Some(self.0);
        let mut first = true;
        while let Some(error) = next {
            if !first {
                f.write_str(": ")?;
            }
            match all {
                true => write!(f, "{error:#}")?,
                false => write!(f, "{error}")?,
            }
            first = false;
            next = error.source();
        }
        Ok(())
    }
}

/// Bad input bytes, with the input's name.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name}: {reason}")]
pub struct ObjectError {
    /// The input's name, as given to the constructor.
    pub name: String,
    /// What was wrong.
    pub reason: Reason,
}

/// What was wrong with an input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Reason {
    /// The file could not be read.
    #[error("cannot read file: {message}")]
    Io {
        /// The I/O error's kind, as `std::io` typed it.
        kind: std::io::ErrorKind,
        /// Its message.
        message: String,
    },
    /// No bytes at all.
    #[error("empty file: no device code in 0 bytes")]
    Empty,
    /// More bytes than an input may have
    /// ([`ObjectCode::max_input_bytes`](crate::ObjectCode::max_input_bytes)).
    #[error(
        "{size} bytes, more than the {limit}-byte limit on an input \
         (CUDA_LINK_MAX_INPUT_BYTES raises it)"
    )]
    TooLarge {
        /// The input's size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// CUDA C++ source, which must be compiled before it can be linked.
    #[error(
        "CUDA C++ source, not device code: compile it first, e.g. `nvcc -ptx FILE.cu` (PTX), \
         `nvcc -cubin -arch sm_90 -rdc=true FILE.cu` (cubin) or `nvcc -dc -dlto -arch sm_90 FILE.cu` \
         (LTO-IR in a host object); or in-process with NVRTC: the `cuda-compile` crate, \
         or `cuda-link compile FILE.cu` (`cuda-link link FILE.cu` to link it too)"
    )]
    CudaSource,
    /// The leading bytes match no known kind.
    #[error("unrecognized input: not a cubin, PTX, LTO-IR, fatbin, host object or archive")]
    Unrecognized,
    /// The bytes are of another kind than the constructor expects.
    #[error("expected {expected}, found {found}")]
    KindMismatch {
        /// The constructor's kind.
        expected: &'static str,
        /// What the bytes are.
        found: &'static str,
    },
    /// A structure runs past the end of the data.
    #[error("truncated {what}: needs {needed} bytes at offset {offset:#x}, {available} available")]
    Truncated {
        /// The structure.
        what: &'static str,
        /// Where it starts.
        offset: u64,
        /// Bytes it needs.
        needed: u64,
        /// Bytes there are.
        available: u64,
    },
    /// A field holds a value the format does not allow.
    #[error("malformed {what}: {detail}")]
    Malformed {
        /// The structure.
        what: &'static str,
        /// The offending value.
        detail: String,
    },
    /// An ELF whose machine is CUDA's but whose ABI is not one of the known two.
    #[error("unsupported cubin ABI: EI_OSABI {os_abi:#x}, EI_ABIVERSION {abi_version}")]
    UnsupportedCubinAbi {
        /// EI_OSABI.
        os_abi: u8,
        /// EI_ABIVERSION.
        abi_version: u8,
    },
    /// An ELF that is not EM_CUDA was offered as a cubin.
    #[error("ELF machine {machine} is not EM_CUDA (190): a host ELF, not a cubin")]
    NotEmCuda {
        /// e_machine.
        machine: u16,
    },
    /// A host object without `.nv_fatbin` or `__nv_relfatbin`.
    #[error("host object contains no device code (no .nv_fatbin or __nv_relfatbin section)")]
    NoDeviceCode,
    /// An archive none of whose members carries device code.
    #[error("archive has no member with device code")]
    ArchiveWithoutDeviceCode,
    /// A thin archive, whose members live in other files.
    #[error("thin archives are not supported: their members live in other files")]
    ThinArchive,
    /// Plain LLVM bitcode, which nvJitLink refuses as LTO-IR: NVVM IR,
    /// which libNVVM compiles to LTO-IR (`ObjectCode::from_nvvm_ir`).
    #[error(
        "plain LLVM bitcode is not LTO-IR: it is NVVM IR, which libNVVM compiles \
         (give it as NVVM IR, or compile with NVRTC -dlto or nvcc -dlto)"
    )]
    LlvmBitcode,
    /// PTX text lacking a required directive.
    #[error("PTX has no {0} directive")]
    PtxMissingDirective(&'static str),
    /// PTX that is not text.
    #[error("PTX is not valid UTF-8 text at byte {0}")]
    PtxNotText(usize),
    /// A fatbin payload failed to decompress.
    #[error("cannot decompress fatbin entry {index} ({codec}): {detail}")]
    Decompress {
        /// The entry's index.
        index: usize,
        /// LZ4 or zstd.
        codec: &'static str,
        /// The decoder's message.
        detail: String,
    },
    /// Something inside a container is invalid: a fatbin entry, an embedded
    /// fatbin of a host object, or an archive member.
    #[error("{place}: {reason}")]
    Inside {
        /// Where, e.g. `"fatbin entry 2"` or `"member foo.o"`.
        place: String,
        /// What is wrong there.
        reason: Box<Reason>,
    },
    /// An ELF table declared with entries but placed at offset 0, which
    /// readers take as "no table" and NVIDIA's libraries read as garbage.
    #[error("{table} table has {count} entries at offset 0")]
    TableAtOffsetZero {
        /// `"section header"` or `"program header"`.
        table: &'static str,
        /// The declared count.
        count: u64,
    },
    /// Extended ELF numbering (`PN_XNUM`, `SHN_XINDEX`), which no CUDA
    /// tool writes and NVIDIA's libraries mishandle.
    #[error("extended ELF numbering is not supported: {field}")]
    ExtendedNumbering {
        /// The field that uses it.
        field: &'static str,
    },
    /// A string table whose last byte is not a NUL: a reader of its last
    /// string would run past it.
    #[error("string table in section {section} does not end in a NUL")]
    UnterminatedStringTable {
        /// The section index.
        section: usize,
    },
    /// An `sh_addralign` that is not a power of two within the bound.
    #[error("section {section}: alignment {align:#x} is not a power of two up to {max:#x}")]
    BadAlignment {
        /// The section index.
        section: usize,
        /// The declared alignment.
        align: u64,
        /// The largest accepted.
        max: u64,
    },
    /// A symbol index that names no symbol: in a CUDA section's `sh_info`,
    /// an `.nv.info` record or an `.nv.callgraph` edge.
    #[error("{place}: symbol index {index} is not below the symbol count {count}")]
    BadSymbolIndex {
        /// Where the index is, e.g. `".nv.info record 3"`.
        place: String,
        /// The index.
        index: u64,
        /// Symbols in the table.
        count: u64,
    },
    /// A section's `sh_link` or `sh_info` that should name a section and
    /// names none, or, in a cubin, names a table where CUDA names the
    /// section of a function.
    #[error("section {section}: {field} {target} does not name a fitting section")]
    BadSectionLink {
        /// The section index.
        section: usize,
        /// `"sh_link"` or `"sh_info"`.
        field: &'static str,
        /// The index it holds.
        target: u32,
    },
    /// A section type that is neither ELF's nor CUDA's.
    #[error("section {section}: type {kind:#x} is neither ELF's nor CUDA's")]
    UnknownSectionType {
        /// The section index.
        section: usize,
        /// Its `sh_type`.
        kind: u32,
    },
    /// `.nv.info*` or `.nv.callgraph` records that do not tile their section.
    #[error("{section}: {detail}")]
    BadCudaRecords {
        /// The section's name.
        section: String,
        /// What does not fit.
        detail: String,
    },
    /// A fatbin entry of a kind nobody knows how to check.
    #[error("fatbin entry {index} has unknown kind {kind:#x}")]
    UnknownEntryKind {
        /// The entry's index.
        index: usize,
        /// The raw kind.
        kind: u16,
    },
    /// A fatbin entry other than LTO-IR flagged as encoded LTO-IR: the flag
    /// would skip the checks its kind needs.
    #[error("fatbin entry {index} is {kind} but flagged as encoded LTO-IR")]
    EncodedNonLtoir {
        /// The entry's index.
        index: usize,
        /// Its kind: `"cubin"`, `"ptx"`, ...
        kind: String,
    },
    /// A fatbin entry's options slot outside its header or not
    /// NUL-terminated.
    #[error("fatbin entry {index}: options {detail}")]
    BadEntryOptions {
        /// The entry's index.
        index: usize,
        /// What is wrong.
        detail: String,
    },
    /// A compressed payload that would expand past the decompression
    /// budget: a ratio or a total no real fatbin needs.
    #[error("fatbin entry {index}: {detail}")]
    DecompressionBudget {
        /// The entry's index.
        index: usize,
        /// Which bound, and by how much.
        detail: String,
    },
    /// An archive symbol-table offset that is not the start of a member.
    #[error("archive symbol {symbol}: offset {offset:#x} is not the start of a member")]
    BadArchiveSymbol {
        /// The symbol's name.
        symbol: String,
        /// The offset it gives.
        offset: u64,
    },
    /// An executable cubin offered to a linker.
    #[error(
        "executable (ET_EXEC) cubin cannot be linked: nvJitLink would silently drop its kernels; \
         load it directly, or build relocatable device code (nvcc -rdc=true, ptxas -c)"
    )]
    ExecutableCubin,
}

impl fmt::Debug for ObjectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&Report(self), f)
    }
}

impl ObjectError {
    pub(crate) fn new(name: &str, reason: Reason) -> Self {
        ObjectError {
            name: name.to_owned(),
            reason,
        }
    }
}

impl Reason {
    /// An I/O failure, its kind kept.
    pub(crate) fn io(error: &std::io::Error) -> Self {
        Reason::Io {
            kind: error.kind(),
            message: error.to_string(),
        }
    }

    /// `reason`, found at `place` inside a container.
    pub(crate) fn inside(place: impl Into<String>, reason: Reason) -> Self {
        Reason::Inside {
            place: place.into(),
            reason: Box::new(reason),
        }
    }
}

/// Shorthand for parser results that do not know the input's name yet.
pub(crate) type ParseResult<T> = Result<T, Reason>;

/// `"\n{label}:\n{log}"`, or nothing for an empty log: how `LinkError`
/// and `cuda_module::ModuleError` append a library's log to a message.
/// Shared with `cuda-module`; not part of the API.
#[doc(hidden)]
pub fn log_suffix(label: &str, log: &str) -> String {
    let log = log.trim_end();
    if log.is_empty() {
        String::new()
    } else {
        format!("\n{label}:\n{log}")
    }
}
