//! [`LaunchConfig`], the raw [`Kernel::launch`], and [`synchronize`].

use std::ffi::c_void;

use cuda_driver_sys::driver_call;
use cuda_driver_sys::sys::{CUfunction, CUstream};

use crate::context::Context;
use crate::error::{About, ModuleError, check, driver};
use crate::kernel::Kernel;

/// Grid, block and dynamic shared memory of a launch, with cudarc's
/// field names; the stream is the launch's own argument.
///
/// Every launch takes `impl Into<LaunchConfig>`: with the `cudarc`
/// feature, cudarc's own `LaunchConfig` converts, both ways.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Blocks in x, y, z.
    pub grid_dim: (u32, u32, u32),
    /// Threads per block in x, y, z.
    pub block_dim: (u32, u32, u32),
    /// Dynamic shared memory per block, in bytes.
    pub shared_mem_bytes: u32,
}

impl LaunchConfig {
    /// One thread per element: `block` threads a block, enough blocks to
    /// cover `elements`.
    pub fn for_elements(elements: u32, block: u32) -> Self {
        LaunchConfig {
            grid_dim: (elements.div_ceil(block.max(1)), 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        }
    }
}

/// cudarc's configuration, field for field.
///
/// ```
/// use cuda_module::LaunchConfig;
///
/// let theirs = cudarc::driver::LaunchConfig::for_num_elems(1000);
/// let ours = LaunchConfig::from(theirs);
/// assert_eq!(ours.grid_dim, theirs.grid_dim);
/// assert_eq!(ours.block_dim, theirs.block_dim);
/// assert_eq!(ours.shared_mem_bytes, theirs.shared_mem_bytes);
/// // And back, for cudarc's own launches.
/// let back: cudarc::driver::LaunchConfig = ours.into();
/// assert_eq!((back.grid_dim, back.block_dim), (theirs.grid_dim, theirs.block_dim));
/// ```
#[cfg(feature = "cudarc")]
#[cfg_attr(docsrs, doc(cfg(feature = "cudarc")))]
impl From<cudarc::driver::LaunchConfig> for LaunchConfig {
    fn from(config: cudarc::driver::LaunchConfig) -> Self {
        let cudarc::driver::LaunchConfig {
            grid_dim,
            block_dim,
            shared_mem_bytes,
        } = config;
        LaunchConfig {
            grid_dim,
            block_dim,
            shared_mem_bytes,
        }
    }
}

/// Ours as cudarc's, for cudarc's own launches.
#[cfg(feature = "cudarc")]
#[cfg_attr(docsrs, doc(cfg(feature = "cudarc")))]
impl From<LaunchConfig> for cudarc::driver::LaunchConfig {
    fn from(config: LaunchConfig) -> Self {
        let LaunchConfig {
            grid_dim,
            block_dim,
            shared_mem_bytes,
        } = config;
        cudarc::driver::LaunchConfig {
            grid_dim,
            block_dim,
            shared_mem_bytes,
        }
    }
}

impl Kernel {
    /// Launches on `stream` of `context` (null: its default stream), with
    /// no check of the arguments: with the `cudarc` feature,
    /// `Kernel::launch_on` checks them against the kernel's signature.
    ///
    /// `context` is pushed for the launch and popped after it, on success,
    /// error or panic alike: the calling thread's current context is left
    /// as it was. `config` is our [`LaunchConfig`] or, with the `cudarc`
    /// feature, cudarc's.
    ///
    /// # Safety
    /// `params` must point at one value per kernel parameter, of the
    /// parameter's type, and every pointer argument must be valid for what
    /// the kernel does with it, for as long as it runs. `stream` must be
    /// null or a live stream of `context`.
    ///
    /// Onto a stream that is capturing a CUDA graph, "as long as it runs"
    /// means every launch of that graph: memory the kernel uses must
    /// outlive the graph's executable graphs. The code itself is held:
    /// the capture hands the graph a reference to this kernel's library,
    /// which stays loaded until the graph, every executable graph made
    /// from it and their launches are gone, whatever handles are dropped
    /// meanwhile.
    pub unsafe fn launch(
        &self,
        context: &Context,
        stream: CUstream,
        config: impl Into<LaunchConfig>,
        params: &mut [*mut c_void],
    ) -> Result<(), ModuleError> {
        let config = config.into();
        let function = self.function(context)?;
        self.note_launch(context);
        // `with_current` pops what it pushes on every path, panics included.
        // SAFETY: the caller vouches for the parameters and the stream;
        // `function` is this kernel's in `context`, made current here.
        context.with_current(|| unsafe { self.launch_function(function, stream, config, params) })
    }

    /// `cuLaunchKernel` of `function` on `stream`.
    ///
    /// # Safety
    /// `function` is this kernel's in `stream`'s context, which is current
    /// or owns `stream`; the parameters are as [`Kernel::launch`] asks.
    pub(crate) unsafe fn launch_function(
        &self,
        function: CUfunction,
        stream: CUstream,
        config: LaunchConfig,
        params: &mut [*mut c_void],
    ) -> Result<(), ModuleError> {
        let driver = driver()?;
        let LaunchConfig {
            grid_dim: grid,
            block_dim: block,
            shared_mem_bytes,
        } = config;
        // A graph captured from this launch keeps the code loaded.
        crate::capture::hold_for_graph(driver, stream, &self.inner.loaded, self.about())?;
        // SAFETY: the caller vouches for the function, stream and
        // parameters; `params` has one pointer per parameter and outlives
        // the call.
        let call = unsafe {
            driver_call!(
                driver,
                cuLaunchKernel(
                    function,
                    grid.0,
                    grid.1,
                    grid.2,
                    block.0,
                    block.1,
                    block.2,
                    shared_mem_bytes,
                    stream,
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            )
        }?;
        check(driver, call, self.about())
    }
}

/// Waits for all work in `context`.
pub fn synchronize(context: &Context) -> Result<(), ModuleError> {
    let driver = driver()?;
    context.with_current(|| {
        // SAFETY: no arguments.
        let call = unsafe { driver_call!(driver, cuCtxSynchronize()) }?;
        check(driver, call, About::NOTHING)
    })
}
