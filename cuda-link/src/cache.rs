//! [`LinkCache`]: an opt-in, content-addressed on-disk cache of link
//! results, so that relinking the same inputs costs a file read.
//!
//! The key is a SHA-256 of every input's kind and bytes (in order), the
//! options in normalised (sorted) order, the backend with its library
//! version, and the output kind. An entry holds the output and the info
//! log behind a checksum; a corrupt or truncated entry is removed and
//! relinked, never returned. Entries are written to a temporary file and
//! renamed into place, so threads and processes can share a directory. The
//! least recently used entries are evicted past a size bound. A directory
//! that cannot be written only costs the caching: the link still succeeds,
//! and a warning goes through `log`.
//!
//! ```no_run
//! use std::sync::Arc;
//! use cuda_link::{LinkCache, Linker, LinkerOptions, ObjectCode, OutputKind};
//!
//! let cache = Arc::new(LinkCache::open_default());
//! let mut linker = Linker::new(LinkerOptions::for_arch("sm_90"))?.with_cache(Arc::clone(&cache));
//! linker.add(&ObjectCode::from_path("kernels.ptx")?)?;
//! let cubin = linker.link(OutputKind::Cubin)?; // a file read from the second run on
//! println!("{:?}", cache.stats());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use crate::ObjectCode;
use crate::linker::OutputKind;

const MAGIC: &[u8; 10] = b"CLNKCACHE\0";
const FORMAT_VERSION: u32 = 1;
const HEADER_LEN: usize = MAGIC.len() + 4 + 32 + 8;
const EXTENSION: &str = "clc";

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
    /// Entries found corrupt or truncated, and removed.
    pub corrupt: u64,
    /// Entries that could not be written.
    pub write_failures: u64,
}

#[derive(Default)]
struct Counters {
    hits: AtomicU64,
    misses: AtomicU64,
    stores: AtomicU64,
    evictions: AtomicU64,
    corrupt: AtomicU64,
    write_failures: AtomicU64,
}

/// A key: the SHA-256 of everything that decides a link's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheKey([u8; 32]);

impl CacheKey {
    /// Hashes the backend (with its library version, e.g. `"nvJitLink 13.5"`),
    /// the output kind, the flags in sorted order and every input in order.
    pub fn new(backend: &str, output: OutputKind, flags: &[String], inputs: &[ObjectCode]) -> Self {
        let mut hasher = Sha256::new();
        let mut field = |bytes: &[u8]| {
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        };
        field(b"cuda-link link cache v1");
        field(backend.as_bytes());
        field(format!("{output:?}").as_bytes());
        let mut sorted: Vec<&String> = flags.iter().collect();
        sorted.sort();
        field(&(sorted.len() as u64).to_le_bytes());
        for flag in sorted {
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
        }
    }

