//! [`Context`]: a device's primary context, a created one, or cudarc's.

use std::sync::{Arc, OnceLock};

use cuda_driver_sys::{
    Driver,
    sys::{CUcontext, CUdevice, CUresult},
};

use crate::error::{About, ModuleError, check, driver};

/// A CUDA context: the device's primary context or a created one.
///
/// Kernels cache their `CUfunction` per `Context` and libraries wait for a
/// context's work before unloading; both hold only weak references, so a
/// context dropped first is simply skipped, never touched after its end.
pub struct Context {
    pub(crate) inner: Arc<ContextInner>,
}

pub(crate) struct ContextInner {
    raw: CUcontext,
    device: CUdevice,
    owner: Owner,
    /// `cuCtxGetId`, asked once (see [`ContextInner::id`]).
    id: OnceLock<Option<u64>>,
}

/// Who ends the context's life.
enum Owner {
    /// A retained primary context: released on drop.
    Primary,
    /// A context we created: destroyed on drop.
    Created,
    /// cudarc's: kept alive by this reference, ended by cudarc.
    #[cfg(feature = "cudarc")]
    Cudarc(Arc<cudarc::driver::CudaContext>),
}

// SAFETY: a CUcontext may be used from any thread; the driver synchronises.
unsafe impl Send for ContextInner {}
// SAFETY: as above; shared access only pushes and pops it.
unsafe impl Sync for ContextInner {}

impl Context {
    /// Retains the primary context of device `ordinal`.
    pub fn primary(ordinal: i32) -> Result<Self, ModuleError> {
        let driver = driver()?;
        let device = device(driver, ordinal)?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: an out-pointer and a valid device.
        let status = unsafe { driver.cuDevicePrimaryCtxRetain(&mut raw, device) }?;
        check(driver, status, "cuDevicePrimaryCtxRetain", About::NOTHING)?;
        Ok(Self::wrap(raw, device, Owner::Primary))
    }

    /// Creates a new context on device `ordinal` (it becomes current).
    pub fn create(ordinal: i32) -> Result<Self, ModuleError> {
        let driver = driver()?;
        let device = device(driver, ordinal)?;
        let mut raw = std::ptr::null_mut();
        // cuCtxCreate_v4 (12.5+) is the one signature both pinned headers
        // declare; null parameters ask for a plain context.
        // SAFETY: an out-pointer, null optional parameters and a valid device.
        let status = unsafe { driver.cuCtxCreate_v4(&mut raw, std::ptr::null_mut(), 0, device) }?;
        check(driver, status, "cuCtxCreate", About::NOTHING)?;
        Ok(Self::wrap(raw, device, Owner::Created))
    }

    fn wrap(raw: CUcontext, device: CUdevice, owner: Owner) -> Self {
        Context {
            inner: Arc::new(ContextInner {
                raw,
                device,
                owner,
                id: OnceLock::new(),
            }),
        }
    }

    /// cudarc's context as ours, kept alive as long as this value: kernels
    /// then cache their `CUfunction` for it, and launches go to its
    /// streams (see `Kernel::launch_on`). Make one per cudarc context and
    /// keep it: kernels cache their function per `Context`.
    /// (`Kernel::launch_on_stream` needs none: it makes and keeps its own.)
    #[cfg(feature = "cudarc")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cudarc")))]
    pub fn from_cudarc(context: &Arc<cudarc::driver::CudaContext>) -> Self {
        Self::wrap(
            context.cu_ctx().cast(),
            context.cu_device(),
            Owner::Cudarc(Arc::clone(context)),
        )
    }

    /// The cudarc context this was made from, if any.
    #[cfg(feature = "cudarc")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cudarc")))]
    pub fn cudarc(&self) -> Option<&Arc<cudarc::driver::CudaContext>> {
        match &self.inner.owner {
            Owner::Cudarc(context) => Some(context),
            _ => None,
        }
    }

    /// Another handle to this context, with its identity: kernels' caches
    /// treat both as one.
    #[cfg(feature = "cudarc")]
    pub(crate) fn share(&self) -> Context {
        Context {
            inner: Arc::clone(&self.inner),
        }
    }

    /// The raw handle.
    pub fn as_raw(&self) -> CUcontext {
        self.inner.raw
    }

    /// The device.
    pub fn device(&self) -> CUdevice {
        self.inner.device
    }

    /// Makes this context current on the calling thread.
    pub fn make_current(&self) -> Result<(), ModuleError> {
        let driver = driver()?;
        // SAFETY: a live context.
        let status = unsafe { driver.cuCtxSetCurrent(self.inner.raw) }?;
        check(driver, status, "cuCtxSetCurrent", About::NOTHING)
    }

