//! Compiles spread over child processes. NVRTC runs one compile at a time
//! per process, whatever the threads (measured with NVRTC 13.0 and 13.5:
//! two threads take as long as one, two processes half), and its
//! precompiled headers live at one fixed address per process. So a build
//! forks a child per lent job; each takes the next compile as it finishes
//! one, into the compile cache, and the build then compiles every file as
//! before, from the cache. What the build uses is always what its own `Compiler` returns:
//! a child that fails or stores nothing costs time, never a wrong output.
//!
//! Forking is sound only where the process has one thread (no lock held
//! by a thread the child would lack), so it is done only then: a build
//! script that started no thread of its own, not a test harness.

/// What [`spread`] did.
pub(crate) struct Spread {
    /// This process plus the children that ran.
    pub(crate) processes: usize,
    /// The items for which `work` returned a mark other than 0, with
    /// it, in any order.
    pub(crate) marked: Vec<(usize, u8)>,
}

/// Runs `work` on every item, in order, over this process and a child
/// forked per lent job, when this process has one thread and cargo lends
/// jobs: each process takes the next item not yet taken as it finishes
/// one, so the processes end together however long each item takes.
/// `before_fork` runs once, only when children will be forked (to set up
/// what they would each set up at once); `in_child_at_end` runs in each
/// child after its last item (to finish what it started: the cache's
/// remote writes); `after_child` gets each child's process id once it has
/// ended, however it ended (to remove what it left). `None` when nothing
/// was spread (and no item run).
#[cfg(target_os = "linux")]
pub(crate) fn spread<T>(
    items: &[T],
    work: impl Fn(&T) -> u8,
    before_fork: impl FnOnce(),
    in_child_at_end: impl Fn(),
    after_child: impl Fn(u32),
) -> Option<Spread> {
    if !single_threaded() {
        return None;
    }
    let lent = crate::jobs::Lent::take(items.len().saturating_sub(1));
    if lent.helpers == 0 {
        return None;
    }
    let next = child::SharedCounter::new()?;
    before_fork();
    // Again: `before_fork` may have started a thread.
    if !single_threaded() {
        return None;
    }
    let take = || {
        let mut marked = Vec::new();
        loop {
            let index = next.take();
            let Some(item) = items.get(index) else { break };
            let mark = work(item);
            if mark != 0 {
                marked.push((index, mark));
            }
        }
        marked
    };
    let mut children = Vec::new();
    for _ in 0..lent.helpers {
        let run = || {
            let marked = take();
            in_child_at_end();
            marked
        };
        // SAFETY: checked above, after `before_fork`, that this process
        // has one thread; nothing here since starts one.
        match unsafe { child::Child::fork(run) } {
            Some(child) => children.push(child),
            // No process or pipe to be had: the others do the rest.
            None => break,
        }
    }
    let mut marked = take();
    let processes = children.len() + 1;
    for child in children {
        let pid = child.pid();
        marked.extend(child.wait());
        after_child(pid);
    }
    // The tokens go back only now: a child dropped unwaited (this process
    // unwinding) is killed and reaped first.
    drop(lent);
    Some(Spread { processes, marked })
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn spread<T>(
    _items: &[T],
    _work: impl Fn(&T) -> u8,
    _before_fork: impl FnOnce(),
    _in_child_at_end: impl Fn(),
    _after_child: impl Fn(u32),
) -> Option<Spread> {
    None
}

/// A mark and its index in one word for the pipe: the mark in the top
/// byte (a build never has 2^56 items).
fn encode((index, mark): (usize, u8)) -> u64 {
    (index as u64 & ((1 << 56) - 1)) | (u64::from(mark) << 56)
}

fn decode(word: u64) -> (usize, u8) {
    ((word & ((1 << 56) - 1)) as usize, (word >> 56) as u8)
}

/// Whether this process has exactly one thread, as Linux counts them.
#[cfg(target_os = "linux")]
fn single_threaded() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .is_ok_and(|status| status.lines().any(|line| line == "Threads:\t1"))
}

#[cfg(target_os = "linux")]
mod child {
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A count shared by this process and the children it forks: the
    /// next item to take. It lives in an anonymous shared page, which
    /// forked children share rather than copy.
    pub(super) struct SharedCounter {
        page: std::ptr::NonNull<AtomicUsize>,
    }

    impl SharedCounter {
        /// A counter at 0; `None` when no page could be mapped.
        pub(super) fn new() -> Option<SharedCounter> {
            // SAFETY: mmap(2) with no address hint and no file asks for a
            // fresh zero-filled shared mapping of one counter's size (a
            // page); it touches no existing memory and returns the mapping
            // or MAP_FAILED.
            let page = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    std::mem::size_of::<AtomicUsize>(),
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if page == libc::MAP_FAILED {
                return None;
            }
            std::ptr::NonNull::new(page.cast()).map(|page| SharedCounter { page })
        }

