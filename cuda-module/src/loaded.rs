//! [`Loaded`]: a loaded library or module handle and what must live as
//! long as it, shared by a `Library` and its kernels, which keep the code
//! loaded; dropping the last unloads it.

use std::sync::{Arc, Mutex, Weak};

use cuda_driver_sys::sys::{CUlibrary, CUmodule};

use crate::context::{ContextInner, Home};
use crate::error::driver;
use crate::jit_log::JitLog;

/// A library's handle, or after a fallback to the module API a module's.
pub(crate) enum Handle {
    Library(CUlibrary),
    /// A module and the context it was loaded into, the only one its
    /// functions belong to.
    Module(CUmodule, Home),
}

/// The loaded handle and what must live as long as it. Every
/// [`Kernel`](crate::Kernel) holds it, so the code stays loaded while a
/// kernel can still be launched.
pub(crate) struct Loaded {
    pub(crate) handle: Handle,
    /// The library's name, for errors about it and its kernels.
    pub(crate) name: Box<str>,
    /// The JIT error log buffer given to the driver at load time. The driver
    /// may compile lazily and write it later, so it lives as long as the
    /// handle, and every call that may compile holds its lock.
    pub(crate) log: JitLog,
    /// Contexts a kernel of this library was launched in: their work is
    /// waited for before unloading, if they still exist.
    contexts: Mutex<Vec<Weak<ContextInner>>>,
    /// The image, when the driver was told it stays alive.
    _image: Option<cuda_link::Bytes>,
}

impl Loaded {
    /// What a load made: its handle, the code's name, the log buffer the
    /// driver was given, and the image where the driver was told it stays
    /// alive (`CU_LIBRARY_BINARY_IS_PRESERVED`).
    pub(crate) fn new(
        handle: Handle,
        name: &str,
        log: JitLog,
        image: Option<cuda_link::Bytes>,
    ) -> Self {
        Loaded {
            handle,
            name: name.into(),
            log,
            contexts: Mutex::default(),
            _image: image,
        }
    }

    /// Remembers that `context` runs this code, so that unloading waits
    /// for its work.
    pub(crate) fn record_context(&self, context: &Arc<ContextInner>) {
        let mut contexts = self.contexts.lock().unwrap_or_else(|p| p.into_inner());
        contexts.retain(|weak| weak.strong_count() > 0);
        if !contexts
            .iter()
            .any(|weak| std::ptr::eq(weak.as_ptr(), Arc::as_ptr(context)))
        {
            contexts.push(Arc::downgrade(context));
        }
    }
}

impl Drop for Loaded {
    fn drop(&mut self) {
        let _phase = phase!("unload");
        let Ok(driver) = driver() else { return };
        let sync_phase = phase!("synchronize");
        let contexts = std::mem::take(self.contexts.get_mut().unwrap_or_else(|p| p.into_inner()));
        for context in contexts.iter().filter_map(Weak::upgrade) {
            // Work queued there may still run this library's code.
            let _ = context.with_current(|| {
                // SAFETY: no arguments; the context is pushed and alive.
                let _ = unsafe { driver.cuCtxSynchronize() };
                Ok(())
            });
        }
        drop(sync_phase);
        // SAFETY: unloads what `Library::load_image` loaded, once, after the
        // work that used it.
        let _ = unsafe {
            match self.handle {
                Handle::Library(library) => driver.cuLibraryUnload(library),
                Handle::Module(module, _) => driver.cuModuleUnload(module),
            }
        };
    }
}

// SAFETY: library and module handles are process-wide driver objects,
// usable from any thread; the context list is behind a mutex.
unsafe impl Send for Loaded {}
// SAFETY: as above.
unsafe impl Sync for Loaded {}
