//! [`LaunchConfig`] and [`synchronize`].

use cuda_driver_sys::sys::CUstream;

use crate::context::Context;
use crate::error::{About, ModuleError, check, driver};

/// Grid, block, dynamic shared memory and stream of a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Blocks in x, y, z.
    pub grid: (u32, u32, u32),
    /// Threads per block in x, y, z.
    pub block: (u32, u32, u32),
    /// Dynamic shared memory per block, in bytes.
    pub shared_bytes: u32,
    /// The stream; null is the context's default stream.
    pub stream: CUstream,
}

impl LaunchConfig {
    /// One thread per element: `block` threads a block, enough blocks to
    /// cover `elements`, on the default stream.
    pub fn for_elements(elements: u32, block: u32) -> Self {
        LaunchConfig {
            grid: (elements.div_ceil(block.max(1)), 1, 1),
            block: (block, 1, 1),
            shared_bytes: 0,
            stream: std::ptr::null_mut(),
        }
    }
}

/// Waits for all work in the current context.
pub fn synchronize(context: &Context) -> Result<(), ModuleError> {
    let driver = driver()?;
    context.with_current(|| {
        // SAFETY: no arguments.
        let status = unsafe { driver.cuCtxSynchronize() }?;
        check(driver, status, "cuCtxSynchronize", About::NOTHING)
    })
}
