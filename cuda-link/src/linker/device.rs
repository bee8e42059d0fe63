//! [`DeviceContext`]: a device's primary context, made current for the
//! driver backend, which links in the calling thread's current context.

use std::cell::RefCell;

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
    /// This guard's entry in the thread's [`GUARDS`].
    token: u64,
    /// What was current when this guard was made: restored on drop if the
    /// thread's guard stack is already gone (a guard dropped while the
    /// thread's locals are destroyed). A raw pointer: not `Send`.
    previous: CUcontext,
}

thread_local! {
    /// The live guards of this thread, oldest first.
    static GUARDS: RefCell<Guards> = const { RefCell::new(Guards::new()) };
}

/// A thread's live guards, oldest first, each with the context to restore
/// when it is the newest one to drop.
#[derive(Debug)]
struct Guards {
    next_token: u64,
    entries: Vec<(u64, CUcontext)>,
}

impl Guards {
    const fn new() -> Self {
        Guards {
            next_token: 0,
            entries: Vec::new(),
        }
    }

    /// Adds the newest guard, made while `previous` was current.
    fn push(&mut self, previous: CUcontext) -> u64 {
        let token = self.next_token;
        self.next_token += 1;
        self.entries.push((token, previous));
        token
    }

    /// Removes guard `token`: the context to make current now if it was the
    /// newest, `None` if a newer guard lives on (and inherits what this one
    /// would have restored) or the token is unknown.
    fn remove(&mut self, token: u64) -> Option<CUcontext> {
        let index = self.entries.iter().position(|&(t, _)| t == token)?;
        let (_, previous) = self.entries.remove(index);
        match self.entries.get_mut(index) {
            Some((_, newer_previous)) => {
                *newer_previous = previous;
                None
            }
            None => Some(previous),
        }
    }
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
        let token = GUARDS.with(|guards| guards.borrow_mut().push(previous));
        // From here, dropping the guard restores `previous` and releases.
        let guard = DeviceContext {
            driver,
            device,
            token,
            previous,
        };
        // SAFETY: a context just retained, alive until `guard` drops.
        ok(unsafe { driver_call!(driver, cuCtxSetCurrent(context)) }?)?;
        Ok(guard)
    }
}

impl Drop for DeviceContext {
    fn drop(&mut self) {
        let restore = GUARDS
            .try_with(|guards| guards.borrow_mut().remove(self.token))
            .unwrap_or(Some(self.previous));
        // SAFETY: `restore` is null or a context that was current on this
        // thread when one of its guards was made; a handle destroyed since
        // is refused by the driver (CUDA_ERROR_INVALID_CONTEXT, as cuda.h
        // documents for handles after cuCtxDestroy). The primary context
        // was retained once by `make_current`. Failures leave nothing to
        // undo.
        unsafe {
            if let Some(context) = restore {
                let _ = self.driver.cuCtxSetCurrent(context);
            }
            let _ = self.driver.cuDevicePrimaryCtxRelease_v2(self.device);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread's current context as the driver would keep it, under
    /// guards that act as `make_current` and `drop` do.
    struct Thread {
        current: usize,
        guards: Guards,
    }

    fn handle(n: usize) -> CUcontext {
        std::ptr::without_provenance_mut(n)
    }

    impl Thread {
        fn make_current(&mut self, context: usize) -> u64 {
            let token = self.guards.push(handle(self.current));
            self.current = context;
            token
        }

        fn drop_guard(&mut self, token: u64) {
            if let Some(context) = self.guards.remove(token) {
                self.current = context.addr();
            }
        }
    }

    #[test]
    fn guards_dropped_out_of_order_restore_the_first_previous() {
        let mut thread = Thread {
            current: 7,
            guards: Guards::new(),
        };
        let a = thread.make_current(1);
        let b = thread.make_current(2);
        thread.drop_guard(a);
        assert_eq!(thread.current, 2, "B lives: its context stays current");
        thread.drop_guard(b);
        assert_eq!(thread.current, 7, "what was current before A");
        assert!(thread.guards.entries.is_empty());
    }

    /// For every drop order of four guards, the current context is always
    /// the newest live guard's, or the original once none is left.
    #[test]
    fn every_drop_order_keeps_the_newest_guard_current() {
        fn orders(items: Vec<usize>) -> Vec<Vec<usize>> {
            if items.len() <= 1 {
                return vec![items];
            }
            let mut all = Vec::new();
            for i in 0..items.len() {
                let mut rest = items.clone();
                let first = rest.remove(i);
                for mut order in orders(rest) {
                    order.insert(0, first);
                    all.push(order);
                }
            }
            all
        }
        for order in orders(vec![0, 1, 2, 3]) {
            let mut thread = Thread {
                current: 100,
                guards: Guards::new(),
            };
            // Guard i makes context 10 + i current.
            let tokens: Vec<u64> = (0..4).map(|i| thread.make_current(10 + i)).collect();
            let mut live = [true; 4];
            for &i in &order {
                thread.drop_guard(tokens[i]);
                live[i] = false;
                let expected = live
                    .iter()
                    .rposition(|&l| l)
                    .map_or(100, |newest| 10 + newest);
                assert_eq!(thread.current, expected, "drop order {order:?}");
            }
        }
    }

    #[test]
    fn an_unknown_token_changes_nothing() {
        let mut guards = Guards::new();
        let token = guards.push(handle(1));
        assert_eq!(guards.remove(token + 1), None);
        assert_eq!(guards.remove(token), Some(handle(1)));
        assert_eq!(guards.remove(token), None);
    }
}
