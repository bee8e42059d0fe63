//! [`DeviceContext`]: a device's primary context, made current for the
//! driver backend, which links in the calling thread's current context.

use cuda_driver_sys::{
    Call, Driver, driver_call,
    sys::{CUcontext, CUdevice},
};

use super::LinkError;

/// The primary context of one device, current on this thread while the
/// value lives; the previous current context comes back on drop. Not
/// `Send`: it belongs to the thread it made current.
///
/// # Nesting
/// A thread's guards nest like a stack, whatever order they are dropped
/// in. Each guard remembers the context that was current when it was made.
/// Dropping the newest live guard of the thread makes that remembered
/// context current again; dropping an older one changes nothing at that
/// moment (a newer guard's context stays current) and hands what it
/// remembered to the guard made just after it, which restores it in turn.
/// So with guard A (device 0) then guard B (device 1), dropping A and then
/// B leaves current what was current before A, and B's context stays
/// current until B drops. A context made current by other means while a
/// guard lives (`cuCtxSetCurrent`, cudarc) is replaced when the newest
/// guard drops.
///
/// ```no_run
/// use cuda_link::{Backend, DeviceContext, Linker, LinkerOptions};
///
/// let _context = DeviceContext::make_current(0)?;
/// let linker = Linker::new(LinkerOptions::default().backend(Backend::Driver))?;
/// # Ok::<(), cuda_link::LinkError>(())
/// ```
#[derive(Debug)]
pub struct DeviceContext {
    driver: &'static Driver,
    device: CUdevice,
    /// This guard's entry in the thread's guard list (`crate::current`).
    token: Option<crate::current::Token>,
    /// What was current when this guard was made: restored on drop if the
    /// thread's guard stack is already gone (a guard dropped while the
    /// thread's locals are destroyed). A raw pointer: not `Send`.
    previous: CUcontext,
}

impl DeviceContext {
    /// Initialises the driver, retains device `ordinal`'s primary context
    /// and makes it current on this thread.
    pub fn make_current(ordinal: i32) -> Result<Self, LinkError> {
        let driver = Driver::global()?;
        let ok = |call: Call| {
            driver
                .check(call.result)
                .map_err(|error| LinkError::DeviceContext {
                    device: ordinal,
                    call: call.symbol,
                    error,
                })
        };
        // SAFETY: cuInit takes no pointers.
        ok(unsafe { driver_call!(driver, cuInit(0)) }?)?;
        let mut device: CUdevice = 0;
        // SAFETY: an out-pointer; the driver checks the ordinal.
        ok(unsafe { driver_call!(driver, cuDeviceGet(&mut device, ordinal)) }?)?;
        let mut previous: CUcontext = std::ptr::null_mut();
        // SAFETY: an out-pointer.
        ok(unsafe { driver_call!(driver, cuCtxGetCurrent(&mut previous)) }?)?;
        let mut context: CUcontext = std::ptr::null_mut();
        // SAFETY: an out-pointer and a device the driver returned.
        ok(unsafe { driver_call!(driver, cuDevicePrimaryCtxRetain(&mut context, device)) }?)?;
        // SAFETY: `previous` is what the driver says is current on this
        // thread (null or a context).
        let token = unsafe { crate::current::push(previous.cast()) };
        // From here, dropping the guard restores `previous` and releases.
        let guard = DeviceContext {
            driver,
            device,
            token: Some(token),
            previous,
        };
        // SAFETY: a context just retained, alive until `guard` drops.
        ok(unsafe { driver_call!(driver, cuCtxSetCurrent(context)) }?)?;
        Ok(guard)
    }
}

impl Drop for DeviceContext {
    fn drop(&mut self) {
        let previous = self.previous.cast();
        let restore = match self.token.take() {
            Some(token) => crate::current::release(token, previous),
            None => Some(previous),
        };
        // SAFETY: `restore` is null or a context that was current on this
        // thread when one of its guards was made; a handle destroyed since
        // is refused by the driver (CUDA_ERROR_INVALID_CONTEXT, as cuda.h
        // documents for handles after cuCtxDestroy). The primary context
        // was retained once by `make_current`. Failures leave nothing to
        // undo.
        unsafe {
            if let Some(context) = restore {
                let _ = self.driver.cuCtxSetCurrent(context.cast());
            }
            let _ = self.driver.cuDevicePrimaryCtxRelease_v2(self.device);
        }
    }
}
