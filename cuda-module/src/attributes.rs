//! What a kernel asks of a device: [`KernelAttributes`] as cuda.core names
//! them, the dynamic shared memory limit, occupancy, and its parameters
//! ([`ParamInfo`]).
//!
//! Under lazy loading each of these driver calls may load, and compile,
//! the kernel's code, writing the library's JIT log: all are made under
//! the log's lock (see `JitLog`), as loads and lookups are.

use cuda_driver_sys::driver_call;
use cuda_driver_sys::sys::{CUfunction_attribute, CUresult};

use crate::context::Context;
use crate::error::{ModuleError, driver};
use crate::jit_log::check_with_log;
use crate::kernel::{Kernel, KernelHandle, ParamInfo};

/// The most parameters a kernel can have: CUDA 12.1 and later allow 32,764
/// bytes of kernel parameters (earlier versions 4,096), and every parameter
/// takes at least one byte. [`Kernel::param_info`] stops there: a driver
/// that reports more is answered with [`ModuleError::TooManyParameters`]
/// rather than asked on forever.
pub const MAX_KERNEL_PARAMS: usize = 32_764;

/// A kernel's attributes on one device, named as cuda.core's
/// `Kernel.attributes` names them (`CU_FUNC_ATTRIBUTE_*`); the driver's
/// yes-or-no attributes are `bool`s, every other is the driver's `int`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct KernelAttributes {
    /// The largest block this kernel can launch with.
    pub max_threads_per_block: i32,
    /// Static shared memory per block, in bytes.
    pub shared_size_bytes: i32,
    /// Constant memory, in bytes.
    pub const_size_bytes: i32,
    /// Local memory per thread, in bytes.
    pub local_size_bytes: i32,
    /// Registers per thread.
    pub num_regs: i32,
    /// The PTX ISA version it was compiled for, major × 10 + minor.
    pub ptx_version: i32,
    /// The SASS version it was compiled for, major × 10 + minor.
    pub binary_version: i32,
    /// Whether it was compiled with `-Xptxas --dlcm=ca`.
    pub cache_mode_ca: bool,
    /// The most dynamic shared memory a launch may ask for, in bytes; see
    /// [`Kernel::set_max_dynamic_shared_size_bytes`].
    pub max_dynamic_shared_size_bytes: i32,
    /// The preferred shared memory carveout, in percent of the maximum.
    pub preferred_shared_memory_carveout: i32,
    /// Whether a launch must set a cluster size.
    pub cluster_size_must_be_set: bool,
    /// The cluster width required at compile time, or 0.
    pub required_cluster_width: i32,
    /// The cluster height required at compile time, or 0.
    pub required_cluster_height: i32,
    /// The cluster depth required at compile time, or 0.
    pub required_cluster_depth: i32,
    /// Whether a non-portable cluster size is allowed.
    pub non_portable_cluster_size_allowed: bool,
    /// The cluster scheduling policy preference.
    pub cluster_scheduling_policy_preference: i32,
}

impl Kernel {
    /// One attribute on `context`'s device: `cuKernelGetAttribute` for a
    /// library's kernel (no context needed), `cuFuncGetAttribute` after a
    /// module fallback (only in the module's context, see
    /// [`Kernel::function`]).
    pub fn attribute(
        &self,
        context: &Context,
        attribute: CUfunction_attribute,
    ) -> Result<i32, ModuleError> {
        let driver = driver()?;
        let handle = self.handle_for(context)?;
        let mut value = 0;
        let log = self.inner.loaded.log.lock();
        // SAFETY: a live kernel or function, an out-pointer and the
        // context's device; the log's lock is held.
        let call = unsafe {
            match handle {
                KernelHandle::Kernel(raw) => driver_call!(
                    driver,
                    cuKernelGetAttribute(&mut value, attribute, raw, context.device())
                ),
                KernelHandle::Function(raw) => {
                    driver_call!(driver, cuFuncGetAttribute(&mut value, attribute, raw))
                }
            }
        }?;
        check_with_log(driver, call, self.about(), &log)?;
        Ok(value)
    }

