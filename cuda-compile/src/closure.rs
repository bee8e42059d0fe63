//! [`Closure`]: what one compile may read besides its source, and the
//! one policy that turns it into a cache key, for NVRTC's compiles and
//! nvcc's objects alike: the bytes of every file of the program's own
//! that it read, NVIDIA's and the toolchain's by identity (or, with
//! portable keys, by their place in their folder and their content), and
//! every place an `#include` was looked for and nothing was, so that a
//! header appearing there misses.
//!
//! A compile is stored only when nothing it read changed while it ran:
//! each file's stamp (device, inode, size, and the modification and
//! change times) is taken when it is read, after its change time has
//! settled into the past, and compared once the compile is done. A file
//! changed and changed back (A, B, A) has a new change time, whatever
//! its bytes; a writer cannot set that time back.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cuda_link::{CacheKey, KeyBuilder};

/// What a file was when it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Stamp {
    device: u64,
    inode: u64,
    size: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl Stamp {
    /// `path`'s stamp now, following links as a compiler's open does.
    pub(crate) fn of(path: &Path) -> std::io::Result<Stamp> {
        let metadata = std::fs::metadata(path)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Ok(Stamp {
                device: metadata.dev(),
                inode: metadata.ino(),
                size: metadata.size(),
                modified: (metadata.mtime(), metadata.mtime_nsec()),
                changed: (metadata.ctime(), metadata.ctime_nsec()),
            })
        }
        #[cfg(not(unix))]
        {
            let since = |time: std::io::Result<std::time::SystemTime>| {
                time.ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or((0, 0), |d| {
                        (d.as_secs() as i64, i64::from(d.subsec_nanos()))
                    })
            };
            Ok(Stamp {
                device: 0,
                inode: 0,
                size: metadata.len(),
                modified: since(metadata.modified()),
                changed: since(metadata.modified()),
            })
        }
    }

    /// The stamp as a key field (this machine's: not portable). The
    /// change time is in it: a file rewritten to its old size with its
    /// modification time set back (`cp -p`, `tar x`, `touch -r`) has a
    /// new one.
    pub(crate) fn describe(&self, path: &Path) -> String {
        format!(
            "{} {} {} {} {}.{} {}.{}",
            path.display(),
            self.device,
            self.inode,
            self.size,
            self.modified.0,
            self.modified.1,
            self.changed.0,
            self.changed.1
        )
    }

    /// Whether a write now would leave the change time as it is: the
    /// clock the kernel stamps files with has not passed it yet.
    fn is_racy(&self) -> bool {
        self.changed >= coarse_now()
    }

    /// Whether the file last changed before `time` (of [`coarse_now`]).
    pub(crate) fn changed_before(&self, time: (i64, i64)) -> bool {
        self.changed < time
    }
}

/// The clock file times are taken from: Linux stamps them with its coarse
/// real-time clock, a tick (1 to 10 ms) behind the precise one.
pub(crate) fn coarse_now() -> (i64, i64) {
    #[cfg(target_os = "linux")]
    {
        let now = rustix::time::clock_gettime(rustix::time::ClockId::RealtimeCoarse);
        (now.tv_sec, now.tv_nsec)
    }
    #[cfg(not(target_os = "linux"))]
    {
        // No such clock: a time within the last 50 ms is still racy.
        let now = std::time::SystemTime::now() - std::time::Duration::from_millis(50);
        let since = now
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        (since.as_secs() as i64, i64::from(since.subsec_nanos()))
    }
}

/// A file's bytes with the stamp they were read under, read once its
/// change time is in the past (a later write then changes it), and read
/// again if it changed while it was read. `settled` is false when it
/// kept changing: a compile that read it is not stored.
#[derive(Debug, Clone)]
pub(crate) struct Read {
    pub(crate) bytes: Vec<u8>,
    pub(crate) stamp: Stamp,
    pub(crate) settled: bool,
}

/// Reads `path` as [`Read`] says.
pub(crate) fn read_stamped(path: &Path) -> std::io::Result<Read> {
    let mut tries = 0;
    loop {
        let before = wait_until_settled(Stamp::of(path)?, path)?;
        let bytes = std::fs::read(path)?;
        let after = Stamp::of(path)?;
        let settled = before == after && !after.is_racy();
        tries += 1;
        if settled || tries == 4 {
            return Ok(Read {
                bytes,
                stamp: after,
                settled,
            });
        }
    }
}

/// `stamp` once the clock has passed its change time: at most a tick, a
/// few times over if the file keeps changing.
fn wait_until_settled(mut stamp: Stamp, path: &Path) -> std::io::Result<Stamp> {
    for _ in 0..50 {
        if !stamp.is_racy() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
        stamp = Stamp::of(path)?;
    }
    Ok(stamp)
}

