//! Writing to standard output and error without panicking: a closed pipe
//! (`| head`) is the reader's choice, and a message that cannot be shown
//! is dropped rather than turned into a crash.

use std::io::Write as _;

/// Writes a line to standard error; a closed or full stream is ignored.
pub fn err(text: impl std::fmt::Display) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// Writes a line to standard output: `false` once the reader is gone.
pub fn out(text: impl std::fmt::Display) -> Result<bool, String> {
    match writeln!(std::io::stdout().lock(), "{text}") {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
        Err(e) => Err(format!("cannot write to stdout: {e}")),
    }
}
