//! [`DeviceBuffer`] and [`copy_to_device`]: device memory for tests and
//! small programs.

use std::sync::Arc;

use cuda_driver_sys::driver_call;
use cuda_driver_sys::sys::CUdeviceptr;

use crate::context::{Context, ContextInner};
use crate::error::{About, ModuleError, check, driver};

/// Device memory for tests and small programs: allocate, copy, free.
///
/// It keeps its context alive, so freeing never meets a destroyed context
/// or a reused address.
pub struct DeviceBuffer {
    pointer: CUdeviceptr,
    bytes: usize,
    context: Arc<ContextInner>,
}

impl DeviceBuffer {
    /// Copies `data` to a new allocation in `context`.
    pub fn from_slice<T: bytemuck::NoUninit>(
        context: &Context,
        data: &[T],
    ) -> Result<Self, ModuleError> {
        let driver = driver()?;
        let bytes: &[u8] = bytemuck::cast_slice(data);
        context.with_current(|| {
            let mut pointer = 0;
            // SAFETY: an out-pointer, in the pushed context.
            let call =
                unsafe { driver_call!(driver, cuMemAlloc_v2(&mut pointer, bytes.len().max(1))) }?;
            check(driver, call, About::NOTHING)?;
            let buffer = DeviceBuffer {
                pointer,
                bytes: bytes.len(),
                context: Arc::clone(&context.inner),
            };
            // SAFETY: the new allocation holds `bytes.len()` bytes; the
            // source is that many initialised host bytes.
            let call = unsafe {
                driver_call!(
                    driver,
                    cuMemcpyHtoD_v2(pointer, bytes.as_ptr().cast(), bytes.len())
                )
            }?;
            check(driver, call, About::NOTHING)?;
            Ok(buffer)
        })
    }

    /// The device address.
    pub fn pointer(&self) -> CUdeviceptr {
        self.pointer
    }

    /// The size in bytes.
    pub fn len(&self) -> usize {
        self.bytes
    }

    /// Whether the buffer holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// Copies the allocation back into a vector of `T`: as many whole `T`
    /// as it holds. `T` accepts any bit pattern, so any device bytes are a
    /// valid `T`.
    pub fn to_vec<T: bytemuck::AnyBitPattern>(&self) -> Result<Vec<T>, ModuleError> {
        let driver = driver()?;
        let mut out = vec![T::zeroed(); self.bytes / std::mem::size_of::<T>().max(1)];
        let size = std::mem::size_of_val(&out[..]);
        self.context.with_current(|| {
            // SAFETY: `out` holds exactly `size` bytes, no more than the
            // allocation; every byte pattern the copy leaves is a valid `T`.
            let call = unsafe {
                driver_call!(
                    driver,
                    cuMemcpyDtoH_v2(out.as_mut_ptr().cast(), self.pointer, size)
                )
            }?;
            check(driver, call, About::NOTHING)
        })?;
        Ok(out)
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        if let Ok(driver) = driver() {
            let _ = self.context.with_current(|| {
                // SAFETY: frees what `from_slice` allocated, once, in its
                // context, which this buffer keeps alive.
                let _ = unsafe { driver.cuMemFree_v2(self.pointer) };
                Ok(())
            });
        }
    }
}

/// Copies host values to a device address, e.g. a global from
/// `Library::global`.
///
/// # Safety
/// `destination` must be valid for writes of `size_of_val(data)` bytes in
/// the current context: device memory, or under unified addressing also
/// managed, pinned or registered host memory, which this call writes as
/// ordinary memory. Nothing may read or write those bytes concurrently.
pub unsafe fn copy_to_device<T: bytemuck::NoUninit>(
    destination: CUdeviceptr,
    data: &[T],
) -> Result<(), ModuleError> {
    let driver = driver()?;
    let bytes: &[u8] = bytemuck::cast_slice(data);
    // SAFETY: the caller vouches for the destination; the source is
    // `bytes.len()` initialised host bytes.
    let call = unsafe {
        driver_call!(
            driver,
            cuMemcpyHtoD_v2(destination, bytes.as_ptr().cast(), bytes.len())
        )
    }?;
    check(driver, call, About::NOTHING)
}