    /// The per-user default: `CUDA_LINK_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/cuda-link`, else `~/.cache/cuda-link`, else a folder
    /// in the temporary directory.
    pub fn open_default() -> Self {
        Self::new(default_dir())
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
        }
    }

    /// The file an entry lives in.
    pub fn entry_path(&self, key: &CacheKey) -> PathBuf {
        self.dir.join(format!("{}.{EXTENSION}", key.to_hex()))
    }

    /// Reads an entry; a corrupt one is removed and reported as a miss.
    pub fn load(&self, key: &CacheKey) -> Option<CachedLink> {
        let path = self.entry_path(key);
        let found = fs::read(&path).ok().map(|bytes| decode(&bytes));
        match found {
            Some(Some(entry)) => {
                self.counters.hits.fetch_add(1, Ordering::Relaxed);
                // Recency for LRU eviction; failing to touch is harmless.
                let _ = fs::File::options()
                    .append(true)
                    .open(&path)
                    .and_then(|f| f.set_modified(SystemTime::now()));
                Some(entry)
            }
            Some(None) => {
                log::warn!("cuda-link cache: removing corrupt entry {}", path.display());
                self.counters.corrupt.fetch_add(1, Ordering::Relaxed);
                let _ = fs::remove_file(&path);
                self.counters.misses.fetch_add(1, Ordering::Relaxed);
                None
            }
            None => {
                self.counters.misses.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }

    /// Writes an entry atomically, then evicts past the size bound. Errors
    /// are logged and counted, never returned: caching is best effort.
    pub fn store(&self, key: &CacheKey, output: &[u8], info_log: &str) {
        match self.write_entry(key, output, info_log) {
            Ok(()) => {
                self.counters.stores.fetch_add(1, Ordering::Relaxed);
                self.evict();
            }
            Err(err) => {
                log::warn!(
                    "cuda-link cache: cannot write to {}: {err}; linking uncached",
                    self.dir.display()
                );
                self.counters.write_failures.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    fn write_entry(&self, key: &CacheKey, output: &[u8], info_log: &str) -> io::Result<()> {
        fs::create_dir_all(&self.dir)?;
        let unique = UNIQUE.fetch_add(1, Ordering::Relaxed);
        let temp = self.dir.join(format!(
            ".tmp-{}-{}-{unique}",
            key.to_hex(),
            std::process::id()
        ));
        let result = fs::File::create(&temp)
            .and_then(|mut file| file.write_all(&encode(output, info_log)))
            .and_then(|()| fs::rename(&temp, self.entry_path(key)));
        if result.is_err() {
            let _ = fs::remove_file(&temp);
        }
        result
    }

    fn evict(&self) {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return;
        };
        let mut files: Vec<(SystemTime, u64, PathBuf)> = entries
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == EXTENSION))
            .filter_map(|e| {
                let meta = e.metadata().ok()?;
                Some((meta.modified().ok()?, meta.len(), e.path()))
            })
            .collect();
        let mut total: u64 = files.iter().map(|(_, len, _)| len).sum();
        if total <= self.max_bytes {
            return;
        }
        files.sort();
        for (_, len, path) in files {
            if total <= self.max_bytes {
                break;
            }
            if fs::remove_file(&path).is_ok() {
                total -= len;
                self.counters.evictions.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Removes every entry.
    pub fn clear(&self) -> io::Result<()> {
        for entry in fs::read_dir(&self.dir)? {
            let path = entry?.path();
            if path.extension().is_some_and(|x| x == EXTENSION) {
                fs::remove_file(path)?;
            }
        }
        Ok(())
    }
}

static UNIQUE: AtomicU64 = AtomicU64::new(0);

fn default_dir() -> PathBuf {
    let from = |var: &str| {
        std::env::var_os(var)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    from("CUDA_LINK_CACHE_DIR")
        .or_else(|| from("XDG_CACHE_HOME").map(|d| d.join("cuda-link")))
        .or_else(|| from("HOME").map(|d| d.join(".cache/cuda-link")))
        .unwrap_or_else(|| std::env::temp_dir().join("cuda-link-cache"))
}

fn encode(output: &[u8], info_log: &str) -> Vec<u8> {
    let mut body = Vec::with_capacity(16 + output.len() + info_log.len());
    body.extend_from_slice(&(output.len() as u64).to_le_bytes());
    body.extend_from_slice(output);
    body.extend_from_slice(&(info_log.len() as u64).to_le_bytes());
    body.extend_from_slice(info_log.as_bytes());
    let mut file = Vec::with_capacity(HEADER_LEN + body.len());
    file.extend_from_slice(MAGIC);
    file.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    file.extend_from_slice(&Sha256::digest(&body));
    file.extend_from_slice(&(body.len() as u64).to_le_bytes());
    file.extend_from_slice(&body);
    file
}

/// `None` for anything but an intact entry of this format.
fn decode(file: &[u8]) -> Option<CachedLink> {
    let rest = file.strip_prefix(MAGIC)?;
    let (version, rest) = rest.split_first_chunk::<4>()?;
    let (checksum, rest) = rest.split_first_chunk::<32>()?;
    let (len, body) = rest.split_first_chunk::<8>()?;
    if u32::from_le_bytes(*version) != FORMAT_VERSION
        || u64::from_le_bytes(*len) != body.len() as u64
        || Sha256::digest(body).as_slice() != checksum
    {
        return None;
    }
    let (output_len, rest) = body.split_first_chunk::<8>()?;
    let (output, rest) =
        rest.split_at_checked(usize::try_from(u64::from_le_bytes(*output_len)).ok()?)?;
    let (log_len, log) = rest.split_first_chunk::<8>()?;
    if u64::from_le_bytes(*log_len) != log.len() as u64 {
        return None;
    }
    Some(CachedLink {
        output: output.to_vec(),
        info_log: String::from_utf8_lossy(log).into_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_every_corruption_is_caught() {
        let file = encode(b"\x7fELF cubin bytes", "info");
        assert_eq!(
            decode(&file),
            Some(CachedLink {
                output: b"\x7fELF cubin bytes".to_vec(),
                info_log: "info".into()
            })
        );
        for len in 0..file.len() {
            assert_eq!(decode(&file[..len]), None, "truncated to {len}");
        }
        for at in 0..file.len() {
            let mut flipped = file.clone();
            flipped[at] ^= 0x40;
            assert_eq!(decode(&flipped), None, "flipped byte {at}");
        }
    }
}
