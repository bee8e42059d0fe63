//! `cuda-link`'s integration tests, one binary: a binary per file cost a
//! link each, the larger part of CI's time on two cores.

mod cache;
mod fatbin_writer;
mod hostile;
mod link;
mod never_panics;
mod nvvm;
mod object_code;
#[cfg(feature = "remote")]
mod remote;
mod streamed;
