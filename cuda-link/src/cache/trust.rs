//! Whom the cache trusts: a directory, and entries, owned by the current
//! (effective) user and writable by no one else. The SHA-256 in an entry is
//! a checksum, not a MAC, so anyone who can write the directory could plant
//! a cubin; ownership is what keeps them out. The checks here run on the
//! metadata of an open descriptor (see `dir`), never on a path that could
//! be swapped after the check.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Where the cache lives by default: `CUDA_LINK_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/cuda-link`, else `~/.cache/cuda-link`, else a
/// per-user folder `cuda-link-cache-<uid>` in the temporary directory,
/// which is checked like any other: another user who pre-creates it, as a
/// directory or as a symbolic link (even to a directory of ours), is
/// refused.
pub(super) fn default_dir() -> PathBuf {
    let from = |var: &str| {
        std::env::var_os(var)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    from("CUDA_LINK_CACHE_DIR")
        .or_else(|| from("XDG_CACHE_HOME").map(|d| d.join("cuda-link")))
        .or_else(|| from("HOME").map(|d| d.join(".cache/cuda-link")))
        .unwrap_or_else(|| std::env::temp_dir().join(format!("cuda-link-cache-{}", user_id())))
}

#[cfg(unix)]
fn user_id() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

#[cfg(not(unix))]
fn user_id() -> u32 {
    0
}

/// Creates `dir` and its missing parents with mode 0700.
pub(super) fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Refuses what another user owns or could write.
#[cfg(unix)]
pub(super) fn check_private(metadata: &fs::Metadata, what: &str) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let refuse = |why: String| Err(io::Error::new(io::ErrorKind::PermissionDenied, why));
    if metadata.uid() != user_id() {
        return refuse(format!(
            "the {what} is owned by uid {}, not by this user (uid {})",
            metadata.uid(),
            user_id()
        ));
    }
    if metadata.mode() & 0o022 != 0 {
        return refuse(format!(
            "the {what} is writable by others (mode {:o})",
            metadata.mode() & 0o7777
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
pub(super) fn check_private(_metadata: &fs::Metadata, _what: &str) -> io::Result<()> {
    Ok(())
}
