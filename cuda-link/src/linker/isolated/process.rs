//! A worker process as its caller holds it: the fork that makes it, and
//! the ways it ends. A worker ends with the process that made it: it arms
//! a parent-death signal, then checks that its parent is still the one
//! that forked it (the parent may have died in between). Its caller
//! signals it only through a pidfd, which names that process and no other
//! even after its pid is reused; where the kernel has none (before 5.3),
//! only while `waitpid` says it is still an unreaped child of ours.
//!
//! After a fork, what a child inherited of its parent's workers is let go
//! (`disown`): the socket and the shared file are closed when they are
//! still what was inherited, the pidfd and the mapping are left alone.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use super::super::LinkError;
use super::shared::Shared;
use super::{Library, os_failure};

/// `waitid`'s id type for a pidfd (Linux 5.4), which `libc` does not name.
const P_PIDFD: libc::idtype_t = 3;

/// A worker process, the socket it listens on and the memory it shares.
pub(super) struct Worker {
    pid: libc::pid_t,
    /// The worker's pidfd, where the kernel makes one.
    pidfd: Option<OwnedFd>,
    pub(super) socket: OwnedFd,
    pub(super) shared: Shared,
    /// The library it was forked with: the worker calls it at the same
    /// address, and holding it keeps that address from another library.
    pub(super) lib: Library,
    /// The process that forked it, the only one that may use it.
    owner: u32,
    /// What the socket and the shared file are, to tell them from other
    /// files given the same numbers after a fork.
    identities: [Option<(u64, u64)>; 2],
}

impl Worker {
    /// Forks a worker for `lib` from the calling thread, which must live
    /// as long as the process: the parent-death signal fires when the
    /// thread that forked ends (see `pool`'s spawning thread).
    pub(super) fn spawn(lib: &Library) -> Result<Self, LinkError> {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors socketpair writes.
        let made = unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        };
        if made != 0 {
            return Err(os_failure("socketpair"));
        }
        // SAFETY: both descriptors were just created and are owned by no one else.
        let (ours, theirs) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let shared = Shared::create()?;
        let owner = std::process::id();
        // SAFETY: the child runs only `start`, which never returns (see the
        // module docs of `isolated` for why that is sound after a fork of a
        // threaded process).
        match unsafe { libc::fork() } {
            -1 => Err(os_failure("fork")),
            0 => start(theirs, shared.fd(), lib, owner),
            pid => {
                drop(theirs);
                let pidfd = pidfd_open(pid);
                let identities = [identity(ours.as_raw_fd()), identity(shared.fd())];
                Ok(Worker {
                    pid,
                    pidfd,
                    socket: ours,
                    shared,
                    lib: lib.clone(),
                    owner,
                    identities,
                })
            }
        }
    }

    /// The process that forked this worker.
    pub(super) fn owner(&self) -> u32 {
        self.owner
    }

    pub(super) fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// Whether an idle worker is still there to take a request: its socket
    /// has no end of file (an idle worker writes nothing, so anything to
    /// read means it is gone) and, with a pidfd, its process has not ended.
    pub(super) fn is_alive(&self) -> bool {
        let mut polls = [
            libc::pollfd {
                fd: self.socket.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: self.pidfd.as_ref().map_or(-1, AsRawFd::as_raw_fd),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        loop {
            // SAFETY: two pollfds (a negative descriptor is skipped); no wait.
            let ready = unsafe { libc::poll(polls.as_mut_ptr(), 2, 0) };
            let interrupted = ready < 0
                && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted;
            if !interrupted {
                return ready == 0;
            }
        }
    }

    /// Kills and reaps the worker; how it ended.
    pub(super) fn stop(self) -> Option<i32> {
        match self.kill() {
            Some(ended) => Some(ended),
            None => self.reap(0).flatten(),
        }
    }

    /// Sends `SIGKILL` to this worker and no other process; how it ended,
    /// if that was found out (and it was reaped) on the way.
    fn kill(&self) -> Option<i32> {
        match &self.pidfd {
            // SAFETY: a pidfd of our child; a signal and no info.
            Some(pidfd) => unsafe {
                libc::syscall(
                    libc::SYS_pidfd_send_signal,
                    pidfd.as_raw_fd(),
                    libc::SIGKILL,
                    std::ptr::null::<libc::siginfo_t>(),
                    0,
                );
            },
            // Unreaped, the pid is still our child's and cannot be reused.
            None => match self.reap(libc::WNOHANG) {
                // SAFETY: `pid` is our running child, not yet reaped.
                Some(None) => unsafe {
                    libc::kill(self.pid, libc::SIGKILL);
                },
                Some(Some(ended)) => return Some(ended),
                None => {}
            },
        }
        None
    }

    /// `waitpid`: `Some(None)` while it runs (with `WNOHANG`),
    /// `Some(Some(code))` once it ended (`-signal` for a signal), `None`
    /// if it cannot be waited for (an application that ignores `SIGCHLD`
    /// has the kernel reap its children).
    fn reap(&self, flags: i32) -> Option<Option<i32>> {
        let mut status = 0;
        loop {
            // SAFETY: `pid` is our child and `status` an out-pointer.
            let waited = unsafe { libc::waitpid(self.pid, &mut status, flags) };
            if waited == 0 {
                return Some(None);
            }
            if waited == self.pid {
                break;
            }
            if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                return None;
            }
        }
        Some(Some(if libc::WIFSIGNALED(status) {
            -libc::WTERMSIG(status)
        } else {
            libc::WEXITSTATUS(status)
        }))
    }

    /// Lets go of a worker that another process (the parent of a fork)
    /// owns, without signalling or waiting for it: its descriptors are
    /// closed where they are still the ones inherited, and its memory is
    /// not unmapped (a fork does not copy that mapping, and the address
    /// may hold another by now).
    pub(super) fn disown(self) {
        let Worker {
            socket,
            shared,
            pidfd,
            identities,
            ..
        } = self;
        // A pidfd's identity is the one anonymous inode that epoll and
        // eventfd descriptors share on older kernels: it cannot be told
        // from a file of the child's own, so it is left open.
        std::mem::forget(pidfd);
        for (fd, identity) in [socket, shared.disown()].into_iter().zip(identities) {
            match identity.is_some() && self::identity(fd.as_raw_fd()) == identity {
                true => drop(fd),
                // A child that closed its descriptors may have reused the
                // number for a file of its own.
                false => std::mem::forget(fd),
            }
        }
    }
}

