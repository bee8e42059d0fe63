//! `cuda-link`'s integration tests, one binary: a binary per file cost a
//! link each, the larger part of CI's time on two cores.

mod cache;
mod fatbin_writer;
mod hostile;
mod link;
mod never_panics;
mod nvvm;
mod nvvm_kernels;
mod object_code;
// Against a real redis-server, and folder stores.
#[cfg(feature = "remote-redis")]
mod remote;
mod streamed;
