//! A process-wide lock that a fork never copies held: the forking thread
//! takes it before the fork and both sides release it after, so a child
//! never starts with it held by a thread it does not have (its first use
//! would wait forever). The pool of link workers and the in-memory tier
//! each make their lock so, and so does `cuda-compile`'s memo of include
//! closures (hence exported, hidden: not part of the API).

/// Defines `fn $name()`, which registers (once) `pthread_atfork`
/// handlers that hold `$lock` (a `static Mutex<$ty>`) across every fork.
/// Call it before each use of the lock; it does nothing off Unix.
#[doc(hidden)]
#[macro_export]
macro_rules! hold_across_forks {
    ($name:ident, $lock:path, $ty:ty) => {
        fn $name() {
            #[cfg(unix)]
            {
                thread_local! {
                    static HELD: std::cell::RefCell<Option<std::sync::MutexGuard<'static, $ty>>> =
                        const { std::cell::RefCell::new(None) };
                }
                extern "C" fn before() {
                    let guard = $lock
                        .lock()
                        .unwrap_or_else(|poisoned| poisoned.into_inner());
                    let _ = HELD.try_with(|held| *held.borrow_mut() = Some(guard));
                }
                extern "C" fn after() {
                    let _ = HELD.try_with(|held| held.borrow_mut().take());
                }
                static REGISTERED: std::sync::Once = std::sync::Once::new();
                REGISTERED.call_once(|| {
                    // SAFETY: three handlers that take and release one
                    // lock, run by the forking thread around each fork;
                    // they never unwind (a poisoned lock is taken as it
                    // is).
                    unsafe {
                        $crate::forks::pthread_atfork(Some(before), Some(after), Some(after))
                    };
                });
            }
        }
    };
}

#[cfg(unix)]
#[doc(hidden)]
pub use libc::pthread_atfork;

/// Who owns a piece of process-wide state: the process id and the
/// [`fork_epoch`]. State whose owner is not [`Owner::current`] was copied
/// by a fork and is not this process's to use.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Owner {
    /// The process id.
    pub pid: u32,
    epoch: u64,
}

impl Owner {
    /// No process: what a static holds before its first use (the
    /// default).
    pub const NONE: Owner = Owner { pid: 0, epoch: 0 };

    /// This process.
    pub fn current() -> Owner {
        Owner {
            pid: std::process::id(),
            epoch: fork_epoch(),
        }
    }
}

/// How many forks separate this process from the one that first asked:
/// 0 there, bumped in each child by a `pthread_atfork` handler (registered
/// on the first call). With the process id it tells a fork's child apart
/// even where the ids coincide (a child that is PID 1 of a new namespace,
/// as its parent was of its own).
fn fork_epoch() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static EPOCH: AtomicU64 = AtomicU64::new(0);
    #[cfg(unix)]
    {
        extern "C" fn child() {
            EPOCH.fetch_add(1, Ordering::Relaxed);
        }
        static REGISTERED: std::sync::Once = std::sync::Once::new();
        // SAFETY: a handler run in the child after each fork, which bumps
        // an atomic and never unwinds.
        REGISTERED.call_once(|| unsafe {
            libc::pthread_atfork(None, None, Some(child));
        });
    }
    EPOCH.load(Ordering::Relaxed)
}
