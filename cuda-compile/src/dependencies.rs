//! [`Dependencies`]: what a compile read of the program's own files, from
//! the one scan of its includes that also makes its cache key.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::headers::{self, Closure};

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
            None if !self.candidates.is_empty() && headers::watchable(&self.folders, cache_dir) => {
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

/// `paths` in order, each once.
pub(crate) fn deduplicated(mut paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut seen = std::collections::HashSet::new();
    paths.retain(|path| seen.insert(path.clone()));
    paths
}
