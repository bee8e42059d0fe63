//! [`Dependencies`]: what a compile read of the program's own files, from
//! the one scan of its includes that also makes its cache key.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::closure::{Closure, deduplicated};

/// The program's own files a compile reads, and where a new header would
/// change what it reads: from the scan of its includes that also makes
/// its cache key. NVIDIA's headers and the in-memory ones are not the
/// program's and are not listed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Dependencies {
    /// The source file, then each header the scan reached in the
    /// program's folders.
    pub files: Vec<PathBuf>,
    /// The program's folders: the include path's, then the source's.
    pub folders: Vec<PathBuf>,
    /// Every path in those folders where an `#include` was looked for,
    /// found or not, each once (thousands for a program that includes
    /// CCCL: shared, not copied, by repeated compiles).
    pub candidates: Arc<[PathBuf]>,
    /// What the scan cannot follow (`#include MACRO`), if anything.
    pub unresolved: Option<String>,
}

impl Dependencies {
    pub(crate) fn new(source: &str, closure: &Closure, folders: Vec<PathBuf>) -> Self {
        let mut files = vec![PathBuf::from(source)];
        files.extend(closure.files.iter().cloned());
        Dependencies {
            files: deduplicated(files),
            folders,
            candidates: closure.unique_candidates(),
            unresolved: closure.unresolved.clone(),
        }
    }

    /// What a build script names in `rerun-if-changed`: the files, and the
    /// folders themselves when they are small enough for cargo to scan on
    /// every build (`cache_dir`, the compile cache's, not counted), else
    /// every candidate path, so that a header appearing at one is seen.
    /// When the scan could not follow the program, the folders whatever
    /// their size.
    pub fn to_watch(&self, cache_dir: Option<&Path>) -> Vec<PathBuf> {
        let mut found = self.files[..1.min(self.files.len())].to_vec();
        match &self.unresolved {
            // A path that does not exist makes cargo rerun the script
            // every time, so absent candidates are named only when the
            // folders are too big.
            None if !self.candidates.is_empty() && watchable(&self.folders, cache_dir) => {
                found.extend(self.folders.iter().cloned())
            }
            None => found.extend(self.candidates.iter().cloned()),
            Some(_) => found.extend(self.folders.iter().cloned()),
        }
        found.extend(self.files.iter().skip(1).cloned());
        found.retain(|path| !path.as_os_str().is_empty());
        deduplicated(found)
    }

    /// The files for a make or ninja depfile (nvcc's `-MMD`); `Err` with
    /// what the scan could not follow, as a depfile missing a header
    /// would leave builds stale.
    pub fn to_depfile(&self) -> Result<Vec<PathBuf>, String> {
        match &self.unresolved {
            Some(why) => Err(why.clone()),
            None => Ok(self.files.clone()),
        }
    }
}

/// Whether `folders` (recursively) hold few enough files for a build
/// script to name them to cargo, which scans them on every build: about
/// 4,096, not counting the compile cache's folder and folders tagged
/// `CACHEDIR.TAG` (cargo's `target/`).
fn watchable(folders: &[PathBuf], cache_dir: Option<&Path>) -> bool {
    const MAX_ENTRIES: usize = 4096;
    let cache = cache_dir.and_then(|dir| dir.canonicalize().ok());
    let mut stack: Vec<PathBuf> = folders
        .iter()
        .map(|dir| match dir.as_os_str().is_empty() {
            true => PathBuf::from("."),
            false => dir.clone(),
        })
        .collect();
    // Files counted, as the cache key once listed them.
    let mut files = 0usize;
    while let Some(dir) = stack.pop() {
        let Ok(listing) = std::fs::read_dir(&dir) else {
            files += 1;
            continue;
        };
        for entry in listing.flatten() {
            if files > MAX_ENTRIES {
                return false;
            }
            let path = entry.path();
            match entry.file_type() {
                Ok(kind)
                    if kind.is_dir()
                        && (cache.is_some() && path.canonicalize().ok() == cache
                            || path.join("CACHEDIR.TAG").is_file()) => {}
                Ok(kind) if kind.is_dir() => stack.push(path),
                _ => files += 1,
            }
        }
    }
    true
}
