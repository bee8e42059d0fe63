//! The persistent cache's side of a [`Linker`]: the key of a link, and
//! serving and storing its output.

use std::ffi::c_void;
use std::sync::Arc;

use super::{LinkError, Linker, OutputKind, Resolved};
use crate::cache::{
    CacheEntry, CacheKey, CachedLink, LinkCache, MemoryCache, UNIDENTIFIED, library_identity,
};
use crate::kind::ObjectKind;
use crate::object_code::ObjectCode;

impl Linker {
    /// Serves repeated links from `cache` (see [`LinkCache`]).
    pub fn with_cache(mut self, cache: Arc<LinkCache>) -> Self {
        self.cache = Some(cache);
        // Its identity of the backend depends on the cache (portable keys).
        self.backend_identity = std::sync::OnceLock::new();
        self
    }

    /// The cache in use, if any.
    pub fn cache(&self) -> Option<&Arc<LinkCache>> {
        self.cache.as_ref()
    }

    /// What the cache key holds of the backend: its name and version, and
    /// the identity of the file it was loaded from (see [`library_file_identity`];
    /// with a remote store, [`library_content_identity`]),
    /// so that a replaced or different library never serves another's
    /// output.
    fn backend_identity(&self) -> &str {
        self.backend_identity
            .get_or_init(|| self.read_backend_identity())
    }

    /// The backend's identity, and with NVVM IR inputs libNVVM's and
    /// libdevice's, which make the LTO-IR the backend links.
    fn key_identity(&self) -> std::borrow::Cow<'_, str> {
        #[cfg(feature = "nvvm")]
        if let Some(nvvm) = self.nvvm_identity() {
            return format!("{} | {nvvm}", self.backend_identity()).into();
        }
        self.backend_identity().into()
    }

    fn read_backend_identity(&self) -> String {
        // A function of the library, as resolved: `dladdr` on it names the
        // file that actually holds it.
        let (symbol, path) = match &self.backend {
            Resolved::NvJitLink(lib) => {
                (lib.nvJitLinkVersion.map(|f| f as *const c_void), lib.path())
            }
            Resolved::Driver(driver) => (
                driver.cuDriverGetVersion.map(|f| f as *const c_void),
                driver.path(),
            ),
        };
        let portable = self
            .cache
            .as_ref()
            .is_some_and(|cache| cache.portable_keys());
        let file = library_identity(symbol, path, portable)
            .unwrap_or_else(|why| format!("{UNIDENTIFIED} ({}: {why})", path.display()));
        format!("{} | {file}", self.backend_name())
    }

    /// The persistent-cache key a [`link`](Self::link) to `output` would
    /// use now (see [`CacheKey::for_link`]): to find out why a link missed.
    pub fn cache_key(&self, output: OutputKind) -> Result<CacheKey, LinkError> {
        let (_, flags) = self.flags_for(output)?;
        Ok(CacheKey::for_link(
            &self.key_identity(),
            output,
            &flags,
            &self.inputs,
        ))
    }

    /// The key of a link to `output` with `flags`, and the persistent
    /// cache, when a cache is in use: the in-memory tier ([`MemoryCache`]),
    /// on unless its capacity is 0, or a [`LinkCache`].
    pub(super) fn cache_entry(&self, output: OutputKind, flags: &[String]) -> Option<CachedAt> {
        // `-no-cache` asks for a fresh link: no memory of earlier ones.
        let memory = MemoryCache::fronts(self.cache.as_deref()) && !self.options.no_cache;
        if self.cache.is_none() && !memory {
            return None;
        }
        let _phase = phase!("cache_key");
        let identity = self.key_identity();
        if identity.contains(UNIDENTIFIED) {
            // Two different files could share such an identity: no caching.
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(|| {
                let identity = identity.replace('\0', "");
                log::warn!("cuda-link cache: {identity}; linking uncached");
            });
            return None;
        }
        let key = CacheKey::for_link(&identity, output, flags, &self.inputs);
        Some(CachedAt {
            cache: self.cache.clone(),
            memory,
            key,
        })
    }

    /// The cached output of `entry`'s link, as `name`; an entry whose
    /// output fails validation is dropped, so the link runs again.
    pub(super) fn cache_hit(
        &mut self,
        at: Option<&CachedAt>,
        kind: ObjectKind,
        name: &str,
    ) -> Option<ObjectCode> {
        let CachedAt { cache, memory, key } = at?;
        let convert = |entry: CacheEntry| {
            let hit = CachedLink::try_from(entry)?;
            ObjectCode::with_kind(kind, hit.output, name)
                .map(|code| (code, hit.info_log))
                .map_err(|e| e.to_string())
        };
        let (code, info_log) = MemoryCache::load_with(cache.as_deref(), *memory, key, convert)?;
        self.info_log = info_log;
        Some(code)
    }

    /// Keeps a link's output in the in-memory tier and the cache.
    pub(super) fn cache_store(&self, at: &CachedAt, linked: &ObjectCode) {
        let entry = CachedLink::entry(linked.as_bytes(), &self.info_log);
        MemoryCache::store(at.cache.as_deref(), at.memory, &at.key, entry);
    }
}

/// Where a link's output is looked up and kept: its key, in the
/// in-memory tier and, when set, the persistent cache.
pub(super) struct CachedAt {
    cache: Option<Arc<LinkCache>>,
    /// Whether the in-memory tier is asked and filled.
    memory: bool,
    key: CacheKey,
}

impl CacheKey {
    /// The key of a link: the backend's identity (for a [`Linker`], library,
    /// version and the loaded file's real path, device, inode, size and
    /// modification time), the output kind, the flags in order, and every
    /// input's kind and bytes in order.
    pub fn for_link(
        backend: &str,
        output: OutputKind,
        flags: &[String],
        inputs: &[ObjectCode],
    ) -> Self {
        let mut key = CacheKey::builder("cuda-link link cache v3");
        key.field(backend.as_bytes())
            .field(format!("{output:?}").as_bytes())
            .count(flags.len());
        for flag in flags {
            key.field(flag.as_bytes());
        }
        key.count(inputs.len());
        for input in inputs {
            key.field(input.kind().name().as_bytes())
                .field(input.as_bytes());
        }
        key.finish()
    }
}
