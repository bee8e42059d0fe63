//! The cache directory, opened once and then used by descriptor.
//!
//! On unix the directory is opened with `O_DIRECTORY | O_NOFOLLOW` and
//! checked with `fstat` (a directory, owned by the effective user, writable
//! by no one else); that descriptor is the verdict. Every entry is then
//! looked at, opened, created, renamed and removed relative to it
//! (`fstatat`, `openat`, `renameat`, `unlinkat`), never through the path
//! again, so renaming the directory away, or swapping its path for a
//! symbolic link, after it was opened changes nothing for this process. A
//! path whose last component is a symbolic link is refused, even when it
//! leads to a directory of ours: whoever made the link can retarget it.
//!
//! An entry is opened with `O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC` and must
//! be, by `fstat` on the open file, a regular file of ours that no one else
//! can write, at most a size bound: a symbolic link, a FIFO (which would
//! block a plain `open`), a device, a socket or a directory is refused
//! without being read, and anything but a regular file is not even opened.
//!
//! Elsewhere, the same operations go by path, with the same type and size
//! checks.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::Path;
use std::time::SystemTime;

use super::trust;

/// Why the directory cannot be used.
pub(super) enum OpenError {
    /// It does not exist, and was not to be created.
    Missing,
    /// It could not be created or opened.
    Io(io::Error),
    /// It is not ours to trust: another user's, writable by others, a
    /// symbolic link, not a directory, or one we may not open.
    Refused(String),
}

/// What a lookup found under an entry's name.
pub(super) enum Found {
    /// Nothing.
    Missing,
    /// Something not to read, and why.
    Refused(String),
    /// A regular file of ours within the bound, open for reading, and its
    /// length when opened.
    File(fs::File, u64),
}

/// One name in the directory, as `lstat` sees it.
pub(super) struct Listed {
    pub(super) name: OsString,
    pub(super) regular: bool,
    pub(super) len: u64,
    pub(super) modified: SystemTime,
}

/// An opened, trusted cache directory.
pub(super) struct Dir {
    /// The directory itself, opened `O_DIRECTORY | O_NOFOLLOW`.
    #[cfg(unix)]
    dir: fs::File,
    #[cfg(not(unix))]
    path: std::path::PathBuf,
}

/// Checks an entry's metadata, taken from the open file.
/// An opened entry, if what was opened is one (see [`check_entry`]).
fn checked(file: fs::File, max_len: u64) -> Found {
    let checked = file
        .metadata()
        .map_err(|e| e.to_string())
        .and_then(|metadata| check_entry(&metadata, max_len));
    match checked {
        Ok(len) => Found::File(file, len),
        Err(why) => Found::Refused(why),
    }
}

fn check_entry(metadata: &fs::Metadata, max_len: u64) -> Result<u64, String> {
    if !metadata.is_file() {
        return Err(format!("it is {}, not a regular file", kind(metadata)));
    }
    trust::check_private(metadata, "entry").map_err(|e| e.to_string())?;
    if metadata.len() > max_len {
        return Err(format!(
            "it holds {} bytes, over the bound of {max_len}",
            metadata.len()
        ));
    }
    Ok(metadata.len())
}

/// What a file is, for messages.
fn kind(metadata: &fs::Metadata) -> &'static str {
    let file_type = metadata.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_socket() {
            return "a socket";
        }
        if file_type.is_block_device() || file_type.is_char_device() {
            return "a device";
        }
    }
    if file_type.is_symlink() {
        "a symbolic link"
    } else if file_type.is_dir() {
        "a directory"
    } else if file_type.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// What is at `path` when it could not be opened as a directory: a
/// refusal when it exists and is not a plain directory of ours to open.
fn refusal(path: &Path, err: &io::Error) -> Option<String> {
    let metadata = fs::symlink_metadata(path).ok()?;
    Some(if metadata.file_type().is_symlink() {
        "it is a symbolic link".to_owned()
    } else if !metadata.is_dir() {
        format!("it is {}, not a directory", kind(&metadata))
    } else {
        format!("cannot open it: {err}")
    })
}

