//! Which library file produced an entry: part of every key, so that a
//! replaced or different library never serves another's output.

use std::ffi::c_void;
use std::path::Path;

/// Marks the identity of a library whose file could not be identified; a
/// NUL, which no path or version holds, keeps it from matching by chance.
pub(crate) const UNIDENTIFIED: &str = "\0unidentified library file";

/// The identity of the file that holds `symbol`, a function of a loaded
/// library, for a cache key: the file `dladdr` names for the address (for a library opened
/// by a bare name, or behind a versioned symbolic link, the file the loader
/// actually mapped, not the name asked for), resolved with `realpath`,
/// then its device, inode, size and modification time.
#[cfg(unix)]
pub fn library_file_identity(
    symbol: Option<*const c_void>,
    opened: &Path,
) -> Result<String, String> {
    use std::ffi::{CStr, OsStr};
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;

    let symbol = symbol.ok_or("no function of the library was resolved")?;
    // SAFETY: `Dl_info` is plain old data; all zeroes is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: `dladdr` only looks the address up and fills `info`.
    let found = unsafe { libc::dladdr(symbol, &mut info) };
    if found == 0 || info.dli_fname.is_null() {
        return Err(format!("dladdr found no file for {}", opened.display()));
    }
    // SAFETY: a NUL-terminated name owned by the loader, valid while the
    // library is loaded; it stays resident, and is copied at once.
    let mapped = unsafe { CStr::from_ptr(info.dli_fname) };
    let mapped = Path::new(OsStr::from_bytes(mapped.to_bytes()));
    let real = std::fs::canonicalize(mapped).map_err(|e| format!("{}: {e}", mapped.display()))?;
    let metadata = std::fs::metadata(&real).map_err(|e| format!("{}: {e}", real.display()))?;
    Ok(format!(
        "{} | device {} inode {} | {} bytes | modified {}.{:09}",
        real.display(),
        metadata.dev(),
        metadata.ino(),
        metadata.len(),
        metadata.mtime(),
        metadata.mtime_nsec()
    ))
}

/// The identity of the file opened as `opened`, for a cache key: its
/// canonical path, size and modification time.
#[cfg(not(unix))]
pub fn library_file_identity(
    _symbol: Option<*const c_void>,
    opened: &Path,
) -> Result<String, String> {
    let real = std::fs::canonicalize(opened).map_err(|e| e.to_string())?;
    let metadata = std::fs::metadata(&real).map_err(|e| e.to_string())?;
    let modified = metadata
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .ok_or("no modification time")?;
    Ok(format!(
        "{} | {} bytes | modified {}",
        real.display(),
        metadata.len(),
        modified.as_nanos()
    ))
}
