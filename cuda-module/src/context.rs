//! [`Context`]: a device's primary context, a created one, or cudarc's;
//! [`CurrentGuard`], which makes one current for a scope.

use std::sync::{Arc, OnceLock};

use cuda_driver_sys::{
    Driver, driver_call,
    sys::{CUcontext, CUdevice, CUresult},
};

use crate::error::{About, ModuleError, check, driver};

/// A CUDA context: the device's primary context or a created one.
///
/// Kernels cache their `CUfunction` per `Context`, and libraries wait
/// before unloading for the work of each context a kernel of theirs was
/// launched in; both hold only weak references, so a context dropped first
/// is simply skipped, never touched after its end.
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
        let call = unsafe { driver_call!(driver, cuDevicePrimaryCtxRetain(&mut raw, device)) }?;
        check(driver, call, About::NOTHING)?;
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
        let call = unsafe {
            driver_call!(
                driver,
                cuCtxCreate_v4(&mut raw, std::ptr::null_mut(), 0, device)
            )
        }?;
        check(driver, call, About::NOTHING)?;
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

    /// Makes this context current on the calling thread until the guard
    /// drops, which makes the context that was current before current
    /// again (see [`CurrentGuard`], also for guards that nest), as
    /// cuda-link's `DeviceContext::make_current` does. The guard keeps the
    /// context alive.
    ///
    /// Not needed for this crate's own calls, which make their context
    /// current for the call and leave the thread as they found it; it is
    /// for calls that use the current context: the module API, the raw
    /// driver, cuda-link's driver backend. cudarc binds its own context
    /// before each of its calls, so a guard does not disturb cudarc, nor
    /// cudarc a guard's restore.
    ///
    /// ```no_run
    /// # fn run() -> Result<(), cuda_module::ModuleError> {
    /// let context = cuda_module::Context::primary(0)?;
    /// {
    ///     let _current = context.make_current()?;
    ///     // `context` is current here.
    /// }
    /// // What was current before (or none) is current again.
    /// # Ok(()) }
    /// ```
    pub fn make_current(&self) -> Result<CurrentGuard, ModuleError> {
        let driver = driver()?;
        let mut previous: CUcontext = std::ptr::null_mut();
        // SAFETY: an out-pointer.
        let call = unsafe { driver_call!(driver, cuCtxGetCurrent(&mut previous)) }?;
        check(driver, call, About::NOTHING)?;
        // SAFETY: `previous` is what the driver says is current on this
        // thread (null or a context).
        let token = unsafe { cuda_link::current::push(previous.cast()) };
        // From here, dropping the guard restores `previous`.
        let guard = CurrentGuard {
            context: Arc::clone(&self.inner),
            token: Some(token),
            previous,
        };
        // SAFETY: a live context, which the guard keeps alive while it is
        // current.
        let call = unsafe { driver_call!(driver, cuCtxSetCurrent(self.inner.raw)) }?;
        check(driver, call, About::NOTHING)?;
        Ok(guard)
    }

    /// Runs `f` with this context current on the calling thread, which is
    /// left as it was afterwards (also when `f` panics).
    pub(crate) fn with_current<T>(
        &self,
        f: impl FnOnce() -> Result<T, ModuleError>,
    ) -> Result<T, ModuleError> {
        self.inner.with_current(f)
    }
}

/// The contexts `Kernel::launch_on_stream` made of cudarc's, one per
/// cudarc context, kept so that the kernel's function cache (per
/// [`Context`]) serves every launch after the first.
///
/// Each keeps its cudarc context alive, as cudarc's own `CudaFunction`
/// keeps its: while the kernel (or its `Library`, which keeps its kernels)
/// lives, or, once only this cache holds a cudarc context, until the next
/// context is added.
#[cfg(feature = "cudarc")]
#[derive(Default)]
pub(crate) struct StreamContexts(std::sync::RwLock<Vec<Context>>);

#[cfg(feature = "cudarc")]
impl StreamContexts {
    /// Ours over `cudarc`: the one made before, or a new one.
    pub(crate) fn get(&self, cudarc: &Arc<cudarc::driver::CudaContext>) -> Context {
        let is_it = |context: &&Context| {
            context
                .cudarc()
                .is_some_and(|theirs| Arc::ptr_eq(theirs, cudarc))
        };
        let known = self
            .0
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(context) = known.iter().find(is_it) {
            return context.share();
        }
        drop(known);
        let mut known = self
            .0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(context) = known.iter().find(is_it) {
            return context.share();
        }
        // A cudarc context that only this cache still holds is let go,
        // after the lock: its end is cudarc's, with driver calls.
        let (kept, stale): (Vec<Context>, Vec<Context>) = std::mem::take(&mut *known)
            .into_iter()
            .partition(|context| {
                context
                    .cudarc()
                    .is_some_and(|theirs| Arc::strong_count(theirs) > 1)
            });
        *known = kept;
        let context = Context::from_cudarc(cudarc);
        known.push(context.share());
        drop(known);
        drop(stale);
        context
    }
}

