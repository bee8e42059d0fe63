//! Where `link` and `compile` write their output: never over an input;
//! a file through a temporary beside it, so that a failed run leaves no
//! half file; a device or a pipe written through.

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

/// Where an output's bytes go, chosen before the work: an output that
/// cannot be written is said at once.
pub(crate) enum Staged {
    /// A temporary beside the file, renamed onto it once whole: a failed
    /// run leaves no half file behind.
    Beside {
        temporary: tempfile::NamedTempFile,
        file: PathBuf,
    },
    /// A device, a pipe or a dangling link (`-o /dev/null`, `-o /dev/stdout`):
    /// written through, as compilers do. A rename would put a plain file
    /// in its place, and as root that replaces `/dev/null` itself.
    Through(PathBuf),
}

/// Chooses how `output` is written; see [`Staged`].
pub(crate) fn stage(output: &Path) -> Result<Staged, Failure> {
    let cannot = |e: &dyn std::fmt::Display| {
        Failure::Reported(format!("cannot write {}: {e}", output.display()))
    };
    let file = match std::fs::metadata(output) {
        Ok(found) if found.is_dir() => return Err(cannot(&"it is a folder")),
        Ok(found) if !found.is_file() => return Ok(Staged::Through(output.to_path_buf())),
        // A link to a file: the file is replaced, the link stays.
        Ok(_) => std::fs::canonicalize(output).map_err(|e| cannot(&e))?,
        Err(_) if std::fs::symlink_metadata(output).is_ok() => {
            return Ok(Staged::Through(output.to_path_buf()));
        }
        Err(_) => output.to_path_buf(),
    };
    let folder = match file.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".cuda-link-");
    // Created as any output is, 0666 less the umask: a temporary's 0600
    // would stay on the output it is renamed to.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let temporary = builder.tempfile_in(folder).map_err(|e| cannot(&e))?;
    Ok(Staged::Beside { temporary, file })
}

impl Staged {
    /// Writes `bytes` whole; `shown` names the output in an error.
    pub(crate) fn write(self, bytes: &[u8], shown: &Path) -> Result<(), Failure> {
        use std::io::Write as _;
        let cannot = |e: &dyn std::fmt::Display| {
            Failure::Reported(format!("cannot write {}: {e}", shown.display()))
        };
        match self {
            Staged::Beside {
                mut temporary,
                file,
            } => {
                temporary
                    .write_all(bytes)
                    .and_then(|()| temporary.flush())
                    .map_err(|e| cannot(&e))?;
                temporary.persist(&file).map_err(|e| cannot(&e.error))?;
            }
            Staged::Through(path) => std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(&path)
                .and_then(|mut out| out.write_all(bytes).and_then(|()| out.flush()))
                .map_err(|e| cannot(&e))?,
        }
        Ok(())
    }
}
