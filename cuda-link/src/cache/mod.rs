//! [`LinkCache`]: an opt-in, content-addressed on-disk cache of link
//! results, so that relinking the same inputs costs a file read.
//!
//! **The key** ([`CacheKey`]) is a SHA-256 over, each length-prefixed: the
//! backend's identity (its library and version, and the loaded file's path,
//! size and modification time), the output kind, the final flag list in
//! order (nvJitLink's flags are order-sensitive: the last `-O` wins), and
//! every input's kind and bytes, in order.
//!
//! **Trust.** The directory is created with mode 0700. A directory, or an
//! entry, owned by another user or writable by others is refused with a
//! warning, and the link proceeds uncached: the checksum in an entry
//! catches corruption, not a planted cubin. The fallback directory, when
//! neither `CUDA_LINK_CACHE_DIR`, `XDG_CACHE_HOME` nor `HOME` is set, is
//! per-user and checked the same way.
//!
//! **Recovery.** A corrupt or truncated entry, or one whose output fails
//! `ObjectCode` validation, is removed and relinked, never returned.
//! Entries are written to a private temporary file and renamed into place,
//! so threads and processes can share a directory; temporaries older than
//! ten minutes, left by crashed writers, are removed. The least recently
//! used entries are evicted past a size bound; the directory is rescanned
//! only when this process's running total passes the bound or every 64
//! stores, and eviction goes down to 90 % of it, so a store costs no
//! directory scan on average. A directory that cannot be written only
//! costs the caching: the link still succeeds, and a warning goes through
//! `log`.
//!
//! ```no_run
//! use std::sync::Arc;
//! use cuda_link::{Arch, LinkCache, Linker, LinkerOptions, ObjectCode, OutputKind};
//!
//! let cache = Arc::new(LinkCache::open_default());
//! let mut linker = Linker::new(LinkerOptions::for_arch(Arch::sm(90)))?.with_cache(Arc::clone(&cache));
//! linker.add(&ObjectCode::from_path("kernels.ptx")?)?;
//! let cubin = linker.link(OutputKind::Cubin)?; // a file read from the second run on
//! println!("{:?}", cache.stats());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod entry;
mod trust;

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

use crate::ObjectCode;
use crate::linker::OutputKind;

const EXTENSION: &str = "clc";
const TEMP_PREFIX: &str = ".tmp-";
/// A temporary this old was left by a writer that crashed.
const STALE_TEMPORARY: Duration = Duration::from_secs(10 * 60);
/// Stores between two directory scans, to see other processes' entries.
const RESCAN_EVERY: u32 = 64;

/// Counters of one cache's activity in this process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Links served from disk.
    pub hits: u64,
    /// Links that found no usable entry.
    pub misses: u64,
    /// Entries written.
    pub stores: u64,
    /// Entries removed to stay under the size bound.
    pub evictions: u64,
    /// Entries found corrupt, truncated or invalid, removed and relinked.
    pub corrupt: u64,
    /// Entries that could not be written.
    pub write_failures: u64,
    /// Lookups and stores refused because the directory or the entry is
    /// owned by another user or writable by others.
    pub refused: u64,
    /// Temporaries of crashed writers removed.
    pub stale_temporaries: u64,
    /// Bytes of entries read on hits.
    pub bytes_read: u64,
    /// Bytes of entries written.
    pub bytes_written: u64,
}

#[derive(Default)]
struct Counters {
    hits: AtomicU64,
    misses: AtomicU64,
    stores: AtomicU64,
    evictions: AtomicU64,
    corrupt: AtomicU64,
    write_failures: AtomicU64,
    refused: AtomicU64,
    stale_temporaries: AtomicU64,
    bytes_read: AtomicU64,
    bytes_written: AtomicU64,
}

fn bump(counter: &AtomicU64, by: u64) {
    counter.fetch_add(by, Ordering::Relaxed);
}

