//! nvJitLink, or libNVVM, in a worker process: a crash, an abort or a hang
//! on an input's contents becomes a [`LinkError`] (or an
//! [`NvvmFailure`](crate::nvvm_program::NvvmFailure)), and the caller's process is
//! untouched.
//!
//! A worker is a `fork` of the caller, made after nvJitLink is loaded, and
//! it serves links until it dies or the caller exits: it needs nothing
//! installed and no hook in `main`. A fork per link cost 9 ms on a 10 ms
//! link (page tables, then copy-on-write faults in the caller too), and a
//! re-exec (`procspawn`'s design) costs a process start and a fresh load of
//! a 50 MB library; a kept worker costs one copy of the inputs into the
//! memory it shares with the caller (`shared.rs`) and a socket round trip
//! of two lengths. Workers are pooled per library, one per concurrent link.
//!
//! A worker first closes every descriptor it inherited but its socket and
//! its shared file (a kept pipe end would hide an EOF from its reader),
//! then reads requests,
//! links with nvJitLink's own code on memory it has, and answers. It leaves
//! with `_exit`, running no destructor and flushing none of the caller's
//! buffers. glibc's `fork` resets its allocator's locks in the child, so
//! the worker may allocate; a lock that another thread of the caller held
//! at the fork stays held in the worker, and the deadline turns that rare
//! hang into [`LinkError::TimedOut`]. A worker that crashed or timed out is
//! reaped and replaced by the next link.
//!
//! A worker belongs to the process that forked it (`pool.rs`): a child of
//! the caller never uses or signals its parent's workers, and forks its
//! own. A worker ends with that process: a parent-death signal, armed in
//! the worker and checked against its parent's pid (`process.rs`), ends
//! it mid-link when its caller is killed. It maps its own shared memory
//! and no other worker's (`MADV_DONTFORK`).
//!
//! What this contains is an input that crashes, hangs or runs away in
//! nvJitLink; it is no sandbox: a worker runs with the caller's user,
//! files and memory as they were at the fork.
//!
//! The driver backend cannot run here: CUDA does not survive a fork.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nvjitlink_sys::NvJitLink;

#[cfg(feature = "nvvm")]
mod nvvm_wire;
mod pool;
mod process;
mod shared;
mod wire;

use super::{LinkError, Logs, OutputKind};
use crate::object_code::ObjectCode;
use shared::Shared;
use wire::{decode, decode_request, encode};

/// No answer of a worker is larger (a linked image and two logs).
const MAX_ANSWER: u64 = 1 << 34;
/// A worker whose shared file grew past this is stopped after its link,
/// not kept: the file cannot shrink, and it holds memory.
const MAX_KEPT_SHARED: usize = 64 << 20;

fn os_failure(call: &str) -> LinkError {
    LinkError::Isolation {
        detail: format!("{call}: {}", std::io::Error::last_os_error()),
    }
}

/// The library a worker is forked to call: it calls it at the address
/// the caller loaded it at, and holding it keeps that address from
/// another library.
#[derive(Clone)]
pub(super) enum Library {
    NvJitLink(Arc<NvJitLink>),
    #[cfg(feature = "nvvm")]
    Nvvm(Arc<nvvm_sys::Nvvm>),
}

impl Library {
    /// Whether both are the same loaded library.
    fn is(&self, other: &Library) -> bool {
        match (self, other) {
            (Library::NvJitLink(a), Library::NvJitLink(b)) => Arc::ptr_eq(a, b),
            #[cfg(feature = "nvvm")]
            (Library::Nvvm(a), Library::Nvvm(b)) => Arc::ptr_eq(a, b),
            #[cfg(feature = "nvvm")]
            _ => false,
        }
    }
}

/// Runs [`super::nvjitlink::link`] in a worker, within `timeout` and
/// `memory_limit` (resident bytes).
pub(super) fn link(
    lib: &Arc<NvJitLink>,
    flags: &[String],
    inputs: &[ObjectCode],
    output: OutputKind,
    timeout: Option<Duration>,
    memory_limit: Option<u64>,
) -> Result<(Vec<u8>, Logs), LinkError> {
    let names = || inputs.iter().map(|i| i.name().to_owned()).collect();
    let request = Request {
        len: wire::request_len(flags, inputs, output),
        write: &|out| wire::write_request(out, flags, inputs, output),
        names: &names,
    };
    let limits = (timeout, memory_limit);
    round_trip(
        &Library::NvJitLink(Arc::clone(lib)),
        &request,
        limits,
        |answer| decode(answer, inputs),
    )
}