#[cfg(unix)]
mod unix {
    use std::ffi::{CStr, CString, OsStr};
    use std::fs;
    use std::io;
    use std::mem::MaybeUninit;
    use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use super::{Dir, Found, Listed, OpenError, checked, refusal};
    use crate::cache::trust;

    fn c_name(name: &str) -> io::Result<CString> {
        CString::new(name).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in name"))
    }

    /// `-1` to the error in `errno`.
    fn check(status: libc::c_int) -> io::Result<libc::c_int> {
        if status < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(status)
        }
    }

    /// Takes ownership of a descriptor just returned by `open` or `openat`.
    fn owned(fd: libc::c_int) -> io::Result<OwnedFd> {
        let fd = check(fd)?;
        // SAFETY: a descriptor that was just opened and that nothing else
        // holds.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    /// The modification time of a `stat`, which may be before 1970.
    // `time_t` and the nanoseconds' type differ between platforms.
    #[allow(clippy::unnecessary_cast)]
    fn modified(stat: &libc::stat) -> SystemTime {
        let (seconds, nanos) = (stat.st_mtime as i64, stat.st_mtime_nsec as i64);
        let nanos = Duration::from_nanos(nanos.clamp(0, 999_999_999) as u64);
        match u64::try_from(seconds) {
            Ok(seconds) => UNIX_EPOCH + Duration::from_secs(seconds) + nanos,
            Err(_) => UNIX_EPOCH - Duration::from_secs(seconds.unsigned_abs()) + nanos,
        }
    }

    impl Dir {
        fn fd(&self) -> libc::c_int {
            self.dir.as_raw_fd()
        }

        /// Opens `path`, creating it (mode 0700, with its parents) first
        /// when it is missing and `create`.
        pub(in crate::cache) fn open(path: &Path, create: bool) -> Result<Dir, OpenError> {
            let c_path = CString::new(path.as_os_str().as_bytes())
                .map_err(|_| OpenError::Refused("the path holds a NUL byte".to_owned()))?;
            let mut created = false;
            let fd = loop {
                // SAFETY: a NUL-terminated path; these flags take no mode.
                let fd = unsafe {
                    libc::open(
                        c_path.as_ptr(),
                        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                    )
                };
                match owned(fd) {
                    Ok(fd) => break fd,
                    Err(err) => {
                        if let Some(why) = refusal(path, &err) {
                            return Err(OpenError::Refused(why));
                        }
                        if !create {
                            return Err(OpenError::Missing);
                        }
                        if created {
                            return Err(OpenError::Io(err));
                        }
                        // Never through a symbolic link: one that appears
                        // meanwhile fails the `O_NOFOLLOW` open above.
                        trust::create_private_dir(path).map_err(OpenError::Io)?;
                        created = true;
                    }
                }
            };
            let dir = fs::File::from(fd);
            // `fstat` of the descriptor: what was opened, not what the
            // path leads to now.
            let metadata = dir.metadata().map_err(OpenError::Io)?;
            if !metadata.is_dir() {
                return Err(OpenError::Refused("it is not a directory".to_owned()));
            }
            trust::check_private(&metadata, "directory")
                .map_err(|e| OpenError::Refused(e.to_string()))?;
            Ok(Dir { dir })
        }

        /// `lstat` of a name in the directory.
        fn stat(&self, name: &CStr) -> io::Result<libc::stat> {
            let mut stat = MaybeUninit::<libc::stat>::uninit();
            // SAFETY: a NUL-terminated name and room for one `stat`.
            check(unsafe {
                libc::fstatat(
                    self.fd(),
                    name.as_ptr(),
                    stat.as_mut_ptr(),
                    libc::AT_SYMLINK_NOFOLLOW,
                )
            })?;
            // SAFETY: `fstatat` succeeded, so it filled `stat`.
            Ok(unsafe { stat.assume_init() })
        }

        /// Opens the entry `name` for reading, if it is one to trust.
        pub(in crate::cache) fn open_entry(&self, name: &str, max_len: u64) -> Found {
            let name = match c_name(name) {
                Ok(name) => name,
                Err(err) => return Found::Refused(err.to_string()),
            };
            // Anything but a regular file is not even opened: opening a
            // device can have effects.
            match self.stat(&name) {
                Ok(stat) if stat.st_mode & libc::S_IFMT == libc::S_IFREG => {}
                Ok(_) => return Found::Refused("it is not a regular file".to_owned()),
                Err(err) if err.kind() == io::ErrorKind::NotFound => return Found::Missing,
                Err(err) => return Found::Refused(format!("cannot stat it: {err}")),
            }
            // Swapped since? `O_NOFOLLOW` refuses a symbolic link, and
            // `O_NONBLOCK` keeps a FIFO from blocking the open; the type
            // is checked again on the open file.
            // SAFETY: a NUL-terminated name; these flags take no mode.
            let fd = unsafe {
                libc::openat(
                    self.fd(),
                    name.as_ptr(),
                    libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC,
                )
            };
            let file = match owned(fd) {
                Ok(fd) => fs::File::from(fd),
                Err(err) if err.kind() == io::ErrorKind::NotFound => return Found::Missing,
                Err(err) => return Found::Refused(format!("cannot open it: {err}")),
            };
            checked(file, max_len)
        }

        /// Creates `name`, which must not exist, mode 0600.
        pub(in crate::cache) fn create_new(&self, name: &str) -> io::Result<fs::File> {
            let name = c_name(name)?;
            let mode: libc::c_uint = 0o600;
            // SAFETY: a NUL-terminated name, and the mode `O_CREAT` takes.
            let fd = unsafe {
                libc::openat(
                    self.fd(),
                    name.as_ptr(),
                    libc::O_WRONLY
                        | libc::O_CREAT
                        | libc::O_EXCL
                        | libc::O_NOFOLLOW
                        | libc::O_NONBLOCK
                        | libc::O_CLOEXEC,
                    mode,
                )
            };
            owned(fd).map(fs::File::from)
        }

        /// Renames `from` to `to`, replacing `to`.
        pub(in crate::cache) fn rename(&self, from: &str, to: &str) -> io::Result<()> {
            let (from, to) = (c_name(from)?, c_name(to)?);
            // SAFETY: two NUL-terminated names in the same directory.
            check(unsafe { libc::renameat(self.fd(), from.as_ptr(), self.fd(), to.as_ptr()) })
                .map(drop)
        }

        /// Removes `name` (a link itself, never what it leads to).
        pub(in crate::cache) fn remove(&self, name: &OsStr) -> io::Result<()> {
            let name = CString::new(name.as_bytes())
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in name"))?;
            // SAFETY: a NUL-terminated name.
            check(unsafe { libc::unlinkat(self.fd(), name.as_ptr(), 0) }).map(drop)
        }

        /// Every name in the directory but `.` and `..`, with its `lstat`.
        pub(in crate::cache) fn list(&self) -> io::Result<Vec<Listed>> {
            /// Closes the stream, and with it its descriptor.
            struct Stream(*mut libc::DIR);
            impl Drop for Stream {
                fn drop(&mut self) {
                    // SAFETY: a stream from `fdopendir`, closed once.
                    unsafe { libc::closedir(self.0) };
                }
            }
            // A descriptor of its own: a `dup` would share the reading
            // position with every other scan.
            // SAFETY: a NUL-terminated name; these flags take no mode.
            let fd = owned(unsafe {
                libc::openat(
                    self.fd(),
                    c".".as_ptr(),
                    libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
                )
            })?;
            let fd = fd.into_raw_fd();
            // SAFETY: an open directory descriptor, which the stream takes
            // over on success.
            let stream = unsafe { libc::fdopendir(fd) };
            if stream.is_null() {
                let err = io::Error::last_os_error();
                // SAFETY: still ours, as `fdopendir` failed.
                drop(unsafe { OwnedFd::from_raw_fd(fd) });
                return Err(err);
            }
            let stream = Stream(stream);
            let mut listed = Vec::new();
            loop {
                // SAFETY: an open stream, read by this thread only.
                let entry = unsafe { libc::readdir(stream.0) };
                if entry.is_null() {
                    break;
                }
                // SAFETY: `readdir` returned an entry whose name is
                // NUL-terminated; it stays valid until the next call.
                let name = unsafe { CStr::from_ptr((*entry).d_name.as_ptr()) };
                if name == c"." || name == c".." {
                    continue;
                }
                let Ok(stat) = self.stat(name) else {
                    continue; // removed meanwhile
                };
                listed.push(Listed {
                    name: OsStr::from_bytes(name.to_bytes()).to_owned(),
                    regular: stat.st_mode & libc::S_IFMT == libc::S_IFREG,
                    len: u64::try_from(stat.st_size).unwrap_or(0),
                    modified: modified(&stat),
                });
            }
            Ok(listed)
        }
    }
}