/// A key: the SHA-256 of everything that decides a link's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheKey([u8; 32]);

impl CacheKey {
    /// Hashes, each length-prefixed: the backend's identity (for a
    /// [`Linker`](crate::Linker), library, version and the loaded file's
    /// path, size and modification time), the output kind, the flags in
    /// order, and every input's kind and bytes in order.
    pub fn new(backend: &str, output: OutputKind, flags: &[String], inputs: &[ObjectCode]) -> Self {
        let mut hasher = Sha256::new();
        let mut field = |bytes: &[u8]| {
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        };
        field(b"cuda-link link cache v2");
        field(backend.as_bytes());
        field(format!("{output:?}").as_bytes());
        field(&(flags.len() as u64).to_le_bytes());
        for flag in flags {
            field(flag.as_bytes());
        }
        field(&(inputs.len() as u64).to_le_bytes());
        for input in inputs {
            field(input.kind().name().as_bytes());
            field(input.as_bytes());
        }
        CacheKey(hasher.finalize().into())
    }

    /// The key as 64 hex digits.
    pub fn to_hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// A link result read back from the cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedLink {
    /// The linked output.
    pub output: Vec<u8>,
    /// The info log of the original link.
    pub info_log: String,
}

/// A link cache in one directory. Share it between linkers with an `Arc`.
pub struct LinkCache {
    dir: PathBuf,
    max_bytes: u64,
    counters: Counters,
    /// Whether the directory passed the ownership check, once it exists.
    trusted: OnceLock<Result<(), String>>,
    usage: Mutex<Usage>,
}

/// This process's running view of the directory's size.
#[derive(Default)]
struct Usage {
    /// Bytes of entries at the last scan plus those stored since; `None`
    /// before the first scan.
    bytes: Option<u64>,
    stores_since_scan: u32,
}

impl std::fmt::Debug for LinkCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinkCache")
            .field("dir", &self.dir)
            .field("max_bytes", &self.max_bytes)
            .field("stats", &self.stats())
            .finish()
    }
}

impl LinkCache {
    /// The default size bound: 1 GiB.
    pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;