/// Runs libNVVM's calls (`nvvm_program::run`) in a worker, within
/// `timeout` and `memory_limit`; the worker's failures are
/// [`NvvmFailure::Crashed`](crate::nvvm_program::NvvmFailure::Crashed).
#[cfg(feature = "nvvm")]
pub(crate) fn compile_nvvm(
    lib: &Arc<nvvm_sys::Nvvm>,
    raw: &crate::nvvm_program::RawRequest<'_>,
    timeout: Option<Duration>,
    memory_limit: Option<u64>,
) -> Result<crate::nvvm_program::NvvmOutput, crate::nvvm_program::NvvmFailure> {
    let names = || {
        raw.modules
            .iter()
            .map(|(name, _)| (*name).to_owned())
            .collect()
    };
    let request = Request {
        len: nvvm_wire::request_len(raw),
        write: &|out| nvvm_wire::write_request(out, raw),
        names: &names,
    };
    let limits = (timeout, memory_limit);
    let answer = round_trip(
        &Library::Nvvm(Arc::clone(lib)),
        &request,
        limits,
        |answer| nvvm_wire::decode(answer, raw),
    );
    answer.unwrap_or_else(|error| {
        Err(crate::nvvm_program::NvvmFailure::Crashed {
            modules: names(),
            how: match error {
                LinkError::Crashed { how, .. } => how,
                LinkError::TimedOut { timeout, .. } => {
                    format!("ran past its {timeout:?} deadline and was stopped")
                }
                LinkError::MemoryLimit { limit, .. } => {
                    format!("grew past its memory limit of {limit} bytes and was stopped")
                }
                other => format!("could not run in a worker process: {other}"),
            },
        })
    })
}

/// A request as the round trip writes it.
struct Request<'a> {
    len: usize,
    write: &'a dyn Fn(&mut [u8]),
    /// The inputs' names, for errors.
    names: &'a dyn Fn() -> Vec<String>,
}

/// One request to a worker of `lib` and its decoded answer, within the
/// limits `(timeout, memory_limit)`.
fn round_trip<T>(
    lib: &Library,
    request: &Request<'_>,
    (timeout, memory_limit): (Option<Duration>, Option<u64>),
    decode: impl FnOnce(&[u8]) -> Result<T, LinkError>,
) -> Result<T, LinkError> {
    let names = request.names;
    let taken_phase = phase!("worker");
    let mut worker = pool::take(lib)?;
    drop(taken_phase);
    let request_phase = phase!("request");
    let len = request.len;
    let written = worker.shared.write(len, request.write);
    if let Err(error) = written {
        pool::put_back(worker); // It saw nothing.
        return Err(error);
    }
    drop(request_phase);
    let wait_phase = phase!("wait");
    let started = Instant::now();
    let fd = worker.socket.as_raw_fd();
    // A fork starts with the caller's resident pages mapped: the limit is
    // on what the link adds to the worker's size when it starts, read
    // before the worker sees the request.
    let limits = Limits {
        deadline: timeout.map(|limit| started + limit),
        memory: memory_limit.map(|limit| {
            let baseline = resident_bytes(worker.pid()).unwrap_or(0);
            (worker.pid(), baseline.saturating_add(limit))
        }),
    };
    let answer = if send_all(fd, &(len as u64).to_le_bytes()) {
        read_length(fd, &limits)
    } else {
        Ok(None) // The worker is gone: its status says how.
    };
    drop(wait_phase);
    match answer {
        // An answer larger than the link may use is not copied in.
        Ok(Some(len)) if memory_limit.is_some_and(|limit| len as u64 > limit) => {
            worker.stop();
            Err(LinkError::MemoryLimit {
                limit: memory_limit.unwrap_or_default(),
                inputs: names(),
            })
        }
        Ok(Some(len)) => {
            let _phase = phase!("answer");
            let mut answer = Vec::new();
            if answer.try_reserve_exact(len).is_err() {
                worker.stop();
                return Err(LinkError::Isolation {
                    detail: format!("cannot allocate {len} bytes for the worker's answer"),
                });
            }
            let answer = worker
                .shared
                .copy_out(len, &mut answer)
                .map(|()| decode(&answer));
            match answer {
                // Answered nonsense: not kept for the next request.
                Ok(Err(garbled @ LinkError::Isolation { .. })) => {
                    worker.stop();
                    Err(garbled)
                }
                Ok(decoded) => {
                    match worker.shared.file_len() {
                        Ok(kept) if kept <= MAX_KEPT_SHARED => pool::put_back(worker),
                        _ => drop(worker.stop()),
                    }
                    decoded
                }
                // It said more than it wrote.
                Err(_) => Err(LinkError::Crashed {
                    how: describe(worker.stop()),
                    inputs: names(),
                }),
            }
        }
        // The worker closed its end as it died (a signal or an exit keep
        // their status against the kill), or answered nonsense.
        Ok(None) => Err(LinkError::Crashed {
            how: describe(worker.stop()),
            inputs: names(),
        }),
        Err(Overrun::Deadline) => {
            worker.stop();
            Err(LinkError::TimedOut {
                timeout: timeout.unwrap_or_default(),
                inputs: names(),
            })
        }
        Err(Overrun::Memory) => {
            worker.stop();
            Err(LinkError::MemoryLimit {
                limit: memory_limit.unwrap_or_default(),
                inputs: names(),
            })
        }
    }
}

