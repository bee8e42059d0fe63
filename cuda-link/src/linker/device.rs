//! [`DeviceContext`]: a device's primary context, made current for the
//! driver backend, which links in the calling thread's current context.

use cuda_driver_sys::{
    Driver,
    sys::{CUcontext, CUdevice, CUresult},
};

use super::LinkError;

/// The primary context of one device, current on this thread while the
/// value lives; the previous current context comes back on drop. Not
/// `Send`: it belongs to the thread it made current.
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
    previous: CUcontext,
}

impl DeviceContext {
    /// Initialises the driver, retains device `ordinal`'s primary context
    /// and makes it current on this thread.
    pub fn make_current(ordinal: i32) -> Result<Self, LinkError> {
        let driver = Driver::global()?;
        let ok = |call, result: CUresult| {
            driver
                .check(result)
                .map_err(|error| LinkError::DeviceContext {
                    device: ordinal,
                    call,
                    error,
                })
        };
        // SAFETY: cuInit takes no pointers.
        ok("cuInit", unsafe { driver.cuInit(0) }?)?;
        let mut device: CUdevice = 0;
        // SAFETY: an out-pointer; the driver checks the ordinal.
        ok("cuDeviceGet", unsafe {
            driver.cuDeviceGet(&mut device, ordinal)
        }?)?;
        let mut previous: CUcontext = std::ptr::null_mut();
        // SAFETY: an out-pointer.
        ok("cuCtxGetCurrent", unsafe {
            driver.cuCtxGetCurrent(&mut previous)
        }?)?;
        let mut context: CUcontext = std::ptr::null_mut();
        // SAFETY: an out-pointer and a device the driver returned.
        ok("cuDevicePrimaryCtxRetain", unsafe {
            driver.cuDevicePrimaryCtxRetain(&mut context, device)
        }?)?;
        let guard = DeviceContext {
            driver,
            device,
            previous,
        };
        // SAFETY: a context just retained, alive until `guard` drops.
        ok("cuCtxSetCurrent", unsafe {
            driver.cuCtxSetCurrent(context)
        }?)?;
        Ok(guard)
    }
}

impl Drop for DeviceContext {
    fn drop(&mut self) {
        // SAFETY: `previous` was current (or null) on this thread before
        // us; the primary context was retained once by `make_current`.
        // Failures leave nothing to undo.
        unsafe {
            let _ = self.driver.cuCtxSetCurrent(self.previous);
            let _ = self.driver.cuDevicePrimaryCtxRelease_v2(self.device);
        }
    }
}