    /// A cache in `dir`, created on first store.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        LinkCache {
            dir: dir.into(),
            max_bytes: Self::DEFAULT_MAX_BYTES,
            counters: Counters::default(),
            trusted: OnceLock::new(),
            usage: Mutex::default(),
        }
    }

    /// The per-user default: `CUDA_LINK_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/cuda-link`, else `~/.cache/cuda-link`, else a
    /// private per-user folder in the temporary directory.
    pub fn open_default() -> Self {
        Self::new(trust::default_dir())
    }

    /// Sets the size bound; least recently used entries go first.
    pub fn with_max_bytes(mut self, max_bytes: u64) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The counters so far.
    pub fn stats(&self) -> CacheStats {
        let c = &self.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        CacheStats {
            hits: get(&c.hits),
            misses: get(&c.misses),
            stores: get(&c.stores),
            evictions: get(&c.evictions),
            corrupt: get(&c.corrupt),
            write_failures: get(&c.write_failures),
            refused: get(&c.refused),
            stale_temporaries: get(&c.stale_temporaries),
            bytes_read: get(&c.bytes_read),
            bytes_written: get(&c.bytes_written),
        }
    }

    /// Whether the directory may be used: it must exist (or, when
    /// `create`, be made, mode 0700), belong to this user and be writable
    /// by no one else. The ownership verdict is kept once the directory
    /// exists; a refusal is logged once and counted each time, and a
    /// directory that cannot be made counts as a failed write.
    fn usable(&self, create: bool) -> bool {
        let verdict = match self.trusted.get() {
            Some(verdict) => verdict,
            None => {
                if !self.dir.exists() {
                    if !create {
                        return false;
                    }
                    if let Err(err) = trust::create_private_dir(&self.dir) {
                        log::warn!(
                            "cuda-link cache: cannot create {}: {err}; linking uncached",
                            self.dir.display()
                        );
                        bump(&self.counters.write_failures, 1);
                        return false;
                    }
                }
                self.trusted.get_or_init(|| {
                    trust::check_private_dir(&self.dir).map_err(|err| {
                        log::warn!(
                            "cuda-link cache: not using {}: {err}; linking uncached",
                            self.dir.display()
                        );
                        err.to_string()
                    })
                })
            }
        };
        if verdict.is_err() {
            bump(&self.counters.refused, 1);
        }
        verdict.is_ok()
    }

    /// The file an entry lives in.
    pub fn entry_path(&self, key: &CacheKey) -> PathBuf {
        self.dir.join(format!("{}.{EXTENSION}", key.to_hex()))
    }

    /// Reads an entry; a corrupt one is removed and reported as a miss.
    pub fn load(&self, key: &CacheKey) -> Option<CachedLink> {
        self.load_with(key, Ok::<CachedLink, String>)
    }

    /// Reads an entry and turns it into `T` with `convert`: an entry that
    /// is corrupt, or that `convert` refuses, is removed and counted as
    /// corrupt and as a miss, so that the caller relinks and replaces it.
    pub(crate) fn load_with<T, E: std::fmt::Display>(
        &self,
        key: &CacheKey,
        convert: impl FnOnce(CachedLink) -> Result<T, E>,
    ) -> Option<T> {
        let found = if self.usable(false) {
            self.read_entry(key)
        } else {
            None
        };
        let path = self.entry_path(key);
        let found =
            found.map(|read| read.and_then(|entry| convert(entry).map_err(|e| e.to_string())));
        match found {
            Some(Ok(value)) => {
                bump(&self.counters.hits, 1);
                // Recency for LRU eviction; failing to touch is harmless.
                let _ = fs::File::options()
                    .append(true)
                    .open(&path)
                    .and_then(|f| f.set_modified(SystemTime::now()));
                Some(value)
            }
            Some(Err(problem)) => {
                log::warn!(
                    "cuda-link cache: removing bad entry {}: {problem}",
                    path.display()
                );
                bump(&self.counters.corrupt, 1);
                let _ = fs::remove_file(&path);
                bump(&self.counters.misses, 1);
                None
            }
            None => {
                bump(&self.counters.misses, 1);
                None
            }
        }
    }

    /// `None` when there is no entry or it is not ours to trust;
    /// `Some(Err)` when it is ours and corrupt.
    fn read_entry(&self, key: &CacheKey) -> Option<Result<CachedLink, String>> {
        let mut file = fs::File::open(self.entry_path(key)).ok()?;
        // Checked on the open file, so a swap after the check changes nothing.
        let metadata = file.metadata().ok()?;
        if let Err(err) = trust::check_private(&metadata, "entry") {
            log::warn!(
                "cuda-link cache: not reading {}: {err}",
                self.entry_path(key).display()
            );
            bump(&self.counters.refused, 1);
            return None;
        }
        let mut bytes = Vec::with_capacity(metadata.len() as usize);
        file.read_to_end(&mut bytes).ok()?;
        bump(&self.counters.bytes_read, bytes.len() as u64);
        Some(entry::decode(&bytes).ok_or_else(|| "corrupt or truncated".to_owned()))
    }

    /// Writes an entry atomically, then evicts past the size bound. Errors
    /// are logged and counted, never returned: caching is best effort.
    pub fn store(&self, key: &CacheKey, output: &[u8], info_log: &str) {
        if !self.usable(true) {
            return;
        }
        match self.write_entry(key, output, info_log) {
            Ok(written) => {
                bump(&self.counters.stores, 1);
                bump(&self.counters.bytes_written, written);
                self.account(written);
            }
            Err(err) => {
                log::warn!(
                    "cuda-link cache: cannot write to {}: {err}; linking uncached",
                    self.dir.display()
                );
                bump(&self.counters.write_failures, 1);
            }
        }
    }

    fn write_entry(&self, key: &CacheKey, output: &[u8], info_log: &str) -> io::Result<u64> {
        let unique = UNIQUE.fetch_add(1, Ordering::Relaxed);
        let temp = self.dir.join(format!(
            "{TEMP_PREFIX}{}-{}-{unique}",
            key.to_hex(),
            std::process::id()
        ));
        let bytes = entry::encode(output, info_log);
        let result = trust::create_private_file(&temp)
            .and_then(|mut file| file.write_all(&bytes))
            .and_then(|()| fs::rename(&temp, self.entry_path(key)));
        if result.is_err() {
            let _ = fs::remove_file(&temp);
        }
        result.map(|()| bytes.len() as u64)
    }

    /// Adds a store to the running total; scans and evicts when the total
    /// passes the bound, or every [`RESCAN_EVERY`] stores.
    fn account(&self, written: u64) {
        let mut usage = self.usage.lock().unwrap_or_else(|p| p.into_inner());
        usage.stores_since_scan += 1;
        let due = match usage.bytes.as_mut() {
            Some(bytes) => {
                *bytes += written;
                *bytes > self.max_bytes || usage.stores_since_scan >= RESCAN_EVERY
            }
            None => true,
        };
        if due {
            *usage = Usage {
                bytes: self.scan_and_evict().ok(),
                stores_since_scan: 0,
            };
        }
    }

    /// One pass over the directory: removes stale temporaries and, past the
    /// bound, the least recently used entries down to 90 % of it. Returns
    /// the bytes of entries left.
    fn scan_and_evict(&self) -> io::Result<u64> {
        let now = SystemTime::now();
        let mut files: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
        for entry in fs::read_dir(&self.dir)?.filter_map(Result::ok) {
            let Ok(metadata) = entry.metadata() else {
                continue;
            };
            let modified = metadata.modified().unwrap_or(now);
            let path = entry.path();
            if entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
                let age = now.duration_since(modified).unwrap_or_default();
                if age > STALE_TEMPORARY && fs::remove_file(&path).is_ok() {
                    bump(&self.counters.stale_temporaries, 1);
                }
            } else if path.extension().is_some_and(|x| x == EXTENSION) {
                files.push((modified, metadata.len(), path));
            }
        }
        let mut total: u64 = files.iter().map(|(_, len, _)| len).sum();
        if total <= self.max_bytes {
            return Ok(total);
        }
        let target = self.max_bytes / 10 * 9;
        files.sort();
        for (_, len, path) in files {
            if total <= target {
                break;
            }
            if fs::remove_file(&path).is_ok() {
                total -= len;
                bump(&self.counters.evictions, 1);
            }
        }
        Ok(total)
    }

    /// The entries in the directory and their bytes, by one scan.
    pub fn disk_usage(&self) -> io::Result<(u64, u64)> {
        let (mut count, mut bytes) = (0, 0);
        for entry in fs::read_dir(&self.dir)? {
            let entry = entry?;
            if entry.path().extension().is_some_and(|x| x == EXTENSION) {
                count += 1;
                bytes += entry.metadata()?.len();
            }
        }
        Ok((count, bytes))
    }

    /// Removes every entry and temporary.
    pub fn clear(&self) -> io::Result<()> {
        for entry in fs::read_dir(&self.dir)? {
            let entry = entry?;
            let name = entry.file_name();
            let path = entry.path();
            if path.extension().is_some_and(|x| x == EXTENSION)
                || name.to_string_lossy().starts_with(TEMP_PREFIX)
            {
                fs::remove_file(path)?;
            }
        }
        *self.usage.lock().unwrap_or_else(|p| p.into_inner()) = Usage::default();
        Ok(())
    }
}

static UNIQUE: AtomicU64 = AtomicU64::new(0);
