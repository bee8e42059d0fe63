//! [`IncludeSearch`] and [`ReadSet`]: the closure key of a compile that
//! another compiler than NVRTC runs (cuda-build's nvcc objects), made by
//! the same scan and the same policy as NVRTC's compile key.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cuda_link::KeyBuilder;

use crate::closure::{Closure, Read, Stamp, read_stamped};
use crate::dependencies::Dependencies;
use crate::search::{SearchPath, under_base};

/// Where a compiler looks for the headers of a file it compiles: the
/// folders of the program's own, whose headers' bytes join the key, and
/// the toolchain's, whose headers are keyed by identity (or, with
/// portable keys, by their place in their folder and their content).
///
/// ```no_run
/// use cuda_compile::IncludeSearch;
///
/// let mut search = IncludeSearch::new();
/// search
///     .own_folders(["kernels/include"])
///     .toolchain_folders(["/usr/local/cuda/include", "/usr/include"])
///     .pre_include(["cuda_runtime.h"]);
/// let read = search.scan("kernels/launch.cu".as_ref())?;
/// assert!(read.unresolved().is_none());
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct IncludeSearch {
    own: Vec<PathBuf>,
    toolchain: Vec<PathBuf>,
    pre_include: Vec<String>,
    base: Option<PathBuf>,
    portable: bool,
}

impl IncludeSearch {
    /// No folder yet: the compiled file's own folder is always searched.
    pub fn new() -> Self {
        Self::default()
    }

    /// Folders of the program's own (`-I`, `-isystem`, `CPATH`, ...), in
    /// order.
    pub fn own_folders<P: Into<PathBuf>>(
        &mut self,
        folders: impl IntoIterator<Item = P>,
    ) -> &mut Self {
        self.own.extend(folders.into_iter().map(Into::into));
        self
    }

    /// The toolchain's folders (nvcc's `include`, the host compiler's),
    /// in order.
    pub fn toolchain_folders<P: Into<PathBuf>>(
        &mut self,
        folders: impl IntoIterator<Item = P>,
    ) -> &mut Self {
        self.toolchain.extend(folders.into_iter().map(Into::into));
        self
    }

    /// Headers the compiler includes before the file (`-include`, and
    /// nvcc's own `cuda_runtime.h`).
    pub fn pre_include<S: Into<String>>(
        &mut self,
        names: impl IntoIterator<Item = S>,
    ) -> &mut Self {
        self.pre_include.extend(names.into_iter().map(Into::into));
        self
    }

    /// Names paths under `dir` relative to it in the key (a crate's
    /// root), so that checkouts at other paths share it.
    pub fn base_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Self {
        self.base = Some(dir.into());
        self
    }

    /// Keys the same on every machine (a cache with a shared store).
    pub fn portable(&mut self, on: bool) -> &mut Self {
        self.portable = on;
        self
    }

    /// Reads `file` and scans what it includes.
    ///
    /// # Errors
    /// When `file` cannot be read.
    pub fn scan(&self, file: &Path) -> std::io::Result<ReadSet> {
        let started = crate::closure::coarse_now();
        let source = read_stamped(file)?;
        let text = String::from_utf8_lossy(&source.bytes).into_owned();
        let search = SearchPath {
            portable: self.portable,
            memory: &[],
            source_dir: file.parent().map(Path::to_path_buf),
            user: self.own.clone(),
            system: self.toolchain.clone(),
            base: self.base.clone(),
        };
        let closure = search.remembered_closure(&text, &self.pre_include);
        // Each file the scan read, by its real path, looked up once.
        let reached = std::iter::once(file)
            .chain(closure.files.iter().map(PathBuf::as_path))
            .chain(closure.nvidia_files.iter().map(PathBuf::as_path))
            .filter_map(|path| path.canonicalize().ok())
            .collect();
        Ok(ReadSet {
            reached,
            file: file.to_path_buf(),
            source,
            closure,
            folders: search.folders(),
            toolchain: self.toolchain.clone(),
            base: self.base.clone(),
            started,
            also: Vec::new(),
        })
    }
}

