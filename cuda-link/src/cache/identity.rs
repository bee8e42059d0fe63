//! Which library file produced an entry: part of every key, so that a
//! replaced or different library never serves another's output.

use std::ffi::c_void;
use std::path::Path;

/// Marks the identity of a library whose file could not be identified; a
/// NUL, which no path or version holds, keeps it from matching by chance.
#[cfg(feature = "link")]
pub(crate) const UNIDENTIFIED: &str = "\0unidentified library file";

/// The identity of the file that holds `symbol`, a function of a loaded
/// library, for a cache key: the file the loader mapped, as the address
/// space records it (`/proc/self/maps`: its device and inode, which stay
/// those of the mapped file when the path is replaced after the load),
/// with the size and modification time of the path when it still leads
/// to that file. Where the maps cannot be read: the file `dladdr` names
/// for the address (for a library opened by a bare name, or behind a
/// versioned symbolic link, the file the loader mapped, not the name
/// asked for), resolved with `realpath`, then its device, inode, size and
/// modification time.
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
    // A library stays mapped where it was loaded: its identity is read
    // once per base address and name, not from `/proc/self/maps` (tens of
    // microseconds) on every link.
    type Loaded = (usize, std::path::PathBuf);
    static READ: std::sync::Mutex<Vec<(Loaded, String)>> = std::sync::Mutex::new(Vec::new());
    let loaded = (info.dli_fbase as usize, mapped.to_path_buf());
    if let Some((_, identity)) = READ
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .find(|(l, _)| *l == loaded)
    {
        return Ok(identity.clone());
    }
    if let Some((device, inode)) = mapping_of(symbol as usize) {
        // Taken once per mapping: the path may be replaced after the load,
        // and this process still runs the mapped file.
        /// A mapping: the library's base address, device and inode.
        type Mapping = (usize, String, u64);
        static TAKEN: std::sync::Mutex<Vec<(Mapping, String)>> = std::sync::Mutex::new(Vec::new());
        let mapping = (info.dli_fbase as usize, device.clone(), inode);
        let mut taken = TAKEN.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, identity)) = taken.iter().find(|(m, _)| *m == mapping) {
            return Ok(identity.clone());
        }
        // Its size and time are the mapped file's while the path still
        // leads to the same device and inode.
        let now = std::fs::canonicalize(mapped)
            .and_then(|real| Ok((std::fs::metadata(&real)?, real)))
            .ok()
            .filter(|(meta, _)| meta.ino() == inode && maps_device(meta.dev()) == device);
        let identity = match now {
            Some((meta, real)) => format!(
                "{} | mapped device {device} inode {inode} | {} bytes | modified {}.{:09}",
                real.display(),
                meta.len(),
                meta.mtime(),
                meta.mtime_nsec()
            ),
            None => format!(
                "{} | mapped device {device} inode {inode} | replaced since the load",
                mapped.display()
            ),
        };
        taken.push((mapping, identity.clone()));
        READ.lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((loaded, identity.clone()));
        return Ok(identity);
    }
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

/// The identity of the library that holds `symbol` by its content, for a
/// key shared between machines (a cache with a remote store): its file
/// name, size and XXH3-128 hash, no path, device or time. The file read
/// is the one [`library_file_identity`] names; its hash is taken once per
/// process and file identity (an NVRTC of 100 MB: about 20 ms).
pub fn library_content_identity(
    symbol: Option<*const c_void>,
    opened: &Path,
) -> Result<String, String> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static HASHED: OnceLock<Mutex<HashMap<String, String>>> = OnceLock::new();
    let local = library_file_identity(symbol, opened)?;
    let hashed = HASHED.get_or_init(Mutex::default);
    if let Some(found) = hashed.lock().unwrap_or_else(|p| p.into_inner()).get(&local) {
        return Ok(found.clone());
    }
    // The mapped file: the identity's first field is its real path (or,
    // replaced since the load, the path it had).
    let path = Path::new(local.split(" | ").next().unwrap_or_default());
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut hasher = twox_hash::XxHash3_128::new();
    hasher.write(&bytes);
    let identity = format!(
        "{} | {} bytes | xxh3 {:032x}",
        path.file_name().unwrap_or_default().to_string_lossy(),
        bytes.len(),
        hasher.finish_128()
    );
    hashed
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(local, identity.clone());
    Ok(identity)
}

/// The identity a cache key holds of the library that holds `symbol`:
/// by its content when keys must be portable (a cache with a remote
/// store, [`LinkCache::portable_keys`](super::LinkCache::portable_keys)),
/// else by its file. The one choice of the link, compile and NVVM keys.
pub fn library_identity(
    symbol: Option<*const c_void>,
    opened: &Path,
    portable: bool,
) -> Result<String, String> {
    match portable {
        true => library_content_identity(symbol, opened),
        false => library_file_identity(symbol, opened),
    }
}

/// `dev` as `/proc/self/maps` spells it: `major:minor`, in hex (glibc's
/// encoding of the two numbers in a `dev_t`).
#[cfg(unix)]
fn maps_device(dev: u64) -> String {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    format!("{major:02x}:{minor:02x}")
}

/// The device (as `/proc/self/maps` spells it, `major:minor` in hex) and
/// inode of the file mapped at `address`, or `None` where the maps cannot
/// be read or name no file there.
#[cfg(unix)]
fn mapping_of(address: usize) -> Option<(String, u64)> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines().find_map(|line| {
        // `start-end perms offset dev inode path`
        let mut fields = line.split_whitespace();
        let (start, end) = fields.next()?.split_once('-')?;
        let (start, end) = (
            usize::from_str_radix(start, 16).ok()?,
            usize::from_str_radix(end, 16).ok()?,
        );
        if !(start..end).contains(&address) {
            return None;
        }
        let device = fields.nth(2)?.to_owned();
        let inode: u64 = fields.next()?.parse().ok()?;
        (inode != 0).then_some((device, inode))
    })
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A content identity names no folder, device or time, so two machines
    /// with the same library file agree on it.
    #[test]
    fn a_content_identity_is_the_file_not_where_it_is() {
        let symbol = Some(libc::strlen as *const c_void);
        let local = library_file_identity(symbol, Path::new("libc.so.6")).unwrap();
        let content = library_content_identity(symbol, Path::new("libc.so.6")).unwrap();
        assert!(local.contains('/'), "{local}");
        assert!(
            !content.contains('/') && content.contains("xxh3"),
            "{content}"
        );
        assert!(
            !content.contains("inode") && !content.contains("modified"),
            "{content}"
        );
        assert_eq!(
            library_content_identity(symbol, Path::new("libc.so.6")).unwrap(),
            content
        );
    }
}
