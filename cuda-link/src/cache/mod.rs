//! [`LinkCache`]: an opt-in, content-addressed on-disk cache of link
//! results, so that relinking the same inputs costs a file read.
//!
//! **The key** ([`CacheKey`]) is a SHA-256 over, each length-prefixed: the
//! backend's identity (its library and version, and the file that holds
//! its functions as loaded: real path, device, inode, size and
//! modification time), the output kind, the final flag list in order
//! (nvJitLink's flags are order-sensitive: the last `-O` wins), and every
//! input's kind and bytes, in order.
//!
//! **Trust.** The directory is created with mode 0700, then opened once,
//! with `O_NOFOLLOW`, and checked on the open descriptor: a directory owned
//! by another user or writable by others, or a path whose last component
//! is a symbolic link (whoever made it can retarget it), is refused with a
//! warning, and the link proceeds uncached. From then on every entry is
//! reached through that descriptor, never through the path, so swapping
//! the path after the check changes nothing. An entry must be a regular
//! file of ours that no one else can write, at most
//! [`LinkCache::MAX_ENTRY_BYTES`]: a symbolic link, a FIFO, a device or an
//! oversized file is refused without blocking and without being read. The
//! checksum in an entry covers the key it was stored under, so an entry
//! under another key's name is refused too; it catches corruption and
//! misfiled entries, not a planted cubin. The fallback directory, when
//! neither `CUDA_LINK_CACHE_DIR`, `XDG_CACHE_HOME` nor `HOME` is set, is
//! per-user and checked the same way.
//!
//! **Recovery.** A corrupt or truncated entry, or one whose output fails
//! `ObjectCode` validation, is removed and relinked, never returned.
//! Entries are written to a private temporary file, created exclusively in
//! the directory, and renamed into place, so threads and processes can
//! share a directory; temporaries older than ten minutes, left by crashed
//! writers, are removed. The least recently used entries are evicted past
//! a size bound; the directory is rescanned only when this process's
//! running total passes the bound or every 64 stores, and eviction goes
//! down to 90 % of it, so a store costs no directory scan on average. A
//! directory that cannot be written only costs the caching: the link
//! still succeeds, and a warning goes through `log`.
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

mod dir;
mod entry;
mod identity;
mod ledger;
mod memory;
#[cfg(feature = "remote-tier")]
mod remote;
#[cfg(feature = "remote-tier")]
mod sealed;
#[cfg(feature = "remote-tier")]
mod store;
mod trust;

use std::ffi::OsStr;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

use dir::{Dir, Found, OpenError};
pub use entry::CacheEntry;
#[cfg(feature = "link")]
pub(crate) use identity::UNIDENTIFIED;
pub use identity::{library_content_identity, library_file_identity, library_identity};
pub use memory::{MemoryCache, MemoryStats};
#[cfg(feature = "remote-tier")]
pub use remote::{RemoteCache, RemoteError};

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
    /// owned by another user or writable by others, is a symbolic link or
    /// (an entry) not a regular file, is over the size bound, or (an
    /// entry) was stored under another key.
    pub refused: u64,
    /// Temporaries of crashed writers removed.
    pub stale_temporaries: u64,
    /// Bytes of entries read on hits.
    pub bytes_read: u64,
    /// Bytes of entries written.
    pub bytes_written: u64,
    /// Lookups served by the remote store (and then kept in the folder).
    pub remote_hits: u64,
    /// Lookups the remote store had no entry for.
    pub remote_misses: u64,
    /// Calls to the remote store that failed or took too long; the first
    /// turns it off for the rest of the process.
    pub remote_errors: u64,
    /// Remote entries refused: a hash, signature, key or checksum that
    /// does not hold, or an output that does not validate.
    pub remote_refused: u64,
    /// Bytes read from the remote store.
    pub remote_bytes_read: u64,
    /// Bytes written to the remote store.
    pub remote_bytes_written: u64,
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

