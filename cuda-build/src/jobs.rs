//! Work spread over threads as cargo allows: a thread per jobserver token
//! free when the work starts (the build script's own token runs the
//! first), or `NUM_JOBS` / the cores when not run by cargo's jobserver.

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
    let helpers = items.len().saturating_sub(1);
    std::thread::scope(|scope| {
        match jobserver() {
            Some(client) => {
                // Tokens free now: a helper thread each, holding its token
                // until the queue is empty. None blocks waiting for one.
                for _ in 0..helpers {
                    match client.try_acquire() {
                        Ok(Some(token)) => {
                            let worker = &worker;
                            scope.spawn(move || {
                                worker();
                                drop(token);
                            });
                        }
                        _ => break,
                    }
                }
            }
            None => {
                for _ in 0..helpers.min(local_parallelism().saturating_sub(1)) {
                    scope.spawn(worker);
                }
            }
        }
        worker();
    });
    results
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .unwrap_or_else(|p| p.into_inner())
                .expect("every item was run")
        })
        .collect()
}

/// Cargo's jobserver, when this process was started by cargo with one.
fn jobserver() -> Option<&'static jobserver::Client> {
    static CLIENT: std::sync::OnceLock<Option<jobserver::Client>> = std::sync::OnceLock::new();
    CLIENT
        .get_or_init(|| {
            // SAFETY: `from_raw_fd` on the descriptors CARGO_MAKEFLAGS
            // names. They are used only if they are pipes (`check_pipe`),
            // and the client lives in this static, so they are never
            // closed under their owner; a process whose variable names
            // another pipe loses a byte of it to a token read: I/O, not
            // memory unsafety. Cargo passes its jobserver this way, and
            // `cc` reads it the same way.
            unsafe { jobserver::Client::from_env_ext(true) }.client.ok()
        })
        .as_ref()
}

/// `NUM_JOBS` (cargo's `-j`), else the cores.
fn local_parallelism() -> usize {
    std::env::var("NUM_JOBS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .max(1)
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_come_back_in_order() {
        let items: Vec<u32> = (0..50).collect();
        assert_eq!(
            super::run_all(&items, |n| n * 2),
            (0..50).map(|n| n * 2).collect::<Vec<_>>()
        );
    }
}
