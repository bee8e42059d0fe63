//! nvJitLink in a worker process: a crash, an abort or a hang on an input's
//! contents becomes a [`LinkError`], and the caller's process is untouched.
//!
//! A worker is a `fork` of the caller, made after nvJitLink is loaded, and
//! it serves links until it dies or the caller exits: it needs nothing
//! installed and no hook in `main`. A fork per link cost 9 ms on a 10 ms
//! link (page tables, then copy-on-write faults in the caller too), and a
//! re-exec (`procspawn`'s design) costs a process start and a fresh load of
//! a 50 MB library; a kept worker costs one socket round trip of the
//! inputs. Workers are pooled per library, one per concurrent link.
//!
//! A worker first closes every descriptor it inherited but its socket (a
//! kept pipe end would hide an EOF from its reader), then reads requests,
//! links with nvJitLink's own code on memory it has, and answers. It leaves
//! with `_exit`, running no destructor and flushing none of the caller's
//! buffers. glibc's `fork` resets its allocator's locks in the child, so
//! the worker may allocate; a lock that another thread of the caller held
//! at the fork stays held in the worker, and the deadline turns that rare
//! hang into [`LinkError::TimedOut`]. A worker that crashed or timed out is
//! reaped and replaced by the next link.
//!
//! The driver backend cannot run here: CUDA does not survive a fork.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nvjitlink_sys::{NvJitLink, NvJitLinkError, sys::nvJitLinkResult};

use super::{LinkError, Logs, OutputKind};
use crate::{ObjectCode, ObjectKind};

/// The nvJitLink calls a link makes, for naming a failure the child saw.
const CALLS: &[&str] = &[
    "nvJitLinkCreate",
    "nvJitLinkAddData",
    "nvJitLinkComplete",
    "nvJitLinkGetLinkedCubinSize",
    "nvJitLinkGetLinkedPtxSize",
    "nvJitLinkGetLinkedLTOIRSize",
    "nvJitLinkGetLinkedCubin",
    "nvJitLinkGetLinkedPtx",
    "nvJitLinkGetLinkedLTOIR",
    "nvJitLinkGetErrorLogSize",
    "nvJitLinkGetErrorLog",
    "nvJitLinkGetInfoLogSize",
    "nvJitLinkGetInfoLog",
    "nvJitLinkDestroy",
];

fn call_name(name: &str) -> &'static str {
    CALLS
        .iter()
        .copied()
        .find(|&c| c == name)
        .unwrap_or("nvJitLink")
}

/// A worker process and the socket it listens on.
struct Worker {
    pid: libc::pid_t,
    socket: OwnedFd,
    /// The library it was forked with: the worker calls it at the same
    /// address, and holding it keeps that address from another library.
    lib: Arc<NvJitLink>,
}

/// Idle workers, any library's.
static IDLE: Mutex<Vec<Worker>> = Mutex::new(Vec::new());
/// Idle workers kept beyond this are stopped.
const MAX_IDLE: usize = 8;
/// No answer of a worker is larger (a linked image and two logs).
const MAX_ANSWER: u64 = 1 << 34;

impl Worker {
    /// Forks a worker for `lib`.
    fn spawn(lib: &Arc<NvJitLink>) -> Result<Self, LinkError> {
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
        // SAFETY: the child runs only `serve`, which never returns (see the
        // module docs for why that is sound after a fork of a threaded
        // process).
        match unsafe { libc::fork() } {
            -1 => Err(os_failure("fork")),
            0 => serve(theirs, lib),
            pid => {
                drop(theirs);
                Ok(Worker {
                    pid,
                    socket: ours,
                    lib: Arc::clone(lib),
                })
            }
        }
    }

    /// An idle worker of `lib` that is still alive, or a new one.
    fn take(lib: &Arc<NvJitLink>) -> Result<Self, LinkError> {
        let mut idle = IDLE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        while let Some(at) = idle.iter().position(|w| Arc::ptr_eq(&w.lib, lib)) {
            let worker = idle.swap_remove(at);
            // A worker killed from outside while idle is reaped here; one
            // that cannot be waited for (SIGCHLD ignored) is taken as alive.
            if matches!(worker.wait(false, libc::WNOHANG), Some(None) | None) {
                return Ok(worker);
            }
        }
        drop(idle);
        Self::spawn(lib)
    }

    /// Back to the pool, or stopped when the pool is full.
    fn put_back(self) {
        let mut idle = IDLE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if idle.len() < MAX_IDLE {
            idle.push(self);
        } else {
            drop(idle);
            self.stop();
        }
    }

    /// Kills and reaps the worker; how it ended.
    fn stop(self) -> Option<i32> {
        self.wait(true, 0).flatten()
    }