        /// The count before this call, which adds one.
        pub(super) fn take(&self) -> usize {
            // SAFETY: the page is mapped until this counter drops (a
            // child's copy never drops: it ends in `_exit`), page-aligned
            // and so aligned for an `AtomicUsize`, zero-filled (a valid
            // 0), and only ever accessed through this atomic, here and in
            // the children that share it.
            let counter = unsafe { self.page.as_ref() };
            counter.fetch_add(1, Ordering::Relaxed)
        }
    }

    impl Drop for SharedCounter {
        fn drop(&mut self) {
            // SAFETY: the mapping made in `new`, of that length, unmapped
            // once: no reference to it outlives this counter.
            unsafe {
                libc::munmap(
                    self.page.as_ptr().cast(),
                    std::mem::size_of::<AtomicUsize>(),
                );
            }
        }
    }

    /// A forked child, and the pipe its report comes back on. Dropped
    /// without [`wait`](Self::wait) (the parent unwinding), it is killed
    /// and reaped.
    pub(super) struct Child {
        pid: libc::pid_t,
        report: std::io::PipeReader,
        waited: bool,
    }

    impl Drop for Child {
        fn drop(&mut self) {
            if !self.waited {
                // SAFETY: kill(2) with a child's id (not yet reaped, so
                // not reused) and a signal number.
                unsafe { libc::kill(self.pid, libc::SIGKILL) };
                self.reap();
            }
        }
    }

    impl Child {
        /// Forks a child that runs `run`, sends back what it returns and
        /// exits; `None` when no pipe or process could be made.
        ///
        /// # Safety
        /// This process has one thread: a lock another thread held would
        /// stay held in the child forever.
        pub(super) unsafe fn fork(run: impl FnOnce() -> Vec<(usize, u8)>) -> Option<Child> {
            let (report, mut writer) = std::io::pipe().ok()?;
            let parent = std::process::id();
            // SAFETY: fork(2) takes no pointers. The caller vouches that
            // this process has one thread, so no lock (the allocator's,
            // stdout's, NVRTC's) is held by a thread the child lacks: the
            // child may allocate, do I/O and call NVRTC (it never touches
            // the CUDA driver, which is not fork-safe). The child never
            // returns from this block: it ends in `_exit`, so none of the
            // parent's later work, destructors or exit handlers run twice.
            let pid = unsafe { libc::fork() };
            match pid {
                -1 => None,
                0 => {
                    drop(report);
                    // SAFETY: prctl(2) with integer arguments only: the
                    // child gets SIGKILL when the build script ends first
                    // (cargo stopped it), rather than compile on unwatched.
                    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
                    if std::os::unix::process::parent_id() != parent {
                        // SAFETY: `_exit` ends the process at once,
                        // taking only the status.
                        unsafe { libc::_exit(1) }
                    }
                    silence();
                    let marked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run))
                        .unwrap_or_default();
                    let bytes: Vec<u8> = marked
                        .iter()
                        .flat_map(|&marked| super::encode(marked).to_le_bytes())
                        .collect();
                    let status = match writer.write_all(&bytes) {
                        Ok(()) => 0,
                        Err(_) => 1,
                    };
                    // SAFETY: `_exit` ends the process at once, taking
                    // nothing but the status.
                    unsafe { libc::_exit(status) }
                }
                pid => Some(Child {
                    pid,
                    report,
                    waited: false,
                }),
            }
        }

        /// The child's process id.
        pub(super) fn pid(&self) -> u32 {
            self.pid.unsigned_abs()
        }

        /// Waits for the child; what it marked, or nothing when it did not
        /// exit cleanly (its report may then be cut short).
        pub(super) fn wait(mut self) -> Vec<(usize, u8)> {
            let mut bytes = Vec::new();
            let read = self.report.read_to_end(&mut bytes);
            self.waited = true;
            let clean = self.reap();
            if read.is_err() || !clean {
                return Vec::new();
            }
            bytes
                .chunks_exact(8)
                .filter_map(|chunk| chunk.try_into().ok())
                .map(|chunk| super::decode(u64::from_le_bytes(chunk)))
                .collect()
        }
    }

    impl Child {
        /// Reaps the child; whether it exited with status 0.
        fn reap(&self) -> bool {
            let mut status = 0;
            let waited = loop {
                // SAFETY: `status` is a live, writable `c_int`; `pid` is a
                // child of this process not yet waited for.
                let waited = unsafe { libc::waitpid(self.pid, &mut status, 0) };
                if waited != -1
                    || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
                {
                    break waited;
                }
            };
            waited == self.pid && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
        }
    }

    /// Points the child's stdout and stderr at `/dev/null`: whatever it
    /// runs, cargo reads no directive or message twice. A child that
    /// cannot be silenced ends at once.
    fn silence() {
        let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") else {
            // SAFETY: `_exit` ends the process at once, taking only the status.
            unsafe { libc::_exit(1) }
        };
        for fd in [libc::STDOUT_FILENO, libc::STDERR_FILENO] {
            // SAFETY: dup2(2) takes two descriptor numbers, `null` open
            // for the call's length; replacing 1 and 2 closes what they
            // were, which nothing in the child writes to through a handle
            // of its own.
            unsafe { libc::dup2(null.as_raw_fd(), fd) };
        }
    }
}