    /// Runs `f` with this context pushed, popping it afterwards (also when
    /// `f` panics).
    pub(crate) fn with_current<T>(
        &self,
        f: impl FnOnce() -> Result<T, ModuleError>,
    ) -> Result<T, ModuleError> {
        self.inner.with_current(f)
    }
}

impl ContextInner {
    /// Runs `f` with this context pushed on the calling thread, and pops it
    /// afterwards: when `f` returns, and while a panic unwinds out of it.
    pub(crate) fn with_current<T>(
        &self,
        f: impl FnOnce() -> Result<T, ModuleError>,
    ) -> Result<T, ModuleError> {
        let driver = driver()?;
        // SAFETY: a live context: `self` is borrowed from a strong reference.
        let status = unsafe { driver.cuCtxPushCurrent_v2(self.raw) }?;
        check(driver, status, "cuCtxPushCurrent", About::NOTHING)?;
        let _pop = PopOnDrop(driver);
        f()
    }

    /// The driver's process-unique id of this context (`cuCtxGetId`, CUDA
    /// 12.0+), asked once; `None` where the driver cannot tell it.
    fn id(&self) -> Option<u64> {
        *self.id.get_or_init(|| context_id(self.raw))
    }
}

/// Pops, when dropped, the context that [`ContextInner::with_current`]
/// pushed: it lives in that call's frame, on the thread that pushed.
struct PopOnDrop(&'static Driver);

impl Drop for PopOnDrop {
    fn drop(&mut self) {
        let mut popped = std::ptr::null_mut();
        // SAFETY: an out-pointer; this thread's stack holds the context
        // `with_current` pushed, and this pops it once. A failure leaves
        // nothing to undo.
        let _ = unsafe { self.0.cuCtxPopCurrent_v2(&mut popped) };
    }
}

/// The context a module was loaded into: a `CUmodule` and its functions
/// belong to it alone.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Home {
    raw: CUcontext,
    /// Its `cuCtxGetId`: unlike the handle, a context made later at the
    /// same address does not share it. `None` where the driver lacks it.
    id: Option<u64>,
}

impl Home {
    /// The calling thread's current context (a null handle, which no
    /// [`Context`] has, when none is current).
    pub(crate) fn current(driver: &Driver) -> Result<Self, ModuleError> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: an out-pointer.
        let status = unsafe { driver.cuCtxGetCurrent(&mut raw) }?;
        check(driver, status, "cuCtxGetCurrent", About::NOTHING)?;
        Ok(Home {
            raw,
            id: context_id(raw),
        })
    }

    /// Whether `context` is this one: by id where both have one, else by
    /// handle.
    pub(crate) fn is(&self, context: &ContextInner) -> bool {
        match (self.id, context.id()) {
            (Some(home), Some(other)) => home == other,
            _ => std::ptr::eq(self.raw, context.raw),
        }
    }
}

/// `cuCtxGetId` of a live, non-null context; `None` where the call is
/// missing or fails.
fn context_id(raw: CUcontext) -> Option<u64> {
    if raw.is_null() {
        return None;
    }
    let driver = driver().ok()?;
    let mut id = 0;
    // SAFETY: an out-pointer and a live context: a `ContextInner`'s own
    // (borrowed from a strong reference), or the calling thread's current
    // one, which the module load that asks for it is about to use.
    let status = unsafe { driver.cuCtxGetId(raw, &mut id) }.ok()?;
    (status == CUresult::CUDA_SUCCESS).then_some(id)
}

impl Drop for ContextInner {
    fn drop(&mut self) {
        if let Ok(driver) = driver() {
            // SAFETY: releases what `primary` retained or destroys what
            // `create` made, once; cudarc's ends with its last reference.
            let _ = unsafe {
                match self.owner {
                    Owner::Primary => driver.cuDevicePrimaryCtxRelease_v2(self.device),
                    Owner::Created => driver.cuCtxDestroy_v2(self.raw),
                    #[cfg(feature = "cudarc")]
                    Owner::Cudarc(_) => return,
                }
            };
        }
    }
}

pub(crate) fn device(driver: &Driver, ordinal: i32) -> Result<CUdevice, ModuleError> {
    let mut device = 0;
    // SAFETY: an out-pointer.
    let status = unsafe { driver.cuDeviceGet(&mut device, ordinal) }?;
    check(driver, status, "cuDeviceGet", About::NOTHING)?;
    Ok(device)
}

/// The number of devices.
pub fn device_count() -> Result<i32, ModuleError> {
    let driver = driver()?;
    let mut count = 0;
    // SAFETY: an out-pointer.
    let status = unsafe { driver.cuDeviceGetCount(&mut count) }?;
    check(driver, status, "cuDeviceGetCount", About::NOTHING)?;
    Ok(count)
}
