//! Where `link` and `compile` write their output: never over an input,
//! and through a temporary beside it, so that a failed run leaves no half
//! file.

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

/// A temporary file beside `output`, made before the work: an output that
/// cannot be written is said at once, and a failed link leaves no half
/// file behind.
pub(crate) fn stage(output: &Path) -> Result<tempfile::NamedTempFile, Failure> {
    let folder = match output.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".cuda-link-");
    // Created as any output is, 0666 less the umask: a temporary's 0600
    // would stay on the output it is renamed to.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    builder
        .tempfile_in(folder)
        .map_err(|e| Failure::Reported(format!("cannot write {}: {e}", output.display())))
}
