//! [`Kernel`]: a kernel of a library, its per-context functions, its
//! attributes and launches.

use std::sync::{Arc, Mutex, OnceLock, Weak};

use cuda_driver_sys::driver_call;
use cuda_driver_sys::sys::{CUfunction, CUkernel};

use crate::context::{Context, ContextInner};
use crate::error::{About, ModuleError, driver};
use crate::jit_log::check_with_log;
use crate::loaded::{Handle, Loaded};

/// Where one kernel parameter lives in the parameter buffer (see
/// [`Kernel::param_info`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ParamInfo {
    /// Its offset, in bytes.
    pub offset: usize,
    /// Its size, in bytes.
    pub size: usize,
}

#[derive(Clone, Copy)]
pub(crate) enum KernelHandle {
    Kernel(CUkernel),
    Function(CUfunction),
}

pub(crate) struct KernelInner {
    pub(crate) handle: KernelHandle,
    /// `cuKernelGetParamInfo`'s answer, read once: checked launches
    /// compare every argument against it.
    pub(crate) params: OnceLock<Vec<ParamInfo>>,
    /// `(context, function)` of the first context asked for: most programs
    /// use one, and a set `OnceLock` is read with a single atomic load. The
    /// weak reference keeps the context's allocation, so its address cannot
    /// be reused by another context while the entry exists.
    pub(crate) first_context: OnceLock<(Weak<ContextInner>, usize)>,
    pub(crate) other_contexts: Mutex<Vec<(Weak<ContextInner>, usize)>>,
    /// The first context this kernel was launched in, already recorded in
    /// `loaded`: its later launches record nothing.
    pub(crate) launched_in: OnceLock<Weak<ContextInner>>,
    pub(crate) loaded: Arc<Loaded>,
    /// `launch_on_stream`'s contexts; after `loaded`, so that a last
    /// kernel's library is unloaded while they still exist (its unloading
    /// waits for their work).
    #[cfg(feature = "cudarc")]
    pub(crate) stream_contexts: crate::context::StreamContexts,
}

// SAFETY: CUkernel and CUfunction are driver handles usable from any thread;
// the caches are a OnceLock and a Mutex.
unsafe impl Send for KernelInner {}
// SAFETY: as above.
unsafe impl Sync for KernelInner {}

/// A kernel of a [`Library`](crate::Library); cheap to clone.
///
/// A `Kernel` keeps its library loaded: the code is unloaded only when
/// the `Library` and every `Kernel` of it (clones included) are dropped,
/// so a kernel is never launched from unloaded code, and a kernel may
/// outlive the `Library` value it came from:
///
/// ```no_run
/// # fn run(code: &cuda_module::cuda_link::ObjectCode) -> Result<(), cuda_module::ModuleError> {
/// use cuda_module::{Context, Library};
///
/// let context = Context::primary(0)?;
/// let saxpy = Library::load(code)?.kernel("saxpy")?; // the `Library` is dropped here
/// let function = saxpy.function(&context)?;          // its code is still loaded
/// # Ok(()) }
/// ```
///
/// Unloading, when the last of them goes, first waits for the work queued
/// in every context, still alive, that one of its kernels was launched in
/// through this crate. A library none of whose kernels was launched is
/// unloaded at once. A CUDA graph that captured one of this crate's
/// launches holds the code too, until the graph and its executable
/// graphs are destroyed.
#[derive(Clone)]
pub struct Kernel {
    pub(crate) name: Arc<str>,
    pub(crate) inner: Arc<KernelInner>,
}

impl Kernel {
    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The `CUfunction` of `context`; cached per context.
    ///
    /// The handle is valid while this kernel or a clone of it lives. Work
    /// launched with it outside this crate is not waited for when the code
    /// is unloaded: synchronize it before the last handle of the library
    /// is dropped, as with any raw handle; likewise a graph that captured
    /// a launch of it made outside this crate must be destroyed first
    /// (this crate's launches hand the graph a reference to the code).
    ///
    /// After a fallback to the module API ([`Library::is_module`]) there is
    /// one function, in the context the module was loaded into; any other
    /// context is [`ModuleError::ForeignContext`].
    ///
    /// [`Library::is_module`]: crate::Library::is_module
    pub fn function(&self, context: &Context) -> Result<CUfunction, ModuleError> {
        let inner = &*self.inner;
        if let KernelHandle::Function(raw) = inner.handle {
            return match &inner.loaded.handle {
                Handle::Module(_, home) if !home.is(&context.inner) => {
                    Err(ModuleError::ForeignContext {
                        kernel: self.name().to_owned(),
                        library: inner.loaded.name.to_string(),
                    })
                }
                _ => Ok(raw),
            };
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

    /// Asks the driver for the function in `context`.
    fn resolve(&self, context: &Context) -> Result<CUfunction, ModuleError> {
        let _phase = phase!("function");
        context.with_current(|| self.function_in_current())
    }

    /// Remembers that this kernel is launched in `context`, so that
    /// unloading waits for the work queued there. Called before every
    /// launch: in the first context the kernel was launched in, one atomic
    /// load after the first launch; in any other, the library's lock.
    pub(crate) fn note_launch(&self, context: &Context) {
        let inner = &*self.inner;
        let is_this =
            |weak: &Weak<ContextInner>| std::ptr::eq(weak.as_ptr(), Arc::as_ptr(&context.inner));
        if inner.launched_in.get().is_some_and(is_this) {
            return;
        }
        inner.loaded.record_context(&context.inner);
        // The first context keeps the slot; another records on each launch.
        let _ = inner
            .launched_in
            .get_or_init(|| Arc::downgrade(&context.inner));
    }

    /// The handle to ask the driver about this kernel on `context`'s device:
    /// the kernel, or after a module fallback the function, which exists
    /// only in the module's context ([`Kernel::function`] checks that).
    pub(crate) fn handle_for(&self, context: &Context) -> Result<KernelHandle, ModuleError> {
        match self.inner.handle {
            KernelHandle::Kernel(_) => Ok(self.inner.handle),
            KernelHandle::Function(_) => self.function(context).map(KernelHandle::Function),
        }
    }

    /// This kernel and its library, for errors.
    pub(crate) fn about(&self) -> About<'_> {
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
                let call =
                    unsafe { driver_call!(driver, cuKernelGetFunction(&mut function, raw)) }?;
                check_with_log(driver, call, self.about(), &log)?;
                Ok(function)
            }
        }
    }
}