/// What one compile of a file reads, as [`IncludeSearch::scan`] found it,
/// and any file the compiler reported reading besides: its key, and
/// whether all of it is still as it was read.
#[derive(Debug, Clone)]
pub struct ReadSet {
    /// The real path of every file the scan read.
    reached: std::collections::HashSet<PathBuf>,
    file: PathBuf,
    source: Read,
    closure: Arc<Closure>,
    folders: Vec<PathBuf>,
    toolchain: Vec<PathBuf>,
    base: Option<PathBuf>,
    /// When the scan began, by the clock file times are stamped with.
    started: (i64, i64),
    /// Files read besides what the scan reached, with what they were.
    also: Vec<(PathBuf, Read)>,
}

impl ReadSet {
    /// The compiled file's bytes, as read.
    pub fn source(&self) -> &[u8] {
        &self.source.bytes
    }

    /// What the scan cannot follow (`#include MACRO`), if anything: a
    /// compile of such a file is not cached.
    pub fn unresolved(&self) -> Option<&str> {
        self.closure.unresolved.as_deref()
    }

    /// Whether what is compiled may name where the files are: the file or
    /// a header of its own uses `__FILE__` (or `assert`, ...). Its key
    /// should then hold where they are.
    pub fn names_its_files(&self) -> bool {
        self.closure.names_files
    }

    /// Whether the scan read `path` (the file, a header of the program's
    /// own, or one of the toolchain's).
    pub fn reached(&self, path: &Path) -> bool {
        path.canonicalize()
            .is_ok_and(|real| self.reached.contains(&real))
    }

    /// Whether `path` is in one of the toolchain's folders.
    pub fn is_toolchains(&self, path: &Path) -> bool {
        let real = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        self.toolchain
            .iter()
            .any(|dir| path.starts_with(dir) || real.starts_with(dir))
    }

    /// A file the compiler reported reading that the scan did not reach
    /// (an include through a macro in the toolchain's headers): its bytes
    /// join the key, and a change after the scan began keeps the compile
    /// from being stored.
    ///
    /// # Errors
    /// When it cannot be read.
    pub fn also_read(&mut self, path: &Path) -> std::io::Result<()> {
        let read = read_stamped(path)?;
        self.also.push((path.to_path_buf(), read));
        Ok(())
    }

    /// Adds what was read to a compile's key: the file's name (relative
    /// to the base folder) and bytes, the closure, and each file read
    /// besides.
    pub fn key_into(&self, key: &mut KeyBuilder) {
        let name = |path: &Path| under_base(&path.display().to_string(), self.base.as_deref());
        key.field(name(&self.file).as_bytes())
            .field(&self.source.bytes);
        self.closure.key_into(key);
        key.count(self.also.len());
        for (path, read) in &self.also {
            key.field(name(path).as_bytes()).field(&read.bytes);
        }
    }

    /// Whether everything read is as it was: the file and each header
    /// the scan read have the stamps they were read under, no header
    /// appeared where the scan found none, and no file read besides was
    /// changed after the scan began. A compile for which this is false
    /// may have read something else: it is not stored.
    pub fn unchanged(&self) -> bool {
        let source = self.source.settled && Stamp::of(&self.file).ok() == Some(self.source.stamp);
        let also = self.also.iter().all(|(path, read)| {
            read.settled
                && read.stamp.changed_before(self.started)
                && Stamp::of(path).ok() == Some(read.stamp)
        });
        source && also && self.closure.unchanged()
    }

    /// The files and folders of the program's own to watch for a rerun
    /// (a build script's `rerun-if-changed`), as [`Dependencies`] says.
    pub fn dependencies(&self) -> Dependencies {
        let mut dependencies = Dependencies::new(
            &self.file.display().to_string(),
            &self.closure,
            self.folders.clone(),
        );
        let own = self
            .also
            .iter()
            .map(|(path, _)| path)
            .filter(|p| !self.is_toolchains(p));
        dependencies.files.extend(own.cloned());
        dependencies
    }
}
