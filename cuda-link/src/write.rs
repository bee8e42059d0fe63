//! Writing an output whole, as [`write_whole`] says.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` whole; what the `cuda-link` command and
/// [`ObjectCode::write_to`](crate::ObjectCode::write_to) write with.
///
/// - A file, a link or nothing yet: the bytes go to a new temporary beside
///   it (created exclusively: a link planted at its name is never
///   followed), which is renamed onto `path`. A reader never sees half a
///   file, a failed write leaves the old one, and a link (one planted in
///   a shared folder too) is replaced, never written through.
/// - A device or a pipe, and any name in `/dev` or under `/proc`
///   (`/dev/null`, `/dev/stdout`, `/proc/self/fd/3`): written through, as
///   a shell's `>` does. A rename would put a plain file in its place: as
///   root, over `/dev/null` itself.
///
/// # Errors
/// A folder at `path` (`IsADirectory`), and the I/O error of creating,
/// writing or renaming.
pub fn write_whole(path: impl AsRef<Path>, bytes: &[u8]) -> std::io::Result<()> {
    let path = path.as_ref();
    if writes_through(path)? {
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        out.write_all(bytes)?;
        return out.flush();
    }
    let (temporary, mut file) = new_temporary(path)?;
    // A file replaced keeps its mode, as one truncated in place would.
    let kept_mode = match std::fs::symlink_metadata(path) {
        Ok(old) if old.is_file() => file.set_permissions(old.permissions()),
        _ => Ok(()),
    };
    let written = kept_mode
        .and_then(|()| file.write_all(bytes))
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&temporary, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// Checks before long work that [`write_whole`] can write `path`: that it
/// is no folder and, unless it is written through, that a file can be
/// created beside it (and removed at once).
///
/// # Errors
/// As [`write_whole`]'s would be.
pub fn check_writable(path: impl AsRef<Path>) -> std::io::Result<()> {
    let path = path.as_ref();
    if writes_through(path)? {
        return Ok(());
    }
    let (temporary, _) = new_temporary(path)?;
    std::fs::remove_file(temporary)
}

/// Whether `path` is written through rather than replaced; a folder is an
/// error.
fn writes_through(path: &Path) -> std::io::Result<bool> {
    // `out/` names a folder, whether or not one is there.
    if path.as_os_str().to_string_lossy().ends_with('/') {
        return Err(is_a_folder());
    }
    let special = || {
        let parent = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        // `/dev` itself, not a shared folder under it (`/dev/shm`), where a
        // link may have been planted.
        std::fs::canonicalize(parent)
            .is_ok_and(|folder| folder == Path::new("/dev") || folder.starts_with("/proc"))
    };
    match std::fs::symlink_metadata(path) {
        Ok(found) if found.is_dir() => Err(is_a_folder()),
        Ok(found) if found.is_symlink() => match special() {
            true if std::fs::metadata(path).is_ok_and(|target| target.is_dir()) => {
                Err(is_a_folder())
            }
            special => Ok(special),
        },
        Ok(found) => Ok(!found.is_file() || special()),
        Err(_) => Ok(special()),
    }
}

fn is_a_folder() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::IsADirectory, "it is a folder")
}

/// A new file beside `path`, `.cuda-link-{pid}-{seed}-{n}.tmp` (a fixed length,
/// whatever the output's name), created with `O_EXCL`, 0666 less the
/// umask as any output: a name taken, by another writer or a planted
/// link, is passed over.
fn new_temporary(path: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static CALLS: AtomicU64 = AtomicU64::new(0);
    // Not guessable from the pid alone: a folder's other users cannot
    // take every name this process will try.
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |t| t.subsec_nanos());
    let mut last = None;
    for _ in 0..64 {
        let call = CALLS.fetch_add(1, Ordering::Relaxed);
        let name = format!(".cuda-link-{}-{seed:08x}-{call}.tmp", std::process::id());
        let temporary = path.with_file_name(name);
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
