//! [`MemoryCache`]: this process's recent link and compile outputs, by
//! the persistent cache's keys, in front of the cache folder and the
//! shared store, and in front of no cache at all. Bounded by bytes, the
//! least recently used entry out first. It never serves another process:
//! a forked child finds it empty, whatever the parent held.

use std::any::Any;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use super::{CacheEntry, CacheKey, LinkCache};

/// The process-wide in-memory tier of the link and compile caches.
///
/// On by default, [`DEFAULT_BYTES`](Self::DEFAULT_BYTES) large: a
/// `Linker` or cuda-compile's `Compiler` asks it first
/// and fills it after a miss, with or without a [`LinkCache`](super::LinkCache),
/// in-process or isolated. A repeated link or compile then costs the key
/// (hashing the inputs) and a copy of the output.
///
/// ```
/// use cuda_link::MemoryCache;
/// MemoryCache::set_capacity(64 << 20); // 0 turns it off
/// assert_eq!(MemoryCache::capacity(), 64 << 20);
/// # MemoryCache::set_capacity(MemoryCache::DEFAULT_BYTES);
/// ```
#[derive(Debug)]
pub struct MemoryCache;

/// What the in-memory tier holds and did, in this process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MemoryStats {
    /// Entries held.
    pub entries: usize,
    /// Their bytes.
    pub bytes: u64,
    /// Lookups it answered.
    pub hits: u64,
    /// Lookups it could not.
    pub misses: u64,
    /// Entries dropped to stay within the capacity.
    pub evictions: u64,
}

struct Tier {
    /// The process the entries belong to.
    owner: crate::forks::Owner,
    capacity: u64,
    /// Recency: a counter bumped on every use.
    clock: u64,
    entries: BTreeMap<CacheKey, Held>,
    /// Entries by last use, oldest first.
    order: BTreeMap<u64, CacheKey>,
    /// The bytes of the entries held, kept as they come and go.
    held: u64,
    stats: MemoryStats,
}

struct Held {
    entry: Arc<CacheEntry>,
    /// What a caller decoded the entry into (a validated output), kept so
    /// that the next hit clones it rather than decoding again.
    decoded: Option<Arc<dyn Any + Send + Sync>>,
    used: u64,
    bytes: u64,
}

static TIER: Mutex<Tier> = Mutex::new(Tier {
    owner: crate::forks::Owner::NONE,
    capacity: MemoryCache::DEFAULT_BYTES,
    clock: 0,
    entries: BTreeMap::new(),
    order: BTreeMap::new(),
    held: 0,
    stats: MemoryStats {
        entries: 0,
        bytes: 0,
        hits: 0,
        misses: 0,
        evictions: 0,
    },
});

impl MemoryCache {
    /// The default bound: 256 MiB.
    pub const DEFAULT_BYTES: u64 = 256 << 20;

    /// Bounds the tier to `bytes` (entries are dropped, oldest use first,
    /// until it fits); 0 turns it off and empties it.
    pub fn set_capacity(bytes: u64) {
        let mut tier = tier();
        tier.capacity = bytes;
        tier.evict_to(bytes);
    }

    /// The bound in bytes.
    pub fn capacity() -> u64 {
        tier().capacity
    }

    /// Drops every entry.
    pub fn clear() {
        let mut tier = tier();
        tier.evict_to(0);
    }

    /// What it holds and did in this process.
    pub fn stats() -> MemoryStats {
        let tier = tier();
        MemoryStats {
            entries: tier.entries.len(),
            bytes: tier.held,
            ..tier.stats
        }
    }

    /// Whether lookups in front of `cache` (or of no cache) go through
    /// the tier: its capacity is not 0 and the cache does not turn it off
    /// ([`LinkCache::with_memory_tier`]).
    pub fn fronts(cache: Option<&LinkCache>) -> bool {
        Self::capacity() > 0 && cache.is_none_or(LinkCache::memory_tier)
    }

    /// `key`'s entry through `convert`: from the tier when `memory`, else
    /// from `cache` (then kept in the tier when `memory`). What `convert`
    /// refuses in the tier is passed over; in the cache it is removed, as
    /// [`LinkCache::load_with`] does. The one lookup of the link, compile
    /// and nvcc caches.
    pub fn load_with<T, E: std::fmt::Display>(
        cache: Option<&LinkCache>,
        memory: bool,
        key: &CacheKey,
        convert: impl Fn(CacheEntry) -> Result<T, E>,
    ) -> Option<T> {
        if memory
            && let Some(entry) = Self::get(key)
            && let Ok(value) = convert((*entry).clone())
        {
            return Some(value);
        }
        Self::from_store(cache, memory, key, convert).map(|(value, _)| value)
    }

