//! [`Kernel`]: a kernel of a library, its per-context functions, its
//! attributes and launches.

use std::ffi::c_void;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use cuda_driver_sys::sys::{CUfunction, CUfunction_attribute, CUkernel, CUresult};

use crate::context::{Context, ContextInner};
use crate::error::{About, ModuleError, check, driver};
use crate::jit_log::check_with_log;
use crate::launch::LaunchConfig;
use crate::library::Loaded;

#[derive(Clone, Copy)]
pub(crate) enum KernelHandle {
    Kernel(CUkernel),
    Function(CUfunction),
}

pub(crate) struct KernelInner {
    pub(crate) handle: KernelHandle,
    /// `(context, function)` of the first context asked for: most programs
    /// use one, and a set `OnceLock` is read with a single atomic load. The
    /// weak reference keeps the context's allocation, so its address cannot
    /// be reused by another context while the entry exists.
    pub(crate) first_context: OnceLock<(Weak<ContextInner>, usize)>,
    pub(crate) other_contexts: Mutex<Vec<(Weak<ContextInner>, usize)>>,
    pub(crate) loaded: Arc<Loaded>,
}

// SAFETY: CUkernel and CUfunction are driver handles usable from any thread;
// the caches are a OnceLock and a Mutex.
unsafe impl Send for KernelInner {}
// SAFETY: as above.
unsafe impl Sync for KernelInner {}

/// A kernel of a `Library`; cheap to clone.
#[derive(Clone)]
pub struct Kernel {
    pub(crate) name: Arc<str>,
    pub(crate) inner: Arc<KernelInner>,
}

/// A kernel's resource use on one device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct KernelAttributes {
    /// Registers per thread.
    pub registers: i32,
    /// Static shared memory in bytes.
    pub shared_bytes: i32,
    /// Constant memory in bytes.
    pub const_bytes: i32,
    /// Local memory per thread in bytes.
    pub local_bytes: i32,
    /// The largest block this kernel can launch with.
    pub max_threads_per_block: i32,
}

impl Kernel {
    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The `CUfunction` of `context`; cached per context.
    pub fn function(&self, context: &Context) -> Result<CUfunction, ModuleError> {
        let inner = &*self.inner;
        if let KernelHandle::Function(raw) = inner.handle {
            return Ok(raw);
        }
        let is_this =
            |weak: &Weak<ContextInner>| std::ptr::eq(weak.as_ptr(), Arc::as_ptr(&context.inner));
        match inner.first_context.get() {
            Some((first, function)) if is_this(first) => return Ok(*function as CUfunction),
            Some(_) => {}
            None => {
                let function = self.resolve(context)? as usize;
                let (winner, _) = inner
                    .first_context
                    .get_or_init(|| (Arc::downgrade(&context.inner), function));
                if is_this(winner) {
                    return Ok(function as CUfunction);
                }
                // Another thread took the slot for another context.
                let mut others = inner
                    .other_contexts
                    .lock()
                    .unwrap_or_else(|p| p.into_inner());
                others.push((Arc::downgrade(&context.inner), function));
                return Ok(function as CUfunction);
            }
        }
        let mut others = inner
            .other_contexts
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some((_, function)) = others.iter().find(|(weak, _)| is_this(weak)) {
            return Ok(*function as CUfunction);
        }
        let function = self.resolve(context)?;
        others.retain(|(weak, _)| weak.strong_count() > 0);
        others.push((Arc::downgrade(&context.inner), function as usize));
        Ok(function)
    }

    /// Asks the driver for the function in `context`, and remembers the
    /// context so that unloading waits for its work.
    fn resolve(&self, context: &Context) -> Result<CUfunction, ModuleError> {
        let function = context.with_current(|| self.function_in_current())?;
        self.inner.loaded.record_context(&context.inner);
        Ok(function)
    }

