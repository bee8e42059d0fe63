//! Context-independent loading of CUDA device code and kernel lookup.
//!
//! A [`Library`] is loaded once with `cuLibraryLoadData` and serves every
//! context and device: [`Library::kernel`] gives a [`Kernel`] (a
//! `CUkernel`), and [`Kernel::function`] the `CUfunction` of one context.
//! Both lookups are cached, so repeated ones make no driver call. Where the
//! driver lacks `cuLibrary*` (before 12.0), or when asked, loading falls back
//! to `cuModuleLoadDataEx` in the current context.
//!
//! ```no_run
//! use cuda_link::ObjectCode;
//! use cuda_module::{Context, Library};
//!
//! let context = Context::primary(0)?;
//! let library = Library::load(&ObjectCode::from_path("saxpy.cubin")?)?;
//! let saxpy = library.kernel("saxpy")?;
//! let function = saxpy.function(&context)?;
//! # let _ = function;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod context;
mod error;
mod jit_log;
mod kernel;
mod launch;
mod library;
mod memory;

pub use context::{Context, device_count};
pub use error::ModuleError;
pub use kernel::{Kernel, KernelAttributes};
pub use launch::{LaunchConfig, synchronize};
pub use library::{Library, LoadOptions, LoadingMode, loading_mode};
pub use memory::{DeviceBuffer, copy_to_device};