/// `bytes` in lowercase hex, two digits each.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn bump(counter: &AtomicU64, by: u64) {
    counter.fetch_add(by, Ordering::Relaxed);
}

/// A key: the SHA-256 of everything that decides a link's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CacheKey([u8; 32]);

impl CacheKey {
    /// A key built from fields, each length-prefixed so that no two lists
    /// of fields hash alike; `domain` names the kind of entry and its
    /// format version (a link, a compile), so keys of two kinds never
    /// meet. The store itself is content-addressed by this key alone.
    pub fn builder(domain: &str) -> KeyBuilder {
        let mut builder = KeyBuilder(Sha256::new());
        builder.field(domain.as_bytes());
        builder
    }

    /// The key's 32 bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The key as 64 hex digits.
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }
}

/// Builds a [`CacheKey`] field by field; see [`CacheKey::builder`].
#[derive(Debug, Clone)]
pub struct KeyBuilder(Sha256);

impl KeyBuilder {
    /// Adds one field.
    pub fn field(&mut self, bytes: &[u8]) -> &mut Self {
        self.0.update((bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
        self
    }

    /// Adds a count, e.g. before the fields of a list.
    pub fn count(&mut self, count: usize) -> &mut Self {
        self.field(&(count as u64).to_le_bytes())
    }

    /// The key.
    pub fn finish(self) -> CacheKey {
        CacheKey(self.0.finalize().into())
    }
}

/// A link result read back from the cache: the `output` and `info_log`
/// blobs of its [`CacheEntry`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedLink {
    /// The linked output.
    pub output: Vec<u8>,
    /// The info log of the original link.
    pub info_log: String,
}

impl CachedLink {
    /// The blob names of a link's entry.
    const OUTPUT: &str = "output";
    const INFO_LOG: &str = "info_log";

    /// A link's entry.
    pub fn entry(output: &[u8], info_log: &str) -> CacheEntry {
        CacheEntry::default()
            .with(Self::OUTPUT, output)
            .with(Self::INFO_LOG, info_log.as_bytes())
    }
}

/// The link in an entry; `Err` for an entry that is not a link's.
impl TryFrom<CacheEntry> for CachedLink {
    type Error = String;

    fn try_from(mut entry: CacheEntry) -> Result<Self, String> {
        let output = entry.take(Self::OUTPUT).ok_or("no `output` blob")?;
        let info_log = entry.take(Self::INFO_LOG).ok_or("no `info_log` blob")?;
        let info_log = String::from_utf8(info_log).map_err(|_| "an info log that is not UTF-8")?;
        Ok(CachedLink { output, info_log })
    }
}

/// A link cache in one directory. Share it between linkers with an `Arc`.
pub struct LinkCache {
    dir: PathBuf,
    max_bytes: u64,
    counters: Counters,
    /// The directory, opened and checked once it exists, or why it was
    /// refused: the descriptor, not the path, is the verdict.
    opened: OnceLock<Result<Dir, String>>,
    usage: Mutex<Usage>,
    /// Whether the process's [`MemoryCache`] answers in front of it.
    memory_tier: bool,
    /// The store behind the folder, if any.
    #[cfg(feature = "remote-tier")]
    remote: Option<RemoteCache>,
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

    /// The largest entry file read or written: 1 GiB. A larger file under
    /// an entry's name is refused without being read, and reading never
    /// allocates more than this, whatever the file's size claims.
    pub const MAX_ENTRY_BYTES: u64 = 1 << 30;