impl ContextInner {
    /// Runs `f` with this context current on the calling thread. Where it
    /// already is, `f` just runs: one driver call instead of two, as
    /// cudarc's launches do. Otherwise the context is pushed, and popped
    /// afterwards: when `f` returns, and while a panic unwinds out of it.
    pub(crate) fn with_current<T>(
        &self,
        f: impl FnOnce() -> Result<T, ModuleError>,
    ) -> Result<T, ModuleError> {
        let driver = driver()?;
        let mut current = std::ptr::null_mut();
        // SAFETY: an out-pointer.
        let call = unsafe { driver_call!(driver, cuCtxGetCurrent(&mut current)) }?;
        check(driver, call, About::NOTHING)?;
        if current == self.raw {
            return f();
        }
        // SAFETY: a live context: `self` is borrowed from a strong reference.
        let call = unsafe { driver_call!(driver, cuCtxPushCurrent_v2(self.raw)) }?;
        check(driver, call, About::NOTHING)?;
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

/// A [`Context`] made current on the calling thread by
/// [`Context::make_current`]; the context that was current before comes
/// back when this drops. It keeps the context alive while it lives. Not
/// `Send`: it belongs to the thread it made the context current on.
///
/// # Nesting
/// As cuda-link's `DeviceContext`: a thread's guards nest like a stack,
/// whatever order they are dropped in. Each guard remembers the context
/// that was current when it was made. Dropping the newest live guard of
/// the thread makes that remembered context current again; dropping an
/// older one changes nothing at that moment (a newer guard's context stays
/// current) and hands what it remembered to the guard made just after it,
/// which restores it in turn. A context made current by other means while
/// a guard lives (`cuCtxSetCurrent`, cudarc) is replaced when the newest
/// guard drops. This crate's own calls push their context and pop it, so
/// they nest inside any guard. cuda-link's `DeviceContext` guards share
/// the thread's list with these, so the two kinds nest together.
#[must_use = "the previous context comes back when the guard drops: keep it (`let _current = ...`)"]
pub struct CurrentGuard {
    /// The context made current, kept alive while it may be current.
    context: Arc<ContextInner>,
    /// This guard's entry in the thread's guard list (`cuda_link::current`).
    token: Option<cuda_link::current::Token>,
    /// What was current when this guard was made: restored on drop if the
    /// thread's guard list is already gone (a guard dropped while the
    /// thread's locals are destroyed). A raw pointer: not `Send`.
    previous: CUcontext,
}

impl std::fmt::Debug for CurrentGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CurrentGuard")
            .field("context", &self.context.raw)
            .field("previous", &self.previous)
            .finish()
    }
}

impl Drop for CurrentGuard {
    fn drop(&mut self) {
        let previous = self.previous.cast();
        let restore = match self.token.take() {
            Some(token) => cuda_link::current::release(token, previous),
            None => Some(previous),
        };
        if let (Some(context), Ok(driver)) = (restore, driver()) {
            // SAFETY: `context` is null or a context that was current on
            // this thread when one of its guards was made; a handle
            // destroyed since is refused by the driver
            // (CUDA_ERROR_INVALID_CONTEXT, as cuda.h documents for handles
            // after cuCtxDestroy). A failure leaves nothing to undo.
            let _ = unsafe { driver.cuCtxSetCurrent(context.cast()) };
        }
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
        let call = unsafe { driver_call!(driver, cuCtxGetCurrent(&mut raw)) }?;
        check(driver, call, About::NOTHING)?;
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
    let call = unsafe { driver_call!(driver, cuDeviceGet(&mut device, ordinal)) }?;
    check(driver, call, About::NOTHING)?;
    Ok(device)
}

/// The number of devices.
pub fn device_count() -> Result<i32, ModuleError> {
    let driver = driver()?;
    let mut count = 0;
    // SAFETY: an out-pointer.
    let call = unsafe { driver_call!(driver, cuDeviceGetCount(&mut count)) }?;
    check(driver, call, About::NOTHING)?;
    Ok(count)
}
