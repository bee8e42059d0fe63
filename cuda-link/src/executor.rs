//! [`Executor`]: who runs the independent links of a multi-arch link, so
//! that a build script can run them under cargo's jobserver and a program
//! on threads of its own, through the same pipeline.

use std::sync::Mutex;

/// Runs a batch of independent jobs. [`Linker::link_fatbin`] hands it one
/// job per target; cuda-build's executor runs them on as many threads as
/// cargo's jobserver lends, [`ThreadPerJob`] (the default) on a thread
/// each.
///
/// [`Linker::link_fatbin`]: crate::Linker::link_fatbin
pub trait Executor: Send + Sync {
    /// Calls `job(i)` once for every `i` in `0..count`, as many at once as
    /// the executor allows (the calling thread may run some itself), and
    /// returns when every call has returned. A job that panics may end the
    /// batch early; the panic is then resumed in the caller.
    fn run(&self, count: usize, job: &(dyn Fn(usize) + Sync));
}

/// A thread per job, the caller's thread running the first.
#[derive(Debug, Clone, Copy, Default)]
pub struct ThreadPerJob;

impl Executor for ThreadPerJob {
    fn run(&self, count: usize, job: &(dyn Fn(usize) + Sync)) {
        std::thread::scope(|scope| {
            for index in 1..count {
                scope.spawn(move || job(index));
            }
            if count > 0 {
                job(0);
            }
        });
    }
}

/// `work` of every index in `0..count` on `executor`, the results in
/// order; `None` for a job an executor did not run.
pub(crate) fn map<R: Send>(
    executor: &dyn Executor,
    count: usize,
    work: impl Fn(usize) -> R + Sync,
) -> Vec<Option<R>> {
    let slots: Vec<Mutex<Option<R>>> = (0..count).map(|_| Mutex::new(None)).collect();
    executor.run(count, &|index| {
        let result = work(index);
        *slots[index].lock().unwrap_or_else(|p| p.into_inner()) = Some(result);
    });
    slots
        .into_iter()
        .map(|slot| slot.into_inner().unwrap_or_else(|p| p.into_inner()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_order() {
        let expected: Vec<_> = (0..20).map(|i| Some(i * 3)).collect();
        assert_eq!(map(&ThreadPerJob, 20, |i| i * 3), expected);
        assert!(map(&ThreadPerJob, 0, |i| i).is_empty());
    }

    /// An executor that skips a job gives `None` for it, not a panic.
    #[test]
    fn a_job_not_run_is_none() {
        struct Lazy;
        impl Executor for Lazy {
            fn run(&self, count: usize, job: &(dyn Fn(usize) + Sync)) {
                (1..count).for_each(job);
            }
        }
        assert_eq!(map(&Lazy, 3, |i| i), [None, Some(1), Some(2)]);
    }
}