    /// This kernel and its library, for errors.
    fn about(&self) -> About<'_> {
        About::symbol(&self.inner.loaded.name, &self.name)
    }

    pub(crate) fn function_in_current(&self) -> Result<CUfunction, ModuleError> {
        match self.inner.handle {
            KernelHandle::Function(raw) => Ok(raw),
            KernelHandle::Kernel(raw) => {
                let driver = driver()?;
                let mut function: CUfunction = std::ptr::null_mut();
                // May load and compile the code in this context, writing the log.
                let log = self.inner.loaded.log.lock();
                // SAFETY: a live kernel and an out-pointer; the driver uses
                // the calling thread's current context.
                let status = unsafe { driver.cuKernelGetFunction(&mut function, raw) }?;
                check_with_log(driver, status, "cuKernelGetFunction", self.about(), &log)?;
                Ok(function)
            }
        }
    }

    /// Registers, shared, const and local bytes, and the block limit.
    pub fn attributes(&self, context: &Context) -> Result<KernelAttributes, ModuleError> {
        let function = self.function(context)?;
        let driver = driver()?;
        let get = |attribute: CUfunction_attribute| -> Result<i32, ModuleError> {
            let mut value = 0;
            // SAFETY: a live function and an out-pointer.
            let status = unsafe { driver.cuFuncGetAttribute(&mut value, attribute, function) }?;
            check(driver, status, "cuFuncGetAttribute", self.about())?;
            Ok(value)
        };
        Ok(KernelAttributes {
            registers: get(CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
            shared_bytes: get(CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
            const_bytes: get(CUfunction_attribute::CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES)?,
            local_bytes: get(CUfunction_attribute::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?,
            max_threads_per_block: get(
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
            )?,
        })
    }

    /// `(offset, size)` of each parameter, through `cuKernelGetParamInfo`
    /// (or `cuFuncGetParamInfo` after a module fallback).
    pub fn param_info(&self) -> Result<Vec<(usize, usize)>, ModuleError> {
        let driver = driver()?;
        let mut params = Vec::new();
        for index in 0.. {
            let (mut offset, mut size) = (0usize, 0usize);
            // SAFETY: a live handle and out-pointers; the driver reports an
            // error past the last parameter.
            let (status, call) = unsafe {
                match self.inner.handle {
                    KernelHandle::Kernel(raw) => (
                        driver.cuKernelGetParamInfo(raw, index, &mut offset, &mut size)?,
                        "cuKernelGetParamInfo",
                    ),
                    KernelHandle::Function(raw) => (
                        driver.cuFuncGetParamInfo(raw, index, &mut offset, &mut size)?,
                        "cuFuncGetParamInfo",
                    ),
                }
            };
            // CUDA_ERROR_INVALID_VALUE past the last parameter ends the
            // list; any other failure is the caller's to see.
            if status == CUresult::CUDA_ERROR_INVALID_VALUE {
                break;
            }
            check(driver, status, call, self.about())?;
            params.push((offset, size));
        }
        Ok(params)
    }

    /// Launches on `context` with `config`.
    ///
    /// # Safety
    /// `params` must point at one value per kernel parameter, of the
    /// parameter's type, and every pointer argument must be valid for what
    /// the kernel does with it, for as long as it runs. `config.stream` must
    /// be null or a live stream of `context`.
    pub unsafe fn launch(
        &self,
        context: &Context,
        config: LaunchConfig,
        params: &mut [*mut c_void],
    ) -> Result<(), ModuleError> {
        let function = self.function(context)?;
        let driver = driver()?;
        let LaunchConfig {
            grid,
            block,
            shared_bytes,
            stream,
        } = config;
        context.with_current(|| {
            // SAFETY: the caller vouches for the parameters.
            let status = unsafe {
                driver.cuLaunchKernel(
                    function,
                    grid.0,
                    grid.1,
                    grid.2,
                    block.0,
                    block.1,
                    block.2,
                    shared_bytes,
                    stream,
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            }?;
            check(driver, status, "cuLaunchKernel", self.about())
        })
    }
}
