//! Launches captured into a CUDA graph. A graph runs its kernels whenever
//! it is launched, long after the capture, and `cuLibraryUnload` does not
//! wait for graphs that refer to the library: a graph launched after the
//! last `Library` and `Kernel` were dropped ran unloaded code (SIGSEGV on
//! the H100, 16 of 16 runs). So a launch onto a capturing stream hands the
//! graph a reference to the loaded code, as a CUDA user object: the driver
//! drops it once the graph, every executable graph made from it and their
//! launches are gone.
//!
//! The driver calls a user object's destructor on a thread of its own,
//! where no CUDA call may be made; unloading makes some. So the destructor
//! only passes the reference to this crate's unloading thread, which drops
//! it there.

use std::ffi::c_void;
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Mutex};

use cuda_driver_sys::Driver;
use cuda_driver_sys::driver_call;
use cuda_driver_sys::sys::{
    CUgraph, CUstream, CUstreamCaptureStatus_enum, CUuserObject, CUuserObject_flags_enum,
    CUuserObjectRetain_flags_enum,
};

use crate::error::{About, ModuleError, check};
use crate::loaded::Loaded;

/// When `stream` is capturing, makes the graph it captures into hold
/// `loaded` until the graph and its executable graphs are destroyed. A
/// stream that is not capturing costs one driver query.
///
/// # Errors
/// A failed query or user-object call: the launch must not be captured,
/// since nothing would keep the code loaded for the graph.
pub(crate) fn hold_for_graph(
    driver: &Driver,
    stream: CUstream,
    loaded: &Arc<Loaded>,
    about: About<'_>,
) -> Result<(), ModuleError> {
    let mut status = CUstreamCaptureStatus_enum::CU_STREAM_CAPTURE_STATUS_NONE;
    let mut graph: CUgraph = std::ptr::null_mut();
    // SAFETY: out-pointers for the status and the graph; the other
    // outputs are optional and null. A stream the caller vouched for, or
    // null. (`_v3` is 12.3's.)
    let call = unsafe {
        driver_call!(
            driver,
            cuStreamGetCaptureInfo_v3(
                stream,
                &mut status,
                std::ptr::null_mut(),
                &mut graph,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        )
    };
    // 11.3's, which cuda.h 13.0 no longer declares.
    #[cfg(not(feature = "cuda-13000"))]
    // SAFETY: as above.
    let call = call.or_else(|_| unsafe {
        driver_call!(
            driver,
            cuStreamGetCaptureInfo_v2(
                stream,
                &mut status,
                std::ptr::null_mut(),
                &mut graph,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        )
    });
    let call = match call {
        Ok(call) => call,
        // A driver with neither names no graph: a launch that is not
        // captured goes on, a captured one is refused.
        Err(missing) => {
            // SAFETY: an out-pointer for the status; the stream as above.
            let call = unsafe { driver_call!(driver, cuStreamIsCapturing(stream, &mut status)) }?;
            check(driver, call, about)?;
            return match status {
                CUstreamCaptureStatus_enum::CU_STREAM_CAPTURE_STATUS_NONE => Ok(()),
                _ => Err(missing.into()),
            };
        }
    };
    check(driver, call, about)?;
    // An invalidated capture makes no graph: the launch itself fails.
    if status != CUstreamCaptureStatus_enum::CU_STREAM_CAPTURE_STATUS_ACTIVE || graph.is_null() {
        return Ok(());
    }
    let held = Arc::into_raw(Arc::clone(loaded))
        .cast_mut()
        .cast::<c_void>();
    let mut object: CUuserObject = std::ptr::null_mut();
    // SAFETY: `held` is a reference `release` takes back exactly once, when
    // the driver destroys the object; an out-pointer for the object.
    let created = unsafe {
        driver_call!(
            driver,
            cuUserObjectCreate(
                &mut object,
                held,
                Some(release),
                1,
                CUuserObject_flags_enum::CU_USER_OBJECT_NO_DESTRUCTOR_SYNC.0,
            )
        )
    };
    if let Err(error) = created
        .map_err(ModuleError::from)
        .and_then(|call| check(driver, call, about))
    {
        // SAFETY: the driver did not take `held`: it is still ours.
        drop(unsafe { Arc::from_raw(held.cast_const().cast::<Loaded>()) });
        return Err(error);
    }
    // SAFETY: a live graph of a capturing stream and the object just made;
    // MOVE hands our one reference to the graph.
    let retained = unsafe {
        driver_call!(
            driver,
            cuGraphRetainUserObject(
                graph,
                object,
                1,
                CUuserObjectRetain_flags_enum::CU_GRAPH_USER_OBJECT_MOVE.0,
            )
        )
    };
    retained
        .map_err(ModuleError::from)
        .and_then(|call| check(driver, call, about))
        .inspect_err(|_| {
            // SAFETY: our reference to the object, not moved: releasing it
            // destroys the object, and `release` takes `held` back.
            let _ = unsafe { driver_call!(driver, cuUserObjectRelease(object, 1)) };
        })
}

/// The user object's destructor: hands the reference to the unloading
/// thread. Runs on a driver thread, where no CUDA call may be made; it
/// cannot panic.
unsafe extern "C" fn release(held: *mut c_void) {
    // SAFETY: `held` came from `Arc::into_raw` in `hold_for_graph`, and the
    // driver calls this once per object.
    let loaded = unsafe { Arc::from_raw(held.cast_const().cast::<Loaded>()) };
    unload_later(loaded);
}

/// The unloading thread's queue, with the process that started it (a
/// forked child has no such thread).
static UNLOADER: Mutex<Option<(cuda_link::forks::Owner, Sender<Arc<Loaded>>)>> = Mutex::new(None);

/// Drops `loaded` on the unloading thread, started at the first call. If
/// no thread can be had, the code stays loaded: leaking it is safe,
/// unloading on the driver's thread is not.
fn unload_later(loaded: Arc<Loaded>) {
    let mut slot = UNLOADER.lock().unwrap_or_else(|p| p.into_inner());
    let current = cuda_link::forks::Owner::current();
    if slot.as_ref().is_none_or(|(owner, _)| *owner != current) {
        let (sender, receiver) = channel::<Arc<Loaded>>();
        let started = std::thread::Builder::new()
            .name("cuda-module-unload".into())
            .spawn(move || receiver.into_iter().for_each(drop));
        *slot = started.ok().map(|_| (current, sender));
    }
    match slot.as_ref() {
        Some((_, sender)) => {
            if let Err(unsent) = sender.send(loaded) {
                std::mem::forget(unsent.0);
            }
        }
        None => std::mem::forget(loaded),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use crate::{LaunchConfig, LoadOptions, stub};

    #[test]
    fn a_captured_launch_keeps_the_code_loaded_until_its_graph_goes() {
        let context = stub::created();
        let (library, kernel) = stub::kernel("captured", LoadOptions::default());
        let loaded = Arc::downgrade(&kernel.inner.loaded);
        let mut params = [std::ptr::null_mut(); 4];
        for stream in [stub::CAPTURING, std::ptr::null_mut()] {
            // SAFETY: the stub runs no kernel.
            unsafe {
                kernel.launch(
                    &context,
                    stream,
                    LaunchConfig::for_elements(1, 1),
                    &mut params,
                )
            }
            .unwrap();
        }
        drop((library, kernel));
        assert_eq!(loaded.strong_count(), 1, "the graph holds the code");
        // One user object: the launch that was not captured handed none.
        assert_eq!(stub::destroy_graph(), 1);
        let deadline = Instant::now() + Duration::from_secs(10);
        while loaded.strong_count() > 0 {
            assert!(
                Instant::now() < deadline,
                "not unloaded after the graph went"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}