/// The device and inode of an open descriptor.
fn identity(fd: RawFd) -> Option<(u64, u64)> {
    // SAFETY: `stat` is plain data, filled by fstat before it is read.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: an out-pointer to a `stat`; a closed number only fails.
    let open = unsafe { libc::fstat(fd, &mut stat) } == 0;
    open.then_some((stat.st_dev, stat.st_ino))
}

/// A pidfd for our child `pid` (Linux 5.3+), checked to name our child:
/// where the kernel reaps children unasked (`SIGCHLD` ignored), a worker
/// that ended at once could have had its pid reused.
fn pidfd_open(pid: libc::pid_t) -> Option<OwnedFd> {
    // SAFETY: the call takes a pid and flags; a descriptor comes back.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    let fd = RawFd::try_from(fd).ok().filter(|&fd| fd >= 0)?;
    // SAFETY: a descriptor just made, owned by no one else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: `siginfo_t` is plain data, and an out-pointer for waitid,
    // which only looks (WNOWAIT) and does not wait (WNOHANG).
    let ours = unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        libc::waitid(
            P_PIDFD,
            fd.as_raw_fd() as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        ) == 0
            || std::io::Error::last_os_error().raw_os_error() != Some(libc::ECHILD)
    };
    if !ours {
        return None;
    }
    // Close it in programs the caller executes.
    // SAFETY: a valid descriptor and a flag.
    unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) };
    Some(fd)
}

/// The child's side: arm the parent-death signal, check the parent is
/// still `owner`, then serve.
fn start(socket: OwnedFd, shared: RawFd, lib: &Library, owner: u32) -> ! {
    // SAFETY: prctl with an option and a signal number.
    let armed = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) } == 0;
    // SAFETY: getppid has no preconditions.
    let parent = unsafe { libc::getppid() };
    if !armed || u32::try_from(parent).ok() != Some(owner) {
        // SAFETY: `_exit` ends the worker without running the caller's
        // atexit handlers or destructors.
        unsafe { libc::_exit(1) }
    }
    super::serve(socket, shared, lib)
}
