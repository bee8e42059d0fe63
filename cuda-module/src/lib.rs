#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod attributes;
mod context;
mod error;
#[cfg(feature = "cudarc")]
mod interop;
mod jit_log;
mod kernel;
mod launch;
mod library;
mod memory;
#[cfg(test)]
mod stub;

pub use attributes::{KernelAttributes, MAX_KERNEL_PARAMS, ParamInfo};
pub use context::{Context, device_count};
pub use error::ModuleError;
#[cfg(feature = "cudarc")]
#[cfg_attr(docsrs, doc(cfg(feature = "cudarc")))]
pub use interop::{Launch, ScalarArg};
pub use kernel::Kernel;
pub use launch::{LaunchConfig, synchronize};
pub use library::{Library, LoadOptions, LoadingMode, loading_mode};
pub use memory::{DeviceBuffer, copy_to_device};

/// `cuda-link`, whose [`ObjectCode`](cuda_link::ObjectCode) every load
/// takes: one dependency on `cuda-module` brings both (and, with the
/// `link` feature, cuda-link's `Linker`).
pub use cuda_link;
