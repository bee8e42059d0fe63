//! Writing an output whole: a file through a temporary beside it, renamed
//! into place; a device or a pipe written through.

use std::io::Write as _;
use std::path::Path;

/// Writes `bytes` to `path` whole.
///
/// - A file, or nothing yet: the bytes go to a new temporary beside it
///   (created exclusively, so a link planted at its name is never
///   followed), which is then renamed onto it: a reader never sees half a
///   file, and a failed write leaves the old one.
/// - A link to a file: the file it points to is replaced; the link stays.
/// - A device, a pipe or a dangling link (`/dev/null`, `/dev/stdout`):
///   written through. A rename would put a plain file in its place (as
///   root, over `/dev/null` itself).
/// - A folder: an error.
pub(crate) fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let target = match std::fs::metadata(path) {
        Ok(found) if found.is_dir() => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::IsADirectory,
                "it is a folder",
            ));
        }
        Ok(found) if !found.is_file() => return write_through(path, bytes),
        Ok(_) => std::fs::canonicalize(path)?,
        Err(_) if std::fs::symlink_metadata(path).is_ok() => return write_through(path, bytes),
        Err(_) => path.to_path_buf(),
    };
    let (temporary, mut file) = new_temporary(&target)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| file.flush())
        .and_then(|()| std::fs::rename(&temporary, &target));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

fn write_through(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    out.write_all(bytes)?;
    out.flush()
}

/// A new file beside `target`, named `.{name}.{pid}-{n}.tmp`, created
/// with `O_EXCL` (0666 less the umask, as any output): a name taken, by
/// another writer or a planted link, is passed over.
fn new_temporary(target: &Path) -> std::io::Result<(std::path::PathBuf, std::fs::File)> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    let mut last = None;
    for _ in 0..16 {
        let call = CALLS.fetch_add(1, Ordering::Relaxed);
        let temporary = target.with_file_name(format!(".{name}.{}-{call}.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)
        {
            Ok(file) => return Ok((temporary, file)),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => last = Some(error),
            Err(error) => return Err(error),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no free temporary name")))
}
