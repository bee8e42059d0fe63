//! nvJitLink in a child process: a crash, an abort or a hang on an input's
//! contents becomes a [`LinkError`], and the caller's process is untouched.
//!
//! The child is a `fork` of the caller, made after nvJitLink is loaded: it
//! needs nothing installed and no hook in `main`, and it costs a fork (page
//! tables, not pages) rather than a process start and a fresh load of a
//! 50 MB library, as a re-exec (`procspawn`'s design) would. The child
//! runs only the link, nvJitLink's own code on memory it already has,
//! writes the outcome to a pipe and leaves with `_exit`, running no
//! destructor and flushing none of the parent's buffers. glibc's `fork`
//! resets its allocator's locks in the child, so the link may allocate.
//! A lock another thread of the parent held at the fork stays held in the
//! child; the deadline turns that rare hang into [`LinkError::TimedOut`].
//!
//! The driver backend cannot run here: CUDA does not survive a fork.

use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use nvjitlink_sys::{NvJitLink, NvJitLinkError, sys::nvJitLinkResult};

use super::{LinkError, Logs, OutputKind};
use crate::ObjectCode;

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

/// Runs [`super::nvjitlink::link`] in a forked child, within `timeout`.
pub(super) fn link(
    lib: &NvJitLink,
    flags: &[String],
    inputs: &[ObjectCode],
    output: OutputKind,
    timeout: Option<Duration>,
) -> Result<(Vec<u8>, Logs), LinkError> {
    let names = || inputs.iter().map(|i| i.name().to_owned()).collect();
    let failed = |what: &str| LinkError::Isolation {
        detail: format!("{what}: {}", std::io::Error::last_os_error()),
    };
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(failed("pipe2"));
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    let (reader, writer) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: the child runs only `child`, which never returns: it links,
    // writes to the pipe and calls `_exit` (see the module docs for why
    // that is sound after a fork of a threaded process).
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => Err(failed("fork")),
        0 => {
            drop(reader);
            child(writer, lib, flags, inputs, output)
        }
        pid => {
            drop(writer);
            let started = Instant::now();
            let answer = read_answer(reader, timeout, started);
            let status = reap(pid, answer.is_err());
            match (answer, status) {
                (Err(Deadline), _) => Err(LinkError::TimedOut {
                    timeout: timeout.unwrap_or_default(),
                    inputs: names(),
                }),
                (Ok(bytes), Some(0) | None) if !bytes.is_empty() => decode(&bytes, inputs),
                (_, status) => Err(LinkError::Crashed {
                    how: describe(status),
                    inputs: names(),
                }),
            }
        }
    }
}

/// The deadline passed before the child answered.
struct Deadline;

/// Reads the child's whole answer; the pipe closes when the child exits.
fn read_answer(
    reader: OwnedFd,
    timeout: Option<Duration>,
    started: Instant,
) -> Result<Vec<u8>, Deadline> {
    let fd = reader.as_raw_fd();
    let mut file = std::fs::File::from(reader);
    let mut answer = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        let wait_ms = match timeout {
            None => -1,
            Some(limit) => {
                let left = limit.saturating_sub(started.elapsed());
                if left.is_zero() {
                    return Err(Deadline);
                }
                i32::try_from(left.as_millis().max(1)).unwrap_or(i32::MAX)
            }
        };
        let mut poll = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, for a descriptor `file` keeps open.
        let ready = unsafe { libc::poll(&mut poll, 1, wait_ms) };
        if ready < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Ok(answer);
        }
        if ready == 0 {
            continue; // Loop to check the deadline.
        }
        match file.read(&mut chunk) {
            Ok(0) => return Ok(answer),
            Ok(n) => answer.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Ok(answer),
        }
    }
}