    /// `key`'s entry from `cache` through `convert`, kept in the tier when
    /// `memory`: the value, and the entry as the tier holds it.
    fn from_store<T, E: std::fmt::Display>(
        cache: Option<&LinkCache>,
        memory: bool,
        key: &CacheKey,
        convert: impl Fn(CacheEntry) -> Result<T, E>,
    ) -> Option<(T, Option<Arc<CacheEntry>>)> {
        cache?.load_with(key, |entry| {
            let kept = memory.then(|| Arc::new(entry.clone()));
            let value = convert(entry)?;
            if let Some(kept) = &kept {
                Self::put(key, Arc::clone(kept));
            }
            Ok::<_, E>((value, kept))
        })
    }

    /// As [`load_with`](Self::load_with), and the tier keeps what `convert`
    /// made beside the entry: a repeated hit is a clone of it, with no
    /// decoding or validation again. For values cheap to clone (an
    /// `ObjectCode` shares its bytes).
    pub fn load_decoded<T, E>(
        cache: Option<&LinkCache>,
        memory: bool,
        key: &CacheKey,
        convert: impl Fn(CacheEntry) -> Result<T, E>,
    ) -> Option<T>
    where
        T: Clone + Send + Sync + 'static,
        E: std::fmt::Display,
    {
        if memory && let Some((entry, decoded)) = Self::get_held(key) {
            if let Some(value) = decoded.as_ref().and_then(|d| d.downcast_ref::<T>()) {
                return Some(value.clone());
            }
            if let Ok(value) = convert((*entry).clone()) {
                Self::decoded(key, &entry, Arc::new(value.clone()));
                return Some(value);
            }
        }
        let (value, kept) = Self::from_store(cache, memory, key, convert)?;
        if let Some(kept) = kept {
            Self::decoded(key, &kept, Arc::new(value.clone()));
        }
        Some(value)
    }

    /// As [`store`](Self::store), with the value the entry decodes to
    /// kept beside it for [`load_decoded`](Self::load_decoded).
    pub fn store_decoded<T: Send + Sync + 'static>(
        cache: Option<&LinkCache>,
        memory: bool,
        key: &CacheKey,
        entry: CacheEntry,
        decoded: T,
    ) {
        if let Some(cache) = cache {
            cache.store_entry(key, &entry);
        }
        if memory {
            let entry = Arc::new(entry);
            Self::put(key, Arc::clone(&entry));
            Self::decoded(key, &entry, Arc::new(decoded));
        }
    }

    /// Sets the decoded value of `key`'s entry, if that entry is still
    /// `entry`. It is counted as large as the entry (its own copy of the
    /// output).
    fn decoded(key: &CacheKey, entry: &Arc<CacheEntry>, decoded: Arc<dyn Any + Send + Sync>) {
        let mut tier = tier();
        let Some(held) = tier.entries.get_mut(key) else {
            return;
        };
        if !Arc::ptr_eq(&held.entry, entry) {
            return;
        }
        let added = match held.decoded.replace(decoded) {
            Some(_) => 0,
            None => held.bytes,
        };
        held.bytes += added;
        tier.held += added;
        let capacity = tier.capacity;
        tier.evict_to(capacity);
    }

    /// Keeps `entry` under `key` in `cache` and, when `memory`, in the tier.
    pub fn store(cache: Option<&LinkCache>, memory: bool, key: &CacheKey, entry: CacheEntry) {
        if let Some(cache) = cache {
            cache.store_entry(key, &entry);
        }
        if memory {
            Self::put(key, Arc::new(entry));
        }
    }

    /// The entry under `key`, made the most recently used.
    pub fn get(key: &CacheKey) -> Option<Arc<CacheEntry>> {
        Self::get_held(key).map(|(entry, _)| entry)
    }

    /// The entry under `key` and what it was decoded to, made the most
    /// recently used.
    #[allow(clippy::type_complexity)]
    fn get_held(key: &CacheKey) -> Option<(Arc<CacheEntry>, Option<Arc<dyn Any + Send + Sync>>)> {
        let mut tier = tier();
        tier.clock += 1;
        let now = tier.clock;
        let Some(held) = tier.entries.get_mut(key) else {
            tier.stats.misses += 1;
            return None;
        };
        let before = std::mem::replace(&mut held.used, now);
        let entry = Arc::clone(&held.entry);
        let decoded = held.decoded.clone();
        tier.order.remove(&before);
        tier.order.insert(now, *key);
        tier.stats.hits += 1;
        Some((entry, decoded))
    }

    /// Keeps `entry` under `key`, unless it alone is over the capacity.
    pub fn put(key: &CacheKey, entry: Arc<CacheEntry>) {
        let bytes: u64 = entry
            .blobs()
            .map(|(name, blob)| (name.len() + blob.len()) as u64)
            .sum();
        let mut tier = tier();
        if bytes > tier.capacity {
            return;
        }
        tier.clock += 1;
        let now = tier.clock;
        if let Some(old) = tier.entries.remove(key) {
            tier.order.remove(&old.used);
            tier.held -= old.bytes;
        }
        let capacity = tier.capacity;
        tier.evict_to(capacity - bytes);
        tier.entries.insert(
            *key,
            Held {
                entry,
                decoded: None,
                used: now,
                bytes,
            },
        );
        tier.order.insert(now, *key);
        tier.held += bytes;
    }
}