    /// Every attribute of cuda.core's `Kernel.attributes`, on `context`'s
    /// device: one `cuKernelGetAttribute` each for a library's kernel
    /// (`cuFuncGetAttribute` after a module fallback).
    ///
    /// # Errors
    /// [`ModuleError::Call`] where the driver refuses to answer for an
    /// attribute (an older driver that lacks it), with the JIT log where
    /// asking compiled the code; after a module fallback, a context other
    /// than the module's is [`ModuleError::ForeignContext`].
    ///
    /// ```no_run
    /// # fn run(saxpy: cuda_module::Kernel) -> Result<(), cuda_module::ModuleError> {
    /// let context = cuda_module::Context::primary(0)?;
    /// let attributes = saxpy.attributes(&context)?;
    /// println!("{} registers a thread", attributes.num_regs);
    /// assert!(attributes.max_threads_per_block >= 256, "a block of 256 fits");
    /// assert!(!attributes.cluster_size_must_be_set, "no cluster size needed");
    /// # Ok(()) }
    /// ```
    pub fn attributes(&self, context: &Context) -> Result<KernelAttributes, ModuleError> {
        use CUfunction_attribute as A;
        let get = |attribute| self.attribute(context, attribute);
        let flag = |attribute| get(attribute).map(|value| value != 0);
        Ok(KernelAttributes {
            max_threads_per_block: get(A::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            shared_size_bytes: get(A::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
            const_size_bytes: get(A::CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES)?,
            local_size_bytes: get(A::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?,
            num_regs: get(A::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
            ptx_version: get(A::CU_FUNC_ATTRIBUTE_PTX_VERSION)?,
            binary_version: get(A::CU_FUNC_ATTRIBUTE_BINARY_VERSION)?,
            cache_mode_ca: flag(A::CU_FUNC_ATTRIBUTE_CACHE_MODE_CA)?,
            max_dynamic_shared_size_bytes: get(A::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)?,
            preferred_shared_memory_carveout: get(
                A::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
            )?,
            cluster_size_must_be_set: flag(A::CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET)?,
            required_cluster_width: get(A::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH)?,
            required_cluster_height: get(A::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT)?,
            required_cluster_depth: get(A::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH)?,
            non_portable_cluster_size_allowed: flag(
                A::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
            )?,
            cluster_scheduling_policy_preference: get(
                A::CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE,
            )?,
        })
    }

    /// Lets launches on `context`'s device ask for up to `bytes` of dynamic
    /// shared memory: a kernel needs this for more than 48 KiB.
    pub fn set_max_dynamic_shared_size_bytes(
        &self,
        context: &Context,
        bytes: i32,
    ) -> Result<(), ModuleError> {
        let driver = driver()?;
        let handle = self.handle_for(context)?;
        let attribute = CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
        let log = self.inner.loaded.log.lock();
        // SAFETY: a live kernel or function and the context's device; the
        // driver checks the value; the log's lock is held.
        let call = unsafe {
            match handle {
                KernelHandle::Kernel(raw) => driver_call!(
                    driver,
                    cuKernelSetAttribute(attribute, bytes, raw, context.device())
                ),
                KernelHandle::Function(raw) => {
                    driver_call!(driver, cuFuncSetAttribute(raw, attribute, bytes))
                }
            }
        }?;
        check_with_log(driver, call, self.about(), &log)
    }

    /// How many blocks of `block_size` threads, each with
    /// `dynamic_shared_bytes`, fit on one multiprocessor of `context`'s
    /// device (`cuOccupancyMaxActiveBlocksPerMultiprocessor`).
    ///
    /// # Errors
    /// [`ModuleError::Call`] where the driver refuses the question (a
    /// block larger than the kernel allows, say), or where looking the
    /// function up in `context` fails (with the JIT log if compiling did);
    /// after a module fallback, a context other than the module's is
    /// [`ModuleError::ForeignContext`].
    ///
    /// ```no_run
    /// # fn run(saxpy: cuda_module::Kernel) -> Result<(), cuda_module::ModuleError> {
    /// let context = cuda_module::Context::primary(0)?;
    /// let blocks = saxpy.max_active_blocks_per_multiprocessor(&context, 256, 0)?;
    /// println!("{blocks} blocks of 256 threads a multiprocessor: {} threads", blocks * 256);
    /// # Ok(()) }
    /// ```
    pub fn max_active_blocks_per_multiprocessor(
        &self,
        context: &Context,
        block_size: i32,
        dynamic_shared_bytes: usize,
    ) -> Result<i32, ModuleError> {
        let function = self.function(context)?;
        let driver = driver()?;
        let mut blocks = 0;
        let log = self.inner.loaded.log.lock();
        // SAFETY: a live function of `context` and an out-pointer; the
        // log's lock is held.
        let call = unsafe {
            driver_call!(
                driver,
                cuOccupancyMaxActiveBlocksPerMultiprocessor(
                    &mut blocks,
                    function,
                    block_size,
                    dynamic_shared_bytes,
                )
            )
        }?;
        check_with_log(driver, call, self.about(), &log)?;
        Ok(blocks)
    }

    /// The block size that gives the most occupancy, and the smallest grid
    /// that reaches it: `(min_grid_size, block_size)`, for a fixed
    /// `dynamic_shared_bytes` per block and at most `block_size_limit`
    /// threads (0: no limit) (`cuOccupancyMaxPotentialBlockSize`).
    ///
    /// # Errors
    /// As [`max_active_blocks_per_multiprocessor`](Self::max_active_blocks_per_multiprocessor).
    ///
    /// ```no_run
    /// # fn run(saxpy: cuda_module::Kernel) -> Result<(), cuda_module::ModuleError> {
    /// use cuda_module::{Context, LaunchConfig};
    ///
    /// let context = Context::primary(0)?;
    /// let (_min_grid, block) = saxpy.max_potential_block_size(&context, 0, 0)?;
    /// let config = LaunchConfig::for_elements(1 << 20, block as u32);
    /// # let _ = config; Ok(()) }
    /// ```
    pub fn max_potential_block_size(
        &self,
        context: &Context,
        dynamic_shared_bytes: usize,
        block_size_limit: i32,
    ) -> Result<(i32, i32), ModuleError> {
        let function = self.function(context)?;
        let driver = driver()?;
        let (mut min_grid, mut block) = (0, 0);
        let log = self.inner.loaded.log.lock();
        // SAFETY: a live function of `context`, out-pointers and no
        // callback; the log's lock is held.
        let call = unsafe {
            driver_call!(
                driver,
                cuOccupancyMaxPotentialBlockSize(
                    &mut min_grid,
                    &mut block,
                    function,
                    None,
                    dynamic_shared_bytes,
                    block_size_limit,
                )
            )
        }?;
        check_with_log(driver, call, self.about(), &log)?;
        Ok((min_grid, block))
    }

    /// Each parameter's offset and size, through `cuKernelGetParamInfo`
    /// (or `cuFuncGetParamInfo` after a module fallback); read once and
    /// cached. At most [`MAX_KERNEL_PARAMS`]: a driver that reports more is
    /// [`ModuleError::TooManyParameters`].
    pub fn param_info(&self) -> Result<&[ParamInfo], ModuleError> {
        if let Some(params) = self.inner.params.get() {
            return Ok(params);
        }
        let params = self.read_param_info()?;
        Ok(self.inner.params.get_or_init(|| params))
    }

    fn read_param_info(&self) -> Result<Vec<ParamInfo>, ModuleError> {
        let driver = driver()?;
        let mut params = Vec::new();
        let log = self.inner.loaded.log.lock();
        for index in 0..=MAX_KERNEL_PARAMS {
            let (mut offset, mut size) = (0usize, 0usize);
            // SAFETY: a live handle and out-pointers; the log's lock is
            // held.
            let call = unsafe {
                match self.inner.handle {
                    KernelHandle::Kernel(raw) => driver_call!(
                        driver,
                        cuKernelGetParamInfo(raw, index, &mut offset, &mut size)
                    ),
                    KernelHandle::Function(raw) => driver_call!(
                        driver,
                        cuFuncGetParamInfo(raw, index, &mut offset, &mut size)
                    ),
                }
            }?;
            // CUDA_ERROR_INVALID_VALUE past the last parameter ends the
            // list (checked on the H200); any other failure is an error.
            if call.result == CUresult::CUDA_ERROR_INVALID_VALUE {
                return Ok(params);
            }
            check_with_log(driver, call, self.about(), &log)?;
            params.push(ParamInfo { offset, size });
        }
        // One more parameter than any kernel can have: the driver is not
        // answering about a real signature.
        Err(ModuleError::TooManyParameters {
            kernel: self.name().to_owned(),
            limit: MAX_KERNEL_PARAMS,
        })
    }
}
