//! [`JitLog`]: the JIT error log buffer a library gives the driver.

use std::sync::Mutex;

use cuda_driver_sys::{Call, Driver};

use crate::error::{About, ModuleError, check};

/// A heap buffer the driver writes its JIT error log into.
///
/// The driver keeps the pointer for the library's lifetime: with lazy
/// loading it compiles, and writes the log, inside later calls such as
/// `cuKernelGetFunction` or `cuLibraryGetGlobal` in a new context, and the
/// attribute, occupancy and parameter queries (`cuKernelGetAttribute`,
/// `cuFuncGetAttribute`, `cuKernelGetParamInfo`, ...), which may load the
/// code onto a device first. Every such call is made through
/// [`JitLog::lock`], and the text is read only under that same lock, so the
/// driver's writes and our reads never overlap.
pub(crate) struct JitLog {
    pub(crate) buffer: *mut u8,
    pub(crate) len: usize,
    lock: Mutex<()>,
}

// SAFETY: the buffer is a plain heap allocation owned by this value; the
// driver writes it only during calls made under `lock` (see the type's
// docs), and it is read only under `lock`.
unsafe impl Send for JitLog {}
// SAFETY: as above: shared access goes through `lock`.
unsafe impl Sync for JitLog {}

/// Proof that the log's lock is held: driver calls that may compile this
/// library's code are made while one lives, and the log is read through it.
pub(crate) struct LogGuard<'a> {
    log: &'a JitLog,
    _held: std::sync::MutexGuard<'a, ()>,
}

impl JitLog {
    const SIZE: usize = 16 * 1024;

    pub(crate) fn new() -> Self {
        let buffer = Box::into_raw(vec![0u8; Self::SIZE].into_boxed_slice());
        JitLog {
            buffer: buffer.cast(),
            len: Self::SIZE,
            lock: Mutex::new(()),
        }
    }

    pub(crate) fn lock(&self) -> LogGuard<'_> {
        LogGuard {
            log: self,
            _held: self.lock.lock().unwrap_or_else(|p| p.into_inner()),
        }
    }

    /// Whether some thread holds the lock (for the tests that check that
    /// driver calls are made under it).
    #[cfg(test)]
    pub(crate) fn is_locked(&self) -> bool {
        matches!(
            self.lock.try_lock(),
            Err(std::sync::TryLockError::WouldBlock)
        )
    }
}

impl LogGuard<'_> {
    pub(crate) fn text(&self) -> String {
        // SAFETY: `buffer` holds `len` initialised bytes until Drop. Every
        // driver call that may write it runs under this lock (see `JitLog`),
        // and none is running: this guard holds the lock.
        let bytes = unsafe { std::slice::from_raw_parts(self.log.buffer, self.log.len) };
        cuda_driver_sys::log_text(bytes)
    }
}

impl Drop for JitLog {
    fn drop(&mut self) {
        // SAFETY: reconstructs the box made in `new`, once. No library holds
        // the pointer any more: `Loaded::drop` unloads before its fields
        // drop, and a failed load leaves no library behind.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.buffer, self.len)) });
    }
}

/// A failed call whose JIT log, if the driver wrote one, goes in the error.
pub(crate) fn check_with_log(
    driver: &Driver,
    call: Call,
    about: About<'_>,
    log: &LogGuard<'_>,
) -> Result<(), ModuleError> {
    check(driver, call, about).map_err(|mut error| {
        if let ModuleError::Call { log: text, .. } = &mut error {
            *text = log.text().into();
        }
        error
    })
}