    /// `waitpid`, killing first if `kill`: `Some(None)` while it runs
    /// (with `WNOHANG`), `Some(Some(code))` once it ended (`-signal` for a
    /// signal), `None` if it cannot be waited for (an application that
    /// ignores `SIGCHLD` has the kernel reap its children).
    fn wait(&self, kill: bool, flags: i32) -> Option<Option<i32>> {
        if kill {
            // SAFETY: `pid` is our child, not yet reaped.
            unsafe { libc::kill(self.pid, libc::SIGKILL) };
        }
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
}

fn os_failure(call: &str) -> LinkError {
    LinkError::Isolation {
        detail: format!("{call}: {}", std::io::Error::last_os_error()),
    }
}

/// Runs [`super::nvjitlink::link`] in a worker, within `timeout`.
pub(super) fn link(
    lib: &Arc<NvJitLink>,
    flags: &[String],
    inputs: &[ObjectCode],
    output: OutputKind,
    timeout: Option<Duration>,
) -> Result<(Vec<u8>, Logs), LinkError> {
    let names = || inputs.iter().map(|i| i.name().to_owned()).collect();
    let request = frame(encode_request(flags, inputs, output));
    let worker = Worker::take(lib)?;
    let started = Instant::now();
    let fd = worker.socket.as_raw_fd();
    let answer = if send_all(fd, &request) {
        read_frame(fd, timeout.map(|limit| started + limit))
    } else {
        Ok(None) // The worker is gone: its status says how.
    };
    match answer {
        Ok(Some(answer)) => {
            worker.put_back();
            decode(&answer, inputs)
        }
        Ok(None) => Err(LinkError::Crashed {
            how: describe(worker.wait(false, 0).flatten()),
            inputs: names(),
        }),
        Err(Deadline) => {
            worker.stop();
            Err(LinkError::TimedOut {
                timeout: timeout.unwrap_or_default(),
                inputs: names(),
            })
        }
    }
}

/// The deadline passed before the worker answered.
struct Deadline;

/// A message buffer with room for its length in front (see [`frame`]).
fn message() -> Vec<u8> {
    vec![0; 8]
}

/// Writes the length of a [`message`] into its first 8 bytes.
fn frame(mut bytes: Vec<u8>) -> Vec<u8> {
    let len = (bytes.len() - 8) as u64;
    bytes[..8].copy_from_slice(&len.to_le_bytes());
    bytes
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

/// Reads one frame: `Ok(None)` if the peer closed before all of it came.
fn read_frame(fd: RawFd, deadline: Option<Instant>) -> Result<Option<Vec<u8>>, Deadline> {
    let mut length = [0u8; 8];
    if !read_exact(fd, &mut length, deadline)? {
        return Ok(None);
    }
    let length = u64::from_le_bytes(length);
    if length > MAX_ANSWER {
        return Ok(None);
    }
    let mut bytes = vec![0u8; length as usize];
    Ok(read_exact(fd, &mut bytes, deadline)?.then_some(bytes))
}

/// Fills `buffer`, waiting at most until `deadline`; `false` at EOF.
fn read_exact(fd: RawFd, buffer: &mut [u8], deadline: Option<Instant>) -> Result<bool, Deadline> {
    let mut filled = 0;
    while filled < buffer.len() {
        if let Some(deadline) = deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Deadline);
            }
            let wait_ms = i32::try_from(left.as_millis().max(1)).unwrap_or(i32::MAX);
            let mut poll = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            if unsafe { libc::poll(&mut poll, 1, wait_ms) } == 0 {
                continue; // Loop to check the deadline.
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
fn serve(socket: OwnedFd, lib: &NvJitLink) -> ! {
    let fd = keep_only(socket);
    loop {
        let Ok(Some(request)) = read_frame(fd, None).map(|r| r.map(bytes::Bytes::from)) else {
            // SAFETY: `_exit` ends the worker without running the caller's
            // atexit handlers or destructors.
            unsafe { libc::_exit(0) }
        };
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            decode_request(&request).and_then(|(flags, inputs, output)| {
                super::nvjitlink::link(lib, &flags, &inputs, output)
            })
        }));
        let Ok(result) = outcome else {
            // SAFETY: as above; the caller sees the worker's end.
            unsafe { libc::_exit(101) }
        };
        if !send_all(fd, &frame(encode(&result))) {
            // SAFETY: as above.
            unsafe { libc::_exit(1) }
        }
    }
}

