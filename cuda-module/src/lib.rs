#![doc = include_str!("../README.md")]

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
