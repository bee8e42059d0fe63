#![doc = include_str!("../README.md")]
// docs.rs shows which feature each item needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
// Link errors carry both logs and the input names by design; they are
// returned once per link, so their size costs nothing that matters.
#![allow(clippy::result_large_err)]

// First: the modules below use its macro. Public for `cuda-module`'s
// steps, not part of the API.
#[doc(hidden)]
#[macro_use]
pub mod phase;
// Whatever the features: `cuda-module` and `cuda-compile` own state a
// fork copies too (`forks::Owner`). Not part of the API.
#[doc(hidden)]
#[macro_use]
pub mod forks;
mod arch;
#[cfg(feature = "cache")]
mod cache;
mod cubin;
mod cuda_sections;
/// The thread's guards that made a context current, shared with
/// `cuda-module`; not part of the API.
#[doc(hidden)]
pub mod current;
mod demangle;
mod elf;
mod error;
#[cfg(feature = "link")]
mod executor;
#[cfg(feature = "link")]
mod facts;
mod fatbin;
#[cfg(feature = "fatbin")]
mod fatbin_writer;
mod host;
pub mod inspect;
mod kind;
#[cfg(feature = "link")]
mod linker;
mod ltoir;
mod names;
#[cfg(feature = "nvvm")]
pub mod nvvm;
mod nvvm_ir;
#[cfg(feature = "nvvm")]
mod nvvm_program;
mod object_code;
mod ptx;
mod read;
mod reader;
mod setter;
#[cfg(unix)]
mod streamed;
mod write;

pub use arch::{Arch, ArchCode, ArchVariant, CodeKind, ParseArchError};
/// The byte buffer [`ObjectCode`] keeps: a `Vec<u8>` or `String` given to a
/// constructor becomes one without a copy, and clones share it.
pub use bytes::Bytes;
#[cfg(feature = "cache")]
pub use cache::{
    CacheEntry, CacheKey, CacheStats, CachedLink, KeyBuilder, LinkCache, MemoryCache, MemoryStats,
    library_content_identity, library_file_identity, library_identity,
};
#[cfg(feature = "remote-tier")]
pub use cache::{RemoteCache, RemoteError};
pub use demangle::demangle;
#[doc(hidden)]
pub use error::log_suffix;
pub use error::{ObjectError, Reason, Report};
#[cfg(feature = "link")]
pub use executor::{Executor, ThreadPerJob};
#[cfg(feature = "fatbin")]
pub use fatbin_writer::{FatbinBuilder, FatbinError};
pub use inspect::Inspection;
pub use kind::ObjectKind;
#[cfg(feature = "link")]
pub use linker::{
    Backend, DeviceContext, Gencode, GencodeError, Isolation, LinkError, LinkTarget, Linker,
    LinkerOptions, NvJitLink, OutputKind, current_device_arch,
};
pub use object_code::{ObjectCode, ValidatedImage};
pub use ptx::{ParsePtxIsaError, PtxIsa};
#[cfg(unix)]
pub use streamed::inspect_path;
pub use write::{check_writable, write_whole};

/// Backend handles open right now, across all linkers: a leak check for
/// tests, not part of the API.
#[doc(hidden)]
#[cfg(feature = "link")]
pub use linker::live_handles;

/// The parsers' entry points, for the fuzz targets in `fuzz/`; not part of
/// the API.
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::fatbin::{MAX_DECOMPRESSED_SIZE, parse_all};
    pub use crate::ptx::{inspect, looks_like_ptx, validate};

    /// [`inspect`] of `data` read as a stream, in reads of `step` bytes:
    /// what a big compressed PTX entry goes through.
    pub fn inspect_streamed(
        data: &[u8],
        step: usize,
    ) -> Result<crate::inspect::PtxInfo, crate::Reason> {
        struct Steps<'a>(&'a [u8], usize);
        impl std::io::Read for Steps<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = self.1.max(1).min(buf.len()).min(self.0.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        crate::ptx::inspect_reader(Steps(data, step)).expect("a slice reads without failing")
    }
}
