#![doc = include_str!("../README.md")]
// Link errors carry both logs and the input names by design; they are
// returned once per link, so their size costs nothing that matters.
#![allow(clippy::result_large_err)]

pub mod arch;
pub mod cache;
pub mod cubin;
mod elf;
mod error;
pub mod fatbin;
pub mod host;
pub mod inspect;
pub mod linker;
pub mod ltoir;
mod object_code;
pub mod ptx;
mod reader;
#[cfg(unix)]
mod streamed;

pub use arch::{Arch, ArchVariant};
pub use cache::{CacheStats, LinkCache};
pub use error::{ObjectError, Reason};
pub use inspect::Inspection;
pub use linker::{Backend, DeviceContext, LinkError, Linker, LinkerOptions, OutputKind};
pub use object_code::{ObjectCode, ObjectKind, ValidatedImage};
#[cfg(unix)]
pub use streamed::inspect_path;
