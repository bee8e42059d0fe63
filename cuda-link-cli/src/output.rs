//! Where `link` and `compile` write their output: never over an input,
//! and as [`cuda_link::write_whole`] writes (a file replaced whole, a
//! device or a pipe written through).

use std::path::{Path, PathBuf};

use crate::Failure;

/// `-o` naming an input would overwrite it: refused, as gcc does.
pub(crate) fn refuse_output_among_inputs(output: &Path, inputs: &[PathBuf]) -> Result<(), Failure> {
    let Ok(target) = std::fs::canonicalize(output) else {
        return Ok(()); // Not there yet: it cannot be an input.
    };
    for input in inputs {
        if std::fs::canonicalize(input).is_ok_and(|path| path == target) {
            return Err(Failure::Usage(format!(
                "-o {} is also an input: refusing to overwrite it",
                output.display()
            )));
        }
    }
    Ok(())
}

/// Says before the work whether `output` can be written
/// ([`cuda_link::check_writable`]): a failure after a long link would
/// waste it.
pub(crate) fn check(output: &Path) -> Result<(), Failure> {
    cuda_link::check_writable(output).map_err(|e| cannot(output, &e))
}

/// Writes `bytes` to `path` whole ([`cuda_link::write_whole`]).
pub(crate) fn write(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    cuda_link::write_whole(path, bytes).map_err(|e| cannot(path, &e))
}

fn cannot(path: &Path, error: &std::io::Error) -> Failure {
    Failure::Reported(format!("cannot write {}: {error}", path.display()))
}