    /// A cache in `dir`, created on first store. The directory is opened
    /// and checked once, at the first lookup or store that finds it, and
    /// used through that descriptor from then on.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        LinkCache {
            dir: dir.into(),
            max_bytes: Self::DEFAULT_MAX_BYTES,
            counters: Counters::default(),
            opened: OnceLock::new(),
            usage: Mutex::default(),
            memory_tier: true,
            #[cfg(feature = "remote-tier")]
            remote: None,
        }
    }

    /// Whether the process's [`MemoryCache`] answers in front of this
    /// cache (on by default): off, every lookup reads the folder (and the
    /// store), as a test of the folder itself needs.
    pub fn with_memory_tier(mut self, on: bool) -> Self {
        self.memory_tier = on;
        self
    }

    /// Whether the in-memory tier answers in front of this cache.
    pub fn memory_tier(&self) -> bool {
        self.memory_tier
    }

    /// The variables [`open_default`](Self::open_default) reads.
    pub const DIR_VARIABLES: &[&str] = &["CUDA_LINK_CACHE_DIR", "XDG_CACHE_HOME", "HOME"];

    /// The per-user default: `CUDA_LINK_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/cuda-link`, else `~/.cache/cuda-link`, else a
    /// private per-user folder in the temporary directory. With the
    /// `remote` feature, the store `CUDA_LINK_CACHE_URL` names is behind
    /// it (`RemoteCache::from_env`); a URL that cannot be used is said
    /// once and left out, since a build never fails because of its cache.
    pub fn open_default() -> Self {
        let cache = Self::new(Self::default_dir());
        #[cfg(feature = "remote-tier")]
        match RemoteCache::from_env(|name| std::env::var(name).ok()) {
            Some(Ok(remote)) => return cache.with_remote(remote),
            Some(Err(error)) => log::warn!("cuda-link cache: no remote store: {error}"),
            None => {}
        }
        cache
    }

    /// The folder [`open_default`](Self::open_default) uses.
    pub fn default_dir() -> PathBuf {
        trust::default_dir()
    }

    /// Puts `remote` behind the folder: a lookup the folder misses asks
    /// it, and a hit there is kept in the folder; a new entry is written
    /// to both (see [`RemoteCache`]).
    #[cfg(feature = "remote-tier")]
    pub fn with_remote(mut self, remote: RemoteCache) -> Self {
        self.remote = Some(remote);
        self
    }

    /// The remote store, if any.
    #[cfg(feature = "remote-tier")]
    pub fn remote(&self) -> Option<&RemoteCache> {
        self.remote.as_ref()
    }

    /// Whether keys must be the same on every machine: with a remote
    /// store, libraries are named by their content
    /// ([`library_content_identity`]) and NVIDIA's headers by their path
    /// in their folder and their content, not by where this machine keeps
    /// them. Without one, a file's identity (path, inode, time) is
    /// cheaper and as exact.
    pub fn portable_keys(&self) -> bool {
        #[cfg(feature = "remote-tier")]
        return self.remote.is_some();
        #[cfg(not(feature = "remote-tier"))]
        false
    }

    /// Waits for the remote writes in flight (bounded by the store's
    /// timeout); a no-op without a remote store. Call it before a process
    /// ends without dropping the cache (`exit`, `_exit`).
    pub fn flush(&self) {
        #[cfg(feature = "remote-tier")]
        if let Some(remote) = &self.remote {
            remote.flush();
        }
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
            ..self.remote_stats()
        }
    }

    /// The remote tier's counters.
    fn remote_stats(&self) -> CacheStats {
        #[cfg(feature = "remote-tier")]
        if let Some(remote) = &self.remote {
            let c = &remote.counters;
            let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
            return CacheStats {
                remote_hits: get(&c.hits),
                remote_misses: get(&c.misses),
                remote_errors: get(&c.errors),
                remote_refused: get(&c.refused),
                remote_bytes_read: get(&c.bytes_read),
                remote_bytes_written: get(&c.bytes_written),
                ..CacheStats::default()
            };
        }
        CacheStats::default()
    }

    /// A folder `name` (one path component) inside the cache's directory,
    /// for files a compiler installs and reads back by path (NVRTC 13.3+'s
    /// bundled headers): the directory is opened and checked as for a
    /// store (this user's, writable by no one else, not a symbolic link),
    /// and so is the folder, made mode 0700 when missing. Another user can
    /// put nothing there.
    ///
    /// # Errors
    /// `PermissionDenied` naming why the directory or the folder is not
    /// trusted, `InvalidInput` for a name that is not one component, or
    /// the I/O error that kept either from being made.
    pub fn private_folder(&self, name: &str) -> std::io::Result<PathBuf> {
        use std::io::{Error, ErrorKind};
        let mut parts = Path::new(name).components();
        let single = matches!(
            (parts.next(), parts.next()),
            (Some(std::path::Component::Normal(_)), None)
        );
        if !single {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!("{name:?} is not one folder name"),
            ));
        }
        match self.open_dir(true) {
            Ok(_) => {}
            Err(OpenError::Refused(why)) => {
                return Err(Error::new(ErrorKind::PermissionDenied, why));
            }
            Err(OpenError::Missing) => return Err(Error::from(ErrorKind::NotFound)),
            Err(OpenError::Io(error)) => return Err(error),
        }
        let folder = self.dir.join(name);
        trust::create_private_dir(&folder)?;
        let metadata = std::fs::symlink_metadata(&folder)?;
        if !metadata.is_dir() {
            return Err(Error::new(
                ErrorKind::PermissionDenied,
                format!("{} is not a directory", folder.display()),
            ));
        }
        trust::check_private(&metadata, "folder")?;
        Ok(folder)
    }

    /// The directory, opened once it exists (or, when `create`, once it is
    /// made, mode 0700): it must be a directory, not a symbolic link, of
    /// this user and writable by no one else. The open directory is kept,
    /// and so is a refusal, which is logged once.
    fn open_dir(&self, create: bool) -> Result<&Dir, OpenError> {
        let opened = match self.opened.get() {
            Some(opened) => opened,
            None => match Dir::open(&self.dir, create) {
                Ok(dir) => self.opened.get_or_init(|| Ok(dir)),
                Err(OpenError::Refused(why)) => self.opened.get_or_init(|| {
                    log::warn!(
                        "cuda-link cache: not using {}: {why}; linking uncached",
                        self.dir.display()
                    );
                    Err(why)
                }),
                Err(err) => return Err(err),
            },
        };
        opened
            .as_ref()
            .map_err(|why| OpenError::Refused(why.clone()))
    }

    /// [`open_dir`](Self::open_dir) for a lookup or a store: a refusal
    /// is counted each time, and a directory that cannot be made or
    /// opened for a store counts as a failed write.
    fn usable(&self, create: bool) -> Option<&Dir> {
        match self.open_dir(create) {
            Ok(dir) => Some(dir),
            Err(OpenError::Missing) => None,
            Err(OpenError::Refused(_)) => {
                bump(&self.counters.refused, 1);
                None
            }
            Err(OpenError::Io(err)) => {
                if create {
                    log::warn!(
                        "cuda-link cache: cannot create {}: {err}; linking uncached",
                        self.dir.display()
                    );
                    bump(&self.counters.write_failures, 1);
                }
                None
            }
        }
    }

    /// [`open_dir`](Self::open_dir) for the maintenance calls, as an
    /// error: `NotFound` before the directory exists.
    fn maintained(&self) -> io::Result<&Dir> {
        self.open_dir(false).map_err(|err| match err {
            OpenError::Missing => io::Error::new(
                io::ErrorKind::NotFound,
                format!("{} does not exist", self.dir.display()),
            ),
            OpenError::Io(err) => err,
            OpenError::Refused(why) => io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("not using {}: {why}", self.dir.display()),
            ),
        })
    }

    /// Whether stores can succeed: the directory exists or was just made,
    /// and is trusted (this user's, writable by no one else). Opened and
    /// checked now if not yet; a refusal is counted as a lookup's is.
    pub fn is_writable(&self) -> bool {
        self.usable(true).is_some()
    }

    /// The file an entry lives in.
    pub fn entry_path(&self, key: &CacheKey) -> PathBuf {
        self.dir.join(entry_name(key))
    }

    /// Reads a link's entry; a corrupt one is removed and reported as a
    /// miss.
    pub fn load(&self, key: &CacheKey) -> Option<CachedLink> {
        self.load_with(key, CachedLink::try_from)
    }

    /// Reads an entry and turns it into `T` with `convert`: an entry that
    /// is corrupt, or that `convert` refuses, is removed and counted as
    /// corrupt and as a miss, so that the caller relinks and replaces it.
    /// A miss in the folder asks the remote store, when there is one, whose
    /// entries `convert` checks the same way.
    pub fn load_with<T, E: std::fmt::Display>(
        &self,
        key: &CacheKey,
        convert: impl Fn(CacheEntry) -> Result<T, E>,
    ) -> Option<T> {
        let Some(dir) = self.usable(false) else {
            bump(&self.counters.misses, 1);
            return self.load_remote(None, key, convert);
        };
        let found = self.read_entry(dir, key).map(|read| {
            read.and_then(|(entry, file)| {
                let _phase = phase!("cache_convert");
                convert(entry)
                    .map(|value| (value, file))
                    .map_err(|e| e.to_string())
            })
        });
        match found {
            Some(Ok((value, file))) => {
                bump(&self.counters.hits, 1);
                // Recency for LRU eviction, on the file that was read;
                // failing to touch is harmless.
                let _phase = phase!("cache_touch");
                let _ = file.set_modified(SystemTime::now());
                Some(value)
            }
            Some(Err(problem)) => {
                log::warn!(
                    "cuda-link cache: removing bad entry {}: {problem}",
                    self.entry_path(key).display()
                );
                bump(&self.counters.corrupt, 1);
                let _ = dir.remove(OsStr::new(&entry_name(key)));
                bump(&self.counters.misses, 1);
                self.load_remote(Some(dir), key, convert)
            }
            None => {
                bump(&self.counters.misses, 1);
                self.load_remote(Some(dir), key, convert)
            }
        }
    }

    /// A lookup the folder missed, asked of the remote store: a verified
    /// entry that `convert` takes is kept in the folder (when it can be
    /// written) and served.
    #[cfg_attr(not(feature = "remote-tier"), allow(unused_variables))]
    fn load_remote<T, E: std::fmt::Display>(
        &self,
        dir: Option<&Dir>,
        key: &CacheKey,
        convert: impl Fn(CacheEntry) -> Result<T, E>,
    ) -> Option<T> {
        #[cfg(feature = "remote-tier")]
        if let Some(remote) = &self.remote {
            let file = remote.fetch(key, Self::MAX_ENTRY_BYTES)?;
            let refused = |why: String| -> Option<T> { remote.refuse(key, &why) };
            let entry = match entry::decode(&file, &key.0) {
                Ok(entry) => entry,
                Err(entry::Rejected::Corrupt) => return refused("corrupt or truncated".into()),
                Err(entry::Rejected::OtherKey) => {
                    return refused("it holds the entry of another key".into());
                }
            };
            return match convert(entry) {
                Ok(value) => {
                    bump(&remote.counters.hits, 1);
                    if let Some(dir) = dir.or_else(|| self.usable(true)) {
                        match self.write_file(dir, key, &file) {
                            Ok(written) => {
                                bump(&self.counters.bytes_written, written);
                                self.account(dir, written);
                            }
                            Err(_) => bump(&self.counters.write_failures, 1),
                        }
                    }
                    Some(value)
                }
                Err(why) => refused(why.to_string()),
            };
        }
        None
    }

    /// `None` when there is no entry or it is not ours to trust (counted as
    /// refused); `Some(Err)` when it is ours and corrupt; else the entry
    /// and its open file.
    fn read_entry(
        &self,
        dir: &Dir,
        key: &CacheKey,
    ) -> Option<Result<(CacheEntry, std::fs::File), String>> {
        let refuse = |why: &str| {
            log::warn!(
                "cuda-link cache: not reading {}: {why}",
                self.entry_path(key).display()
            );
            bump(&self.counters.refused, 1);
            None
        };
        let opened = phase!("cache_open");
        let (file, len) = match dir.open_entry(&entry_name(key), Self::MAX_ENTRY_BYTES) {
            Found::Missing => return None,
            Found::Refused(why) => return refuse(&why),
            Found::File(file, len) => (file, len),
        };
        drop(opened);
        let read = phase!("cache_read");
        // Bounded by the size the open file had, itself within the bound,
        // and by the bound itself should the file grow meanwhile.
        let mut bytes = Vec::with_capacity(usize::try_from(len).ok()?);
        (&file)
            .take(Self::MAX_ENTRY_BYTES + 1)
            .read_to_end(&mut bytes)
            .ok()?;
        bump(&self.counters.bytes_read, bytes.len() as u64);
        if bytes.len() as u64 > Self::MAX_ENTRY_BYTES {
            return refuse("it grew past the size bound while read");
        }
        drop(read);
        // The checksum and the key it holds, then the blobs.
        let _phase = phase!("cache_checksum");
        match entry::decode(&bytes, &key.0) {
            Ok(entry) => Some(Ok((entry, file))),
            Err(entry::Rejected::Corrupt) => Some(Err("corrupt or truncated".to_owned())),
            Err(entry::Rejected::OtherKey) => refuse("it holds the entry of another key"),
        }
    }

    /// Writes a link's entry: [`store_entry`](Self::store_entry) of
    /// [`CachedLink::entry`].
    pub fn store(&self, key: &CacheKey, output: &[u8], info_log: &str) {
        self.store_entry(key, &CachedLink::entry(output, info_log));
    }

    /// Writes an entry atomically, then evicts past the size bound. Errors
    /// are logged and counted, never returned: caching is best effort.
    pub fn store_entry(&self, key: &CacheKey, entry: &CacheEntry) {
        if entry.blobs().count() > CacheEntry::MAX_BLOBS {
            log::warn!(
                "cuda-link cache: not storing an entry of {} blobs (at most {})",
                entry.blobs().count(),
                CacheEntry::MAX_BLOBS
            );
            bump(&self.counters.write_failures, 1);
            return;
        }
        let file = entry::encode(&key.0, entry);
        #[cfg(feature = "remote-tier")]
        if let Some(remote) = &self.remote
            && file.len() as u64 <= Self::MAX_ENTRY_BYTES
        {
            remote.publish(key, &file);
        }
        let Some(dir) = self.usable(true) else {
            return;
        };
        match self.write_file(dir, key, &file) {
            Ok(written) => {
                bump(&self.counters.stores, 1);
                bump(&self.counters.bytes_written, written);
                self.account(dir, written);
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

    /// A private temporary (`O_EXCL`, mode 0600) in the directory, renamed
    /// over the entry's name once complete.
    fn write_file(&self, dir: &Dir, key: &CacheKey, bytes: &[u8]) -> io::Result<u64> {
        if bytes.len() as u64 > Self::MAX_ENTRY_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "an entry of {} bytes is over the bound of {}",
                    bytes.len(),
                    Self::MAX_ENTRY_BYTES
                ),
            ));
        }
        let unique = UNIQUE.fetch_add(1, Ordering::Relaxed);
        let temp = format!(
            "{TEMP_PREFIX}{}-{}-{unique}",
            key.to_hex(),
            std::process::id()
        );
        let result = dir
            .create_new(&temp)
            .and_then(|mut file| file.write_all(bytes))
            .and_then(|()| dir.rename(&temp, &entry_name(key)));
        if result.is_err() {
            let _ = dir.remove(OsStr::new(&temp));
        }
        result.map(|()| bytes.len() as u64)
    }

    /// Adds a store to the running total; scans and evicts when the total
    /// passes the bound, or every [`RESCAN_EVERY`] stores.
    fn account(&self, dir: &Dir, written: u64) {
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
                bytes: self.scan_and_evict(dir).ok(),
                stores_since_scan: 0,
            };
        }
    }

    /// One pass over the directory: removes stale temporaries and, past the
    /// bound, the least recently used entries down to 90 % of it. Returns
    /// the bytes of entries left.
    fn scan_and_evict(&self, dir: &Dir) -> io::Result<u64> {
        let now = SystemTime::now();
        let mut files = Vec::new();
        for listed in dir.list()? {
            if is_temporary(&listed.name) {
                let age = now.duration_since(listed.modified).unwrap_or_default();
                if age > STALE_TEMPORARY && dir.remove(&listed.name).is_ok() {
                    bump(&self.counters.stale_temporaries, 1);
                }
            } else if listed.regular && is_entry(&listed.name) {
                files.push((listed.modified, listed.len, listed.name));
            }
        }
        let mut total: u64 = files.iter().map(|(_, len, _)| len).sum();
        if total <= self.max_bytes {
            return Ok(total);
        }
        let target = self.max_bytes / 10 * 9;
        files.sort();
        for (_, len, name) in files {
            if total <= target {
                break;
            }
            if dir.remove(&name).is_ok() {
                total -= len;
                bump(&self.counters.evictions, 1);
            }
        }
        Ok(total)
    }

    /// The entries in the directory and their bytes, by one scan. An error
    /// of kind `NotFound` before the directory exists, and of kind
    /// `PermissionDenied` when it is refused.
    pub fn disk_usage(&self) -> io::Result<(u64, u64)> {
        let (mut count, mut bytes) = (0, 0);
        for listed in self.maintained()?.list()? {
            if listed.regular && is_entry(&listed.name) {
                count += 1;
                bytes += listed.len;
            }
        }
        Ok((count, bytes))
    }

    /// The counters of every process that used this folder since it was
    /// last cleared, this one's so far included (`cuda-link cache stats`).
    /// Errors as for [`disk_usage`](Self::disk_usage).
    pub fn recorded_stats(&self) -> io::Result<CacheStats> {
        let dir = self.maintained()?;
        let mut total = ledger::total(dir, &unique_name())?;
        ledger::add_stats(&mut total, &self.stats());
        Ok(total)
    }

    /// Removes every entry, temporary and recorded counter; errors as for
    /// [`disk_usage`](Self::disk_usage).
    pub fn clear(&self) -> io::Result<()> {
        let dir = self.maintained()?;
        for listed in dir.list()? {
            if is_entry(&listed.name)
                || is_temporary(&listed.name)
                || ledger::is_ledger(&listed.name)
            {
                dir.remove(&listed.name)?;
            }
        }
        *self.usage.lock().unwrap_or_else(|p| p.into_inner()) = Usage::default();
        Ok(())
    }
}

impl Drop for LinkCache {
    /// Waits for the remote writes in flight, then leaves this process's
    /// counters in the folder for [`recorded_stats`](Self::recorded_stats)
    /// (if the folder was opened).
    fn drop(&mut self) {
        self.flush();
        if let Some(Ok(dir)) = self.opened.get() {
            let _ = ledger::record(dir, &self.stats(), &unique_name());
        }
    }
}

/// A name no other process or call uses now: process ids repeat across
/// containers sharing a folder, so the clock's nanoseconds are in it too.
fn unique_name() -> String {
    let unique = UNIQUE.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |t| t.as_nanos());
    format!("{}-{nanos}-{unique}", std::process::id())
}

/// The file name of an entry.
fn entry_name(key: &CacheKey) -> String {
    format!("{}.{EXTENSION}", key.to_hex())
}

fn is_entry(name: &OsStr) -> bool {
    Path::new(name).extension().is_some_and(|x| x == EXTENSION)
}

fn is_temporary(name: &OsStr) -> bool {
    name.to_string_lossy().starts_with(TEMP_PREFIX)
}

static UNIQUE: AtomicU64 = AtomicU64::new(0);