/// Moves `socket` to descriptor 3 and closes every other one above 2.
fn keep_only(socket: OwnedFd) -> RawFd {
    const KEPT: RawFd = 3;
    let fd = socket.as_raw_fd();
    if fd != KEPT {
        // SAFETY: both are descriptors numbers; dup2 replaces 3 whatever it was.
        unsafe { libc::dup2(fd, KEPT) };
    }
    std::mem::forget(socket); // Closed below with the rest, or kept as 3.
    // SAFETY: closes descriptors of this process only; none is in use by
    // this thread, the only one the fork left.
    let closed = unsafe { libc::syscall(libc::SYS_close_range, KEPT + 1, u32::MAX, 0) };
    if closed != 0 {
        for other in KEPT + 1..4096 {
            // SAFETY: as above; closing an unused number fails harmlessly.
            unsafe { libc::close(other) };
        }
    }
    KEPT
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

/// The request: flags, the output kind, then each input's kind, name and
/// validated image, as fields of a u64 length and its bytes.
fn encode_request(flags: &[String], inputs: &[ObjectCode], output: OutputKind) -> Vec<u8> {
    let size: usize = inputs
        .iter()
        .map(|i| i.image().as_bytes().len() + i.name().len() + 40)
        .sum();
    let mut out = message();
    out.reserve(size + 64 * flags.len() + 64);
    let mut field = |bytes: &[u8]| {
        out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        out.extend_from_slice(bytes);
    };
    field(&(flags.len() as u64).to_le_bytes());
    for flag in flags {
        field(flag.as_bytes());
    }
    field(&[match output {
        OutputKind::Cubin => 0,
        OutputKind::Ptx => 1,
        OutputKind::Ltoir => 2,
    }]);
    field(&(inputs.len() as u64).to_le_bytes());
    for input in inputs {
        let kind = ObjectKind::ALL
            .iter()
            .position(|&k| k == input.kind())
            .unwrap_or(0);
        field(&[kind as u8]);
        field(input.name().as_bytes());
        field(input.image().as_bytes());
    }
    out
}

/// Reads fields of a u64 length and its bytes.
struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    fn next(&mut self) -> Result<&'a [u8], LinkError> {
        let garbled = || LinkError::Isolation {
            detail: "a message between the caller and its link worker is cut short".into(),
        };
        let len = self.0.get(..8).ok_or_else(garbled)?;
        let len = u64::from_le_bytes(len.try_into().map_err(|_| garbled())?);
        let len = usize::try_from(len).map_err(|_| garbled())?;
        let bytes = self
            .0
            .get(8..)
            .and_then(|rest| rest.get(..len))
            .ok_or_else(garbled)?;
        self.0 = &self.0[8 + len..];
        Ok(bytes)
    }

    fn count(&mut self) -> Result<u64, LinkError> {
        let bytes = self.next()?;
        Ok(u64::from_le_bytes(bytes.try_into().unwrap_or_default()))
    }

    fn text(&mut self) -> Result<String, LinkError> {
        self.next()
            .map(|bytes| String::from_utf8_lossy(bytes).into_owned())
    }
}

fn decode_request(
    request: &bytes::Bytes,
) -> Result<(Vec<String>, Vec<ObjectCode>, OutputKind), LinkError> {
    let mut fields = Fields(request);
    let flags = (0..fields.count()?)
        .map(|_| fields.text())
        .collect::<Result<_, _>>()?;
    let output = match fields.next()? {
        [1] => OutputKind::Ptx,
        [2] => OutputKind::Ltoir,
        _ => OutputKind::Cubin,
    };
    let mut inputs = Vec::new();
    for _ in 0..fields.count()? {
        let kind = fields.next()?.first().copied().unwrap_or(0);
        let kind = ObjectKind::ALL[usize::from(kind).min(ObjectKind::ALL.len() - 1)];
        let name = fields.text()?;
        // A view of the request, not a copy.
        let image = request.slice_ref(fields.next()?);
        inputs.push(ObjectCode::from_validated_image(kind, image, name));
    }
    Ok((flags, inputs, output))
}

// The answer: a tag byte, then fields, each a u64 length and its bytes.
const LINKED: u8 = 0;
const NVJITLINK_FAILED: u8 = 1;
const INVALID_OPTION: u8 = 2;
const SYMBOL_UNAVAILABLE: u8 = 3;