/// Waits for the child, killing it first if `kill`; its exit code, or
/// `-signal` when a signal ended it; `None` if it could not be waited
/// for (`SIGCHLD` ignored by the application reaps children itself).
fn reap(pid: libc::pid_t, kill: bool) -> Option<i32> {
    if kill {
        // SAFETY: `pid` is our child, not yet waited for.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    let mut status = 0;
    loop {
        // SAFETY: `pid` is our child and `status` an out-pointer.
        let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
        if waited == pid {
            break;
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return None;
        }
    }
    if libc::WIFSIGNALED(status) {
        Some(-libc::WTERMSIG(status))
    } else {
        Some(libc::WEXITSTATUS(status))
    }
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

/// The child's whole life: link, answer, `_exit`.
fn child(
    writer: OwnedFd,
    lib: &NvJitLink,
    flags: &[String],
    inputs: &[ObjectCode],
    output: OutputKind,
) -> ! {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        super::nvjitlink::link(lib, flags, inputs, output)
    }));
    let code = match outcome {
        Ok(result) => {
            let answer = encode(&result);
            i32::from(!write_all(writer.as_raw_fd(), &answer))
        }
        Err(_) => 101,
    };
    // SAFETY: `_exit` ends the child without running the parent's atexit
    // handlers or destructors, which belong to the parent.
    unsafe { libc::_exit(code) }
}

/// Writes all of `bytes` with raw `write` calls: no lock of the parent's
/// standard library is taken in the child.
fn write_all(fd: i32, mut bytes: &[u8]) -> bool {
    while !bytes.is_empty() {
        // SAFETY: `bytes` is a live buffer of the given length.
        let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if written < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return false;
        }
        bytes = &bytes[written as usize..];
    }
    true
}

// The answer: a tag byte, then fields, each a u64 length and its bytes.
const LINKED: u8 = 0;
const NVJITLINK_FAILED: u8 = 1;
const INVALID_OPTION: u8 = 2;
const SYMBOL_UNAVAILABLE: u8 = 3;

fn encode(result: &Result<(Vec<u8>, Logs), LinkError>) -> Vec<u8> {
    let mut out = Vec::new();
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
    out.insert(0, tag);
    out
}

fn decode(answer: &[u8], inputs: &[ObjectCode]) -> Result<(Vec<u8>, Logs), LinkError> {
    let garbled = || LinkError::Isolation {
        detail: "the linker process's answer is cut short".into(),
    };
    let (&tag, mut rest) = answer.split_first().ok_or_else(garbled)?;
    let mut field = || -> Result<&[u8], LinkError> {
        let len = rest.get(..8).ok_or_else(garbled)?;
        let len = u64::from_le_bytes(len.try_into().map_err(|_| garbled())?);
        let len = usize::try_from(len).map_err(|_| garbled())?;
        let bytes = rest.get(8..8 + len).ok_or_else(garbled)?;
        rest = &rest[8 + len..];
        Ok(bytes)
    };
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    match tag {
        LINKED => {
            let bytes = field()?.to_vec();
            let info = text(field()?);
            let error = text(field()?);
            Ok((bytes, (info, error)))
        }
        NVJITLINK_FAILED => {
            let call = call_name(&text(field()?));
            let code = field()?.try_into().map_err(|_| garbled())?;
            let input = text(field()?);
            let has_input = field()? == [1];
            Err(LinkError::NvJitLink {
                call,
                error: NvJitLinkError {
                    result: nvJitLinkResult(u32::from_le_bytes(code)),
                },
                input: has_input.then_some(input),
                inputs: inputs.iter().map(|i| i.name().to_owned()).collect(),
                error_log: text(field()?),
                info_log: text(field()?),
            })
        }
        INVALID_OPTION => Err(LinkError::InvalidOption {
            option: "flags",
            detail: text(field()?),
        }),
        SYMBOL_UNAVAILABLE => Err(LinkError::SymbolUnavailable {
            library: "nvJitLink",
            symbol: call_name(&text(field()?)),
        }),
        _ => Err(garbled()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_round_trip() {
        let linked: Result<(Vec<u8>, Logs), LinkError> =
            Ok((vec![1, 2, 3], ("info".into(), "error".into())));
        let (bytes, logs) = decode(&encode(&linked), &[]).unwrap();
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
        match decode(&encode(&failed), &[]) {
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
        for cut in 0..encode(&linked).len() {
            assert!(decode(&encode(&linked)[..cut], &[]).is_err(), "{cut}");
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