#[cfg(not(unix))]
impl Dir {
    /// Opens `path`, creating it (with its parents) first when it is
    /// missing and `create`.
    pub(super) fn open(path: &Path, create: bool) -> Result<Dir, OpenError> {
        if let Err(err) = fs::symlink_metadata(path) {
            if let Some(why) = refusal(path, &err) {
                return Err(OpenError::Refused(why));
            }
            if !create {
                return Err(OpenError::Missing);
            }
            trust::create_private_dir(path).map_err(OpenError::Io)?;
        }
        let metadata = fs::symlink_metadata(path).map_err(OpenError::Io)?;
        if metadata.file_type().is_symlink() || !metadata.is_dir() {
            let err = io::Error::new(io::ErrorKind::InvalidInput, "not a directory");
            return Err(OpenError::Refused(
                refusal(path, &err).unwrap_or_else(|| err.to_string()),
            ));
        }
        trust::check_private(&metadata, "directory")
            .map_err(|e| OpenError::Refused(e.to_string()))?;
        Ok(Dir {
            path: path.to_path_buf(),
        })
    }

    /// Opens the entry `name` for reading, if it is one to trust.
    pub(super) fn open_entry(&self, name: &str, max_len: u64) -> Found {
        let path = self.path.join(name);
        match fs::symlink_metadata(&path) {
            Ok(metadata) if metadata.is_file() => {}
            Ok(metadata) => return Found::Refused(format!("it is {}", kind(&metadata))),
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Found::Missing,
            Err(err) => return Found::Refused(format!("cannot stat it: {err}")),
        }
        let file = match fs::File::open(&path) {
            Ok(file) => file,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Found::Missing,
            Err(err) => return Found::Refused(format!("cannot open it: {err}")),
        };
        checked(file, max_len)
    }

    /// Creates `name`, which must not exist.
    pub(super) fn create_new(&self, name: &str) -> io::Result<fs::File> {
        fs::File::options()
            .write(true)
            .create_new(true)
            .open(self.path.join(name))
    }

    /// Renames `from` to `to`, replacing `to`.
    pub(super) fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        fs::rename(self.path.join(from), self.path.join(to))
    }

    /// Removes `name`.
    pub(super) fn remove(&self, name: &std::ffi::OsStr) -> io::Result<()> {
        fs::remove_file(self.path.join(name))
    }

    /// Every name in the directory, with its metadata.
    pub(super) fn list(&self) -> io::Result<Vec<Listed>> {
        let mut listed = Vec::new();
        for entry in fs::read_dir(&self.path)?.filter_map(Result::ok) {
            let Ok(metadata) = fs::symlink_metadata(entry.path()) else {
                continue;
            };
            listed.push(Listed {
                name: entry.file_name(),
                regular: metadata.is_file(),
                len: metadata.len(),
                modified: metadata.modified().unwrap_or_else(|_| SystemTime::now()),
            });
        }
        Ok(listed)
    }
}