impl Tier {
    /// Drops the least recently used entries until at most `bytes` stay.
    fn evict_to(&mut self, bytes: u64) {
        while self.held > bytes {
            let Some((_, key)) = self.order.pop_first() else {
                break;
            };
            if let Some(gone) = self.entries.remove(&key) {
                self.held -= gone.bytes;
                self.stats.evictions += 1;
            }
        }
    }
}

/// The tier, emptied first if a fork copied another process's.
fn tier() -> MutexGuard<'static, Tier> {
    hold_across_forks();
    let mut tier = TIER.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let owner = crate::forks::Owner::current();
    if tier.owner != owner {
        tier.entries.clear();
        tier.order.clear();
        tier.held = 0;
        tier.stats = MemoryStats::default();
        tier.owner = owner;
    }
    tier
}

hold_across_forks!(hold_across_forks, TIER, Tier);

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u8) -> CacheKey {
        let mut key = CacheKey::builder("memory tier test");
        key.field(&[n]);
        key.finish()
    }

    fn entry(bytes: usize) -> Arc<CacheEntry> {
        Arc::new(CacheEntry::default().with("o", vec![7u8; bytes]))
    }

    /// One test: the tier is process-wide, and tests run in threads.
    #[test]
    fn bounded_least_recently_used_and_settable() {
        MemoryCache::set_capacity(3 * 1001);
        MemoryCache::clear();
        for n in 0..3 {
            MemoryCache::put(&key(n), entry(1000));
        }
        // 0 is used, so 1 is the oldest when 3 comes.
        assert!(MemoryCache::get(&key(0)).is_some());
        MemoryCache::put(&key(3), entry(1000));
        assert!(MemoryCache::get(&key(1)).is_none());
        for n in [0, 2, 3] {
            assert_eq!(
                MemoryCache::get(&key(n)).unwrap().get("o").unwrap().len(),
                1000
            );
        }
        // Too big alone: not kept, nothing evicted for it.
        MemoryCache::put(&key(9), entry(10_000));
        assert!(MemoryCache::get(&key(9)).is_none());
        assert_eq!(MemoryCache::stats().entries, 3);
        // Name and bytes of each blob, kept as entries come and go.
        assert_eq!(MemoryCache::stats().bytes, 3 * 1001);
        // A decoded value is kept beside its entry, counted as large, and
        // served without decoding again.
        MemoryCache::clear();
        let decodes = std::sync::atomic::AtomicU32::new(0);
        let decode = |entry: CacheEntry| {
            decodes.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Ok::<usize, String>(entry.get("o").map_or(0, <[u8]>::len))
        };
        // A miss is counted once.
        let misses = MemoryCache::stats().misses;
        assert_eq!(MemoryCache::load_decoded(None, true, &key(4), decode), None);
        assert_eq!(MemoryCache::stats().misses, misses + 1);
        MemoryCache::put(&key(4), entry(1000));
        for _ in 0..3 {
            assert_eq!(
                MemoryCache::load_decoded(None, true, &key(4), decode),
                Some(1000)
            );
        }
        assert_eq!(decodes.load(std::sync::atomic::Ordering::Relaxed), 1);
        assert_eq!(MemoryCache::stats().bytes, 2 * 1001);
        // A new entry under the key drops the old decoded value.
        MemoryCache::store_decoded(None, true, &key(4), (*entry(500)).clone(), 7usize);
        assert_eq!(
            MemoryCache::load_decoded(None, true, &key(4), decode),
            Some(7)
        );
        MemoryCache::put(&key(4), entry(200));
        assert_eq!(
            MemoryCache::load_decoded(None, true, &key(4), decode),
            Some(200)
        );
        MemoryCache::set_capacity(0);
        assert_eq!(MemoryCache::stats().entries, 0);
        MemoryCache::put(&key(0), entry(1));
        assert!(MemoryCache::get(&key(0)).is_none());
        MemoryCache::set_capacity(MemoryCache::DEFAULT_BYTES);
    }
}
