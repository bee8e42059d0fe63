//! The persistent cache's side of a [`Linker`]: the key of a link, and
//! serving and storing its output.

use std::sync::Arc;

use super::{LinkError, Linker, OutputKind, Resolved};
use crate::cache::{CacheKey, LinkCache};
use crate::{ObjectCode, ObjectKind};

impl Linker {
    /// Serves repeated links from `cache` (see [`LinkCache`]).
    pub fn with_cache(mut self, cache: Arc<LinkCache>) -> Self {
        self.cache = Some(cache);
        self
    }

    /// The cache in use, if any.
    pub fn cache(&self) -> Option<&Arc<LinkCache>> {
        self.cache.as_ref()
    }

    /// What the cache key holds of the backend: its name and version, and
    /// the loaded file's path, size and modification time, so that a
    /// replaced library never serves another's output.
    fn backend_identity(&self) -> &str {
        self.backend_identity
            .get_or_init(|| self.read_backend_identity())
    }

    fn read_backend_identity(&self) -> String {
        let path = match &self.backend {
            Resolved::NvJitLink(lib) => lib.path().to_path_buf(),
            Resolved::Driver(driver) => driver.path().to_path_buf(),
        };
        let file = loaded_file(&path);
        let (size, modified) = std::fs::metadata(&file)
            .map(|m| {
                let modified = m
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
                (m.len(), modified.map_or(0, |d| d.as_nanos()))
            })
            .unwrap_or((0, 0));
        format!(
            "{} | {} | {size} bytes | modified {modified}",
            self.backend_name(),
            file.display()
        )
    }

    /// The persistent-cache key a [`link`](Self::link) to `output` would
    /// use now (see [`CacheKey::new`]): to find out why a link missed.
    pub fn cache_key(&self, output: OutputKind) -> Result<CacheKey, LinkError> {
        let (_, flags) = self.resolved_flags(output)?;
        Ok(CacheKey::new(
            self.backend_identity(),
            output,
            &flags,
            &self.inputs,
        ))
    }

    /// The cache and the key of a link to `output` with `flags`, when a
    /// cache is in use.
    pub(super) fn cache_entry(
        &self,
        output: OutputKind,
        flags: &[String],
    ) -> Option<(Arc<LinkCache>, CacheKey)> {
        let cache = self.cache.as_ref()?;
        let key = CacheKey::new(self.backend_identity(), output, flags, &self.inputs);
        Some((Arc::clone(cache), key))
    }

    /// The cached output of `entry`'s link, as `name`; an entry whose
    /// output fails validation is dropped, so the link runs again.
    pub(super) fn cache_hit(
        &mut self,
        entry: Option<&(Arc<LinkCache>, CacheKey)>,
        kind: ObjectKind,
        name: &str,
    ) -> Option<ObjectCode> {
        let (cache, key) = entry?;
        let (code, info_log) = cache.load_with(key, |hit| {
            ObjectCode::with_kind(kind, hit.output, name).map(|code| (code, hit.info_log))
        })?;
        self.info_log = info_log;
        Some(code)
    }
}

/// The file behind a library path: itself when absolute; for a bare name
/// that the system loader resolved, the mapped file of that name, found in
/// `/proc/self/maps`.
fn loaded_file(path: &std::path::Path) -> std::path::PathBuf {
    if path.is_absolute() {
        return path.to_path_buf();
    }
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    maps.lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .map(std::path::Path::new)
        .find(|mapped| mapped.file_name() == path.file_name())
        .map_or_else(|| path.to_path_buf(), std::path::Path::to_path_buf)
}
