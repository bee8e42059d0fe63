#![doc = include_str!("../README.md")]

mod builtin;
mod closure;
mod compiler;
mod dependencies;
mod depfile;
mod error;
mod flags;
mod headers;
mod host_code;
mod host_macros;
mod host_scan;
mod lex;
mod made;
mod nvcc;
mod nvrtc;
mod nvvm;
mod options;
mod program;
mod read_set;
pub(crate) mod remembered;
mod search;
pub mod source;
mod wheels;

pub use compiler::Compiler;
pub use dependencies::Dependencies;
pub use depfile::{DepfileError, parse_depfile};
pub use error::{CompileError, FlagError};
pub use flags::{Dialect, FileFlag, Flags, IncludeDir, IncludeKind, MacroFlag};
pub use host_code::HostCode;
pub use nvcc::{DroppedOption, nvcc_host_option};
pub use nvrtc::Target;
/// The NVRTC bindings this crate loads with.
pub use nvrtc_sys;
pub use nvvm::{Libdevice, NvvmCompiler, NvvmOptions, NvvmProgram};
pub use options::{ProgramOptions, Std};
pub use program::{Compiled, Program, Warning};
pub use read_set::{IncludeSearch, ReadSet};
pub use wheels::{missing_header_hint, nvidia_wheel_of};

/// How many include closures this process served from memory, not
/// scanned: for tests, not part of the API.
#[doc(hidden)]
pub fn remembered_closures_served() -> u64 {
    remembered::served()
}