/// What a wait for the worker's answer watches.
struct Limits {
    deadline: Option<Instant>,
    /// The worker, and the resident size at which it is stopped.
    memory: Option<(libc::pid_t, u64)>,
}

impl Limits {
    /// None: the worker answers whenever it does. A worker's own waits
    /// (for the next request) have no limit.
    const NONE: Limits = Limits {
        deadline: None,
        memory: None,
    };
}

/// How often a waiting caller reads the worker's resident memory.
const MEMORY_POLL: Duration = Duration::from_millis(50);

/// A limit the worker passed before it answered.
enum Overrun {
    Deadline,
    Memory,
}

/// The resident memory of process `pid` in bytes (`/proc/PID/statm`'s
/// second field), or `None` where it cannot be read.
fn resident_bytes(pid: libc::pid_t) -> Option<u64> {
    let statm = std::fs::read_to_string(format!("/proc/{pid}/statm")).ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages.saturating_mul(u64::try_from(page).ok()?))
}

/// Sends all of `bytes` with raw calls: no lock of the standard library is
/// taken in a worker, and `MSG_NOSIGNAL` keeps a closed peer from raising
/// `SIGPIPE`.
fn send_all(fd: RawFd, mut bytes: &[u8]) -> bool {
    while !bytes.is_empty() {
        // SAFETY: `bytes` is a live buffer of the given length.
        let sent =
            unsafe { libc::send(fd, bytes.as_ptr().cast(), bytes.len(), libc::MSG_NOSIGNAL) };
        if sent < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return false;
        }
        bytes = &bytes[sent as usize..];
    }
    true
}

/// Reads a message's length: `Ok(None)` if the peer closed before all of
/// it came, or sent one over [`MAX_ANSWER`].
fn read_length(fd: RawFd, limits: &Limits) -> Result<Option<usize>, Overrun> {
    let mut length = [0u8; 8];
    if !read_exact(fd, &mut length, limits)? {
        return Ok(None);
    }
    let length = u64::from_le_bytes(length);
    Ok((length <= MAX_ANSWER)
        .then(|| usize::try_from(length).ok())
        .flatten())
}

/// Fills `buffer` within `limits`; `false` at EOF.
fn read_exact(fd: RawFd, buffer: &mut [u8], limits: &Limits) -> Result<bool, Overrun> {
    let mut filled = 0;
    // The worker's size is read each time a poll ends with no answer: a
    // link that answers within the first poll costs no read.
    let mut polled = false;
    while filled < buffer.len() {
        if limits.deadline.is_some() || limits.memory.is_some() {
            if let Some((pid, limit)) = limits.memory
                && polled
                && resident_bytes(pid).is_some_and(|resident| resident > limit)
            {
                return Err(Overrun::Memory);
            }
            polled = true;
            let left = match limits.deadline {
                Some(deadline) => deadline.saturating_duration_since(Instant::now()),
                None => Duration::MAX,
            };
            if left.is_zero() {
                return Err(Overrun::Deadline);
            }
            let left = match limits.memory {
                Some(_) => left.min(MEMORY_POLL),
                None => left,
            };
            let wait_ms = i32::try_from(left.as_millis().max(1)).unwrap_or(i32::MAX);
            let mut poll = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            let ready = unsafe { libc::poll(&mut poll, 1, wait_ms) };
            let interrupted = ready < 0
                && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted;
            if ready == 0 || interrupted {
                continue; // Loop to check the limits: a read now could block past them.
            }
        }
        let rest = &mut buffer[filled..];
        // SAFETY: `rest` is a live, writable buffer of the given length.
        let read = unsafe { libc::read(fd, rest.as_mut_ptr().cast(), rest.len()) };
        match read {
            0 => return Ok(false),
            n if n > 0 => filled += n as usize,
            _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
            _ => return Ok(false),
        }
    }
    Ok(true)
}

