#![doc = include_str!("../README.md")]

#[cfg(feature = "build")]
mod archs;
#[cfg(feature = "build")]
mod build;
#[cfg(feature = "build")]
mod built;
#[cfg(feature = "build")]
mod bundle;
#[cfg(feature = "build")]
mod compile;
#[cfg(feature = "build")]
mod env;
#[cfg(feature = "build")]
mod error;
#[cfg(feature = "build")]
mod jobs;
#[cfg(feature = "build")]
mod names;
#[cfg(feature = "build")]
mod nvcc;
#[cfg(feature = "build")]
mod nvcc_stage;
#[cfg(feature = "build")]
mod nvrtc_stage;
#[cfg(feature = "build")]
mod output;
#[cfg(feature = "build")]
mod pipeline;
#[cfg(feature = "build")]
mod processes;
#[cfg(feature = "build")]
mod session;
#[cfg(feature = "build")]
mod stamp;
#[cfg(feature = "build")]
mod store;

#[cfg(feature = "build")]
pub use build::{Build, Cudart, Route};
#[cfg(feature = "build")]
pub use built::Built;
#[cfg(feature = "build")]
pub use error::BuildError;

/// Includes what [`Build::compile`] wrote for `name`: a module `name`
/// holding `FATBIN`, the fatbin's bytes (aligned, embedded with
/// `include_bytes!`), a `&str` constant per kernel (its mangled name, the
/// one `Library::kernel` and cudarc's `load_function` take; the doc
/// comment shows the demangled signature) and `KERNELS`, all of them.
/// With [`Build::per_file`], one such module per file inside `name`.
///
/// ```ignore
/// cuda_build::include_kernels!("kernels");
///
/// let code = cuda_module::cuda_link::ObjectCode::from_fatbin(kernels::FATBIN, "kernels")?;
/// let add = cuda_module::Library::load(&code)?.kernel(kernels::ADD)?;
/// ```
#[macro_export]
macro_rules! include_kernels {
    ($name:literal) => {
        include!(concat!(env!("OUT_DIR"), "/cuda-build/", $name, ".rs"));
    };
}