/// What a program may read besides its source, found by one scan of its
/// includes: what the compile key is made of and what a build watches.
#[derive(Debug, Default)]
pub(crate) struct Closure {
    /// The key's fields, in the scan's order.
    pub(crate) fields: Vec<Vec<u8>>,
    /// Headers found in the program's folders, and the field holding the
    /// bytes read of each.
    pub files: Vec<PathBuf>,
    file_fields: Vec<usize>,
    /// Every path in the program's folders an `#include` was looked for
    /// at, found or not: where a new header would shadow another.
    pub candidates: Vec<PathBuf>,
    /// Of those, and of the toolchain's folders, the ones where nothing
    /// was.
    absent: Vec<PathBuf>,
    /// What the scan cannot follow (`#include MACRO`), if anything: such
    /// a compile is not cached, and its folders are watched whole.
    pub unresolved: Option<String>,
    /// Every path the scan looked at, in any folder, found or not: what
    /// its result depends on besides the folders' identities.
    pub looked_at: Vec<PathBuf>,
    /// The headers of NVIDIA's (or the toolchain's) it read.
    pub nvidia_files: Vec<PathBuf>,
    /// NVIDIA's folders keyed by their own identity (not with portable
    /// keys): a change of any entry in one changes the key.
    pub identified_folders: Vec<PathBuf>,
    /// Every file read, own and NVIDIA's, with its stamp when read.
    stamps: Vec<(PathBuf, Stamp)>,
    /// A file kept changing while the scan read it.
    unsettled: bool,
    /// The source or a header of the program's own uses `__FILE__` (or
    /// `assert`, ...): the output names where the files are.
    pub names_files: bool,
    /// The hash of the fields, which the key holds.
    digest: Option<CacheKey>,
    /// `candidates`, each once.
    unique_candidates: Arc<[PathBuf]>,
}

impl Closure {
    /// Adds a key field.
    pub(crate) fn field(&mut self, bytes: impl Into<Vec<u8>>) {
        self.fields.push(bytes.into());
    }

    /// A file of the program's own, read: its bytes join the key, and
    /// its stamp is checked after the compile.
    pub(crate) fn own_file(&mut self, path: PathBuf, read: Read) {
        self.file_fields.push(self.fields.len());
        self.field(read.bytes);
        self.stamped(path.clone(), read.stamp, read.settled);
        self.files.push(path);
    }

    /// A file read whose stamp is checked after the compile.
    pub(crate) fn stamped(&mut self, path: PathBuf, stamp: Stamp, settled: bool) {
        self.unsettled |= !settled;
        self.stamps.push((path, stamp));
    }

    /// A place an `#include` was looked for and nothing was.
    pub(crate) fn absent(&mut self, path: PathBuf) {
        self.absent.push(path);
    }

    /// Hashes the fields once: a remembered closure serves many keys.
    pub(crate) fn seal(&mut self) {
        let mut digest = CacheKey::builder("include closure");
        digest.count(self.fields.len());
        for field in &self.fields {
            digest.field(field);
        }
        self.digest = Some(digest.finish());
        let unique = deduplicated(self.candidates.clone());
        self.unique_candidates = unique.into();
    }

    /// Every candidate path, each once.
    pub fn unique_candidates(&self) -> Arc<[PathBuf]> {
        Arc::clone(&self.unique_candidates)
    }

    /// Adds the closure to a compile's key.
    pub fn key_into(&self, key: &mut KeyBuilder) {
        match &self.digest {
            Some(digest) => key.field(digest.as_bytes()),
            None => key.field(b"unsealed closure"),
        };
    }

    /// Whether `other` looked at the same paths and found the same files:
    /// what the two depend on is the same.
    pub fn looks_at_the_same(&self, other: &Closure) -> bool {
        self.looked_at == other.looked_at
            && self.files == other.files
            && self.nvidia_files == other.nvidia_files
            && self.identified_folders == other.identified_folders
    }

    /// About how many bytes the closure holds, for the memo's bound.
    pub fn size(&self) -> usize {
        let paths = self
            .files
            .iter()
            .chain(&self.candidates)
            .chain(&self.absent)
            .chain(&self.looked_at)
            .chain(&self.nvidia_files);
        let paths: usize = paths.map(|path| path.as_os_str().len() + 24).sum();
        paths
            + self.stamps.len() * 64
            + self
                .fields
                .iter()
                .map(|field| field.len() + 24)
                .sum::<usize>()
    }

    /// Whether everything the scan read is as it was read: every file has
    /// the stamp it was read under (a write since, even one undone, gave
    /// it a new change time) and the bytes of the program's own are the
    /// same, and no header has appeared where it found none. A compile
    /// whose headers changed while the compiler read them may be of
    /// neither version, and is not stored.
    pub fn unchanged(&self) -> bool {
        if self.unsettled {
            return false;
        }
        let stamps = self
            .stamps
            .iter()
            .all(|(path, stamp)| Stamp::of(path).ok() == Some(*stamp));
        let bytes = self
            .files
            .iter()
            .zip(&self.file_fields)
            .all(|(path, &field)| std::fs::read(path).ok().as_deref() == Some(&self.fields[field]));
        stamps && bytes && self.absent.iter().all(|path| !path.exists())
    }
}

/// `paths` in order, each once.
pub(crate) fn deduplicated(mut paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut seen = std::collections::HashSet::new();
    paths.retain(|path| seen.insert(path.clone()));
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file written and written back to the same bytes has another
    /// stamp; one read in the tick it was written is read once that tick
    /// has passed.
    #[test]
    fn a_change_undone_changes_the_stamp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.h");
        std::fs::write(&path, "A").unwrap();
        let read = read_stamped(&path).unwrap();
        assert!(read.settled);
        assert_eq!(read.bytes, b"A");
        std::fs::write(&path, "B").unwrap();
        std::fs::write(&path, "A").unwrap();
        assert_ne!(Stamp::of(&path).unwrap(), read.stamp);
    }
}