/// A worker's whole life: close what it inherited, then answer requests
/// until the caller closes the socket.
fn serve(socket: OwnedFd, shared: RawFd, lib: &Library) -> ! {
    let (fd, shared) = keep_only(socket, shared);
    // SAFETY: `shared` is open, and this worker's alone to close.
    let Ok(mut shared) = Shared::open(unsafe { OwnedFd::from_raw_fd(shared) }) else {
        // SAFETY: `_exit` ends the worker without running the caller's
        // atexit handlers or destructors.
        unsafe { libc::_exit(1) }
    };
    loop {
        let Ok(Some(len)) = read_length(fd, &Limits::NONE) else {
            // SAFETY: as above.
            unsafe { libc::_exit(0) }
        };
        let Ok(request) = shared.read(len).map(bytes::Bytes::from_owner) else {
            // SAFETY: as above; the caller sees the worker's end.
            unsafe { libc::_exit(1) }
        };
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| answer(lib, &request)));
        // The answer goes where the request was.
        drop(request);
        let Ok(answer) = outcome else {
            // SAFETY: as above.
            unsafe { libc::_exit(101) }
        };
        let written = shared.write(answer.len(), |out| out.copy_from_slice(&answer));
        if written.is_err() || !send_all(fd, &(answer.len() as u64).to_le_bytes()) {
            // SAFETY: as above.
            unsafe { libc::_exit(1) }
        }
    }
}

/// What a worker of `lib` answers to `request`.
fn answer(lib: &Library, request: &bytes::Bytes) -> Vec<u8> {
    match lib {
        Library::NvJitLink(lib) => encode(&decode_request(request).and_then(
            |(flags, inputs, output)| super::nvjitlink::link(lib, &flags, &inputs, output),
        )),
        #[cfg(feature = "nvvm")]
        Library::Nvvm(lib) => nvvm_wire::answer(lib, request),
    }
}

/// Moves `socket` to descriptor 3 and `shared` to 4, and closes every
/// other one above 2.
fn keep_only(socket: OwnedFd, shared: RawFd) -> (RawFd, RawFd) {
    const SOCKET: RawFd = 3;
    const SHARED: RawFd = 4;
    // Copies above both targets first: placing one at 3 or 4 must not
    // close the other.
    // SAFETY: both descriptors are open; F_DUPFD makes a copy at or above 5.
    let (high_socket, high_shared) = unsafe {
        (
            libc::fcntl(socket.as_raw_fd(), libc::F_DUPFD, SHARED + 1),
            libc::fcntl(shared, libc::F_DUPFD, SHARED + 1),
        )
    };
    std::mem::forget(socket); // Closed below with the rest.
    // SAFETY: dup2 of the copies, checked first: a failed copy (the
    // caller at its descriptor limit) would leave 3 and 4 the caller's
    // own files, which the worker must never read or map.
    let placed = high_socket >= 0
        && high_shared >= 0
        && unsafe { libc::dup2(high_socket, SOCKET) } == SOCKET
        && unsafe { libc::dup2(high_shared, SHARED) } == SHARED;
    if !placed {
        // SAFETY: `_exit` ends the worker without running the caller's
        // handlers; the caller sees its socket close.
        unsafe { libc::_exit(1) }
    }
    // SAFETY: closes descriptors of this process only; none is in use by
    // this thread, the only one the fork left.
    let closed = unsafe { libc::syscall(libc::SYS_close_range, SHARED + 1, u32::MAX, 0) };
    if closed != 0 {
        for other in SHARED + 1..4096 {
            // SAFETY: as above; closing an unused number fails harmlessly.
            unsafe { libc::close(other) };
        }
    }
    (SOCKET, SHARED)
}

/// How the child ended, in words.
fn describe(status: Option<i32>) -> String {
    match status {
        Some(code) if code < 0 => {
            let signal = -code;
            let name = match signal {
                libc::SIGSEGV => "SIGSEGV (segmentation fault)",
                libc::SIGABRT => "SIGABRT (abort)",
                libc::SIGBUS => "SIGBUS (bus error)",
                libc::SIGFPE => "SIGFPE (arithmetic fault)",
                libc::SIGILL => "SIGILL (illegal instruction)",
                libc::SIGKILL => "SIGKILL",
                libc::SIGTRAP => "SIGTRAP",
                _ => return format!("was killed by signal {signal}"),
            };
            format!("was killed by {name}")
        }
        Some(code) => format!("exited with code {code} and no answer"),
        None => "ended with no answer".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_are_named() {
        assert_eq!(
            describe(Some(-libc::SIGSEGV)),
            "was killed by SIGSEGV (segmentation fault)"
        );
        assert_eq!(describe(Some(3)), "exited with code 3 and no answer");
    }
}
