//! Work spread as cargo allows: a helper (thread or child process) per
//! jobserver token free when the work starts (the build script's own token
//! runs the first; a token freed later is not picked up, so nothing ever
//! waits for one), or `NUM_JOBS` / the cores without cargo's jobserver or
//! where it cannot be polled.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Runs `work` on every item, on as many threads as cargo lends, and
/// returns the results in the items' order.
pub(crate) fn run_all<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let results: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let worker = || {
        loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(index) else { break };
            let result = work(item);
            *results[index].lock().unwrap_or_else(|p| p.into_inner()) = Some(result);
        }
    };
    let lent = Lent::take(items.len().saturating_sub(1));
    std::thread::scope(|scope| {
        for _ in 0..lent.helpers {
            scope.spawn(worker);
        }
        worker();
    });
    drop(lent);
    results
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .unwrap_or_else(|p| p.into_inner())
                .expect("every item was run")
        })
        .collect()
}

/// The linker's [`Executor`](cuda_link::Executor) in a build script: the
/// per-target links of a fatbin run as [`run_all`] runs work.
pub(crate) struct Jobserver;

impl cuda_link::Executor for Jobserver {
    fn run(&self, count: usize, job: &(dyn Fn(usize) + Sync)) {
        let indices: Vec<usize> = (0..count).collect();
        run_all(&indices, |&index| job(index));
    }
}

/// Helpers running now without cargo's jobserver, across nested
/// [`run_all`]s: a nested call gets what the outer one left.
static LOCAL_HELPERS: AtomicUsize = AtomicUsize::new(0);

/// Helpers this process may run besides itself (threads or child
/// processes), with the jobserver tokens that pay for them: held until
/// dropped, once the helpers are done.
pub(crate) struct Lent {
    pub(crate) helpers: usize,
    /// Of `helpers`, those counted in [`LOCAL_HELPERS`].
    local: usize,
    _tokens: Vec<jobserver::Acquired>,
}

impl Lent {
    /// Up to `wanted` helpers: a token each that is free now (none waited
    /// for), or `NUM_JOBS` / the cores less this process without cargo's
    /// jobserver or where it cannot be polled.
    pub(crate) fn take(wanted: usize) -> Lent {
        let mut tokens = Vec::new();
        let mut polled = false;
        if let Some(client) = jobserver() {
            while tokens.len() < wanted {
                match client.try_acquire() {
                    Ok(Some(token)) => {
                        polled = true;
                        tokens.push(token);
                    }
                    Ok(None) => {
                        polled = true;
                        break;
                    }
                    // Not pollable here (no /dev/fd): as without it.
                    Err(_) => break,
                }
            }
        }
        let (helpers, local) = match polled {
            true => (tokens.len(), 0),
            false => {
                let limit = local_parallelism().saturating_sub(1);
                let mut local = 0;
                let _ = LOCAL_HELPERS.fetch_update(Ordering::AcqRel, Ordering::Acquire, |busy| {
                    local = wanted.min(limit.saturating_sub(busy));
                    Some(busy + local)
                });
                (local, local)
            }
        };
        Lent {
            helpers,
            local,
            _tokens: tokens,
        }
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        LOCAL_HELPERS.fetch_sub(self.local, Ordering::AcqRel);
    }
}

/// Connects to cargo's jobserver, if this process has one; called first
/// thing in `Build::compile`, before this crate opens any file.
pub(crate) fn init() {
    let _ = jobserver();
}

/// Cargo's jobserver, when this process was started by cargo with one.
fn jobserver() -> Option<&'static jobserver::Client> {
    static CLIENT: std::sync::OnceLock<Option<jobserver::Client>> = std::sync::OnceLock::new();
    CLIENT
        .get_or_init(|| {
            // SAFETY: `from_env_ext` opens its own copies (`/dev/fd/N`, or
            // a dup) of the descriptor numbers CARGO_MAKEFLAGS names and
            // takes no ownership; it needs those numbers to still be the
            // jobserver's. Cargo hands them open to the build script, this
            // runs at the start of `Build::compile`, before this crate
            // opens anything, and `check_pipe` refuses a descriptor that
            // is not a pipe. Should a build script have reused the numbers
            // for another pipe, a token read or write moves a byte of it:
            // I/O, never memory.
            unsafe { jobserver::Client::from_env_ext(true) }.client.ok()
        })
        .as_ref()
}

/// `NUM_JOBS` (cargo's `-j`), else the cores.
fn local_parallelism() -> usize {
    crate::env::var("NUM_JOBS")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .max(1)
}

#[cfg(test)]
mod tests {
    /// The tests that take helpers, one at a time: they share the count.
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn results_come_back_in_order() {
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        let items: Vec<u32> = (0..50).collect();
        assert_eq!(
            super::run_all(&items, |n| n * 2),
            (0..50).map(|n| n * 2).collect::<Vec<_>>()
        );
    }
}
