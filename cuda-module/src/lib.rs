#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

// Layers: each module uses only modules of lower layers, so there is no
// cycle (`stub`, the unit tests' driver, uses them all).
//
//   5  interop (cudarc)               the checked launch on cudarc streams
//   4  attributes, launch, library    a kernel's queries, launches, loading
//   3  kernel                         Kernel, ParamInfo, per-context functions
//   2  loaded, memory, capture        a loaded handle; DeviceBuffer; what a
//                                     captured launch hands its graph
//   1  context, jit_log               Context, CurrentGuard; the JIT log
//   0  error                          ModuleError, the driver, `check`
/// A step of this crate, as a `tracing` span with the `tracing` feature
/// (see cuda-link's `phase` module).
macro_rules! phase {
    ($name:literal) => {
        cuda_link::__phase!("cuda_module", $name)
    };
}

mod attributes;
mod capture;
mod context;
mod error;
#[cfg(feature = "cudarc")]
mod interop;
mod jit_log;
mod kernel;
mod launch;
mod library;
mod loaded;
mod memory;
#[cfg(test)]
mod stub;

pub use attributes::{KernelAttributes, MAX_KERNEL_PARAMS};
pub use context::{Context, CurrentGuard, device_count};
pub use error::ModuleError;
#[cfg(feature = "cudarc")]
#[cfg_attr(docsrs, doc(cfg(feature = "cudarc")))]
pub use interop::{Launch, ScalarArg};
pub use kernel::{Kernel, ParamInfo};
pub use launch::{LaunchConfig, synchronize};
pub use library::{Library, LoadOptions, LoadingMode, loading_mode};
pub use memory::{DeviceBuffer, copy_to_device};

/// `cuda-link`, whose [`ObjectCode`](cuda_link::ObjectCode) every load
/// takes: one dependency on `cuda-module` brings both (and, with the
/// `link` feature, cuda-link's `Linker`).
pub use cuda_link;