fn encode(result: &Result<(Vec<u8>, Logs), LinkError>) -> Vec<u8> {
    let mut out = message();
    let mut field = |bytes: &[u8]| {
        out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        out.extend_from_slice(bytes);
    };
    let tag = match result {
        Ok((bytes, (info, error))) => {
            field(bytes);
            field(info.as_bytes());
            field(error.as_bytes());
            LINKED
        }
        Err(LinkError::NvJitLink {
            call,
            error,
            input,
            error_log,
            info_log,
            ..
        }) => {
            field(call.as_bytes());
            field(&error.result.0.to_le_bytes());
            field(input.as_deref().unwrap_or_default().as_bytes());
            field(&[u8::from(input.is_some())]);
            field(error_log.as_bytes());
            field(info_log.as_bytes());
            NVJITLINK_FAILED
        }
        Err(LinkError::InvalidOption { detail, .. }) => {
            field(detail.as_bytes());
            INVALID_OPTION
        }
        Err(LinkError::SymbolUnavailable { symbol, .. }) => {
            field(symbol.as_bytes());
            SYMBOL_UNAVAILABLE
        }
        Err(other) => {
            // No other error comes out of the nvJitLink backend.
            field(other.to_string().as_bytes());
            INVALID_OPTION
        }
    };
    out.insert(8, tag);
    out
}

fn decode(answer: &[u8], inputs: &[ObjectCode]) -> Result<(Vec<u8>, Logs), LinkError> {
    let (&tag, rest) = answer.split_first().ok_or_else(|| LinkError::Isolation {
        detail: "the link worker's answer is empty".into(),
    })?;
    let mut fields = Fields(rest);
    match tag {
        LINKED => {
            let bytes = fields.next()?.to_vec();
            Ok((bytes, (fields.text()?, fields.text()?)))
        }
        NVJITLINK_FAILED => {
            let call = call_name(&fields.text()?);
            let code = fields.next()?.try_into().unwrap_or_default();
            let input = fields.text()?;
            let has_input = fields.next()? == [1];
            Err(LinkError::NvJitLink {
                call,
                error: NvJitLinkError {
                    result: nvJitLinkResult(u32::from_le_bytes(code)),
                },
                input: has_input.then_some(input),
                inputs: inputs.iter().map(|i| i.name().to_owned()).collect(),
                error_log: fields.text()?,
                info_log: fields.text()?,
            })
        }
        INVALID_OPTION => Err(LinkError::InvalidOption {
            option: "flags",
            detail: fields.text()?,
        }),
        SYMBOL_UNAVAILABLE => Err(LinkError::SymbolUnavailable {
            library: "nvJitLink",
            symbol: call_name(&fields.text()?),
        }),
        other => Err(LinkError::Isolation {
            detail: format!("the link worker answered with an unknown tag {other}"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_round_trip() {
        let linked: Result<(Vec<u8>, Logs), LinkError> =
            Ok((vec![1, 2, 3], ("info".into(), "error".into())));
        let (bytes, logs) = decode(&encode(&linked)[8..], &[]).unwrap();
        assert_eq!(bytes, [1, 2, 3]);
        assert_eq!(logs, ("info".to_owned(), "error".to_owned()));
        let failed: Result<(Vec<u8>, Logs), LinkError> = Err(LinkError::NvJitLink {
            call: "nvJitLinkComplete",
            error: NvJitLinkError {
                result: nvJitLinkResult(4),
            },
            input: None,
            inputs: Vec::new(),
            error_log: "undefined reference".into(),
            info_log: String::new(),
        });
        match decode(&encode(&failed)[8..], &[]) {
            Err(LinkError::NvJitLink {
                call: "nvJitLinkComplete",
                error,
                input: None,
                error_log,
                ..
            }) => {
                assert_eq!(error.result, nvJitLinkResult(4));
                assert_eq!(error_log, "undefined reference");
            }
            other => panic!("{other:?}"),
        }
        let answer = encode(&linked);
        for cut in 8..answer.len() {
            assert!(decode(&answer[8..cut], &[]).is_err(), "{cut}");
        }
    }

    #[test]
    fn requests_round_trip() {
        let ptx = ObjectCode::from_ptx(
            b".version 8.0\n.target sm_90\n.address_size 64\n".to_vec(),
            "k.ptx",
        )
        .unwrap();
        let flags = ["-arch=sm_90".to_owned(), "-lto".to_owned()];
        let request = bytes::Bytes::from(encode_request(&flags, &[ptx.clone()], OutputKind::Ptx));
        let (decoded_flags, inputs, output) = decode_request(&request.slice(8..)).unwrap();
        assert_eq!(decoded_flags, flags);
        assert_eq!(output, OutputKind::Ptx);
        assert_eq!(inputs[0].name(), "k.ptx");
        assert_eq!(inputs[0].kind(), ObjectKind::Ptx);
        assert_eq!(inputs[0].image().as_bytes(), ptx.image().as_bytes());
        for cut in 8..request.len() {
            assert!(decode_request(&request.slice(8..cut)).is_err(), "{cut}");
        }
    }

    #[test]
    fn signals_are_named() {
        assert_eq!(
            describe(Some(-libc::SIGSEGV)),
            "was killed by SIGSEGV (segmentation fault)"
        );
        assert_eq!(describe(Some(3)), "exited with code 3 and no answer");
    }
}
