//! [`RemoteCache`]: the tier behind a [`LinkCache`](super::LinkCache)'s
//! folder, on a store a team already runs (Redis, S3, GCS, Azure Blob,
//! WebDAV, GitHub Actions' cache, a shared folder), through Apache OpenDAL
//! as sccache does. The cache reads its folder first, then the store, and
//! writes a remote hit to its folder; it writes new entries to both, the
//! store in the background.
//!
//! What the store holds is never trusted: an object is the entry file as
//! the folder keeps it (its key and checksum inside), after a header with
//! its SHA-256, or with a team key its HMAC-SHA256. A reader checks the
//! hash or the signature, then the entry's key and checksum, then the
//! output itself as a fresh compile's (the caller's validation). A store
//! that fails costs one bounded wait; the rest of the process compiles
//! without it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

use super::CacheKey;

/// The object's header: magic, format, flags, then the tag.
const MAGIC: &[u8; 8] = b"CLNKRMT\0";
const FORMAT: u32 = 1;
const SIGNED: u32 = 1;
const HEADER_LEN: usize = MAGIC.len() + 4 + 4 + 32;

/// Why a remote store cannot be used.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RemoteError {
    /// The URL names no store OpenDAL was built with, or is malformed.
    #[error("CUDA_LINK_CACHE_URL `{url}`: {detail}")]
    Url {
        /// The URL, without a password.
        url: String,
        /// OpenDAL's words.
        detail: String,
    },
    /// A setting's value cannot be read.
    #[error("{variable}=`{value}`: {detail}")]
    Setting {
        /// The variable.
        variable: &'static str,
        /// Its value.
        value: String,
        /// What was expected.
        detail: &'static str,
    },
}

/// Counters of the remote tier in this process.
#[derive(Default)]
pub(super) struct RemoteCounters {
    pub hits: AtomicU64,
    pub misses: AtomicU64,
    pub errors: AtomicU64,
    pub refused: AtomicU64,
    pub bytes_read: AtomicU64,
    pub bytes_written: AtomicU64,
}

/// A remote store for a [`LinkCache`](super::LinkCache), given with
/// [`LinkCache::with_remote`](super::LinkCache::with_remote).
///
/// ```no_run
/// use cuda_link::{LinkCache, RemoteCache};
///
/// let remote = RemoteCache::new("redis://cache.internal:6379/0")?
///     .read_only(true)
///     .team_key(b"the key every writer signs with")?;
/// let cache = LinkCache::open_default().with_remote(remote);
/// # Ok::<(), cuda_link::RemoteError>(())
/// ```
pub struct RemoteCache {
    url: String,
    operator: opendal::Operator,
    read_only: bool,
    team_key: Option<Vec<u8>>,
    timeout: Duration,
    /// The runtime OpenDAL's calls run on, made at the first call (a
    /// build script forks its compile workers only while it has one
    /// thread), with the process that made it.
    runtime: Mutex<Option<(u32, Arc<tokio::runtime::Runtime>)>>,
    /// Set by the first failure: the rest of the process goes without.
    failed: Arc<AtomicBool>,
    first_failure: Arc<Mutex<Option<String>>>,
    /// Writes not finished yet.
    pending: Arc<(Mutex<usize>, Condvar)>,
    pub(super) counters: Arc<RemoteCounters>,
}

impl std::fmt::Debug for RemoteCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteCache")
            .field("url", &self.url)
            .field("read_only", &self.read_only)
            .field("signed", &self.team_key.is_some())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl RemoteCache {
    /// The variables [`from_env`](Self::from_env) reads: the store's URL,
    /// `1` for a reader that never publishes, the team key entries are
    /// signed with, and the seconds one call may take (default 5).
    /// Credentials are the store's own variables (`AWS_ACCESS_KEY_ID`,
    /// `GOOGLE_APPLICATION_CREDENTIALS`, ...), which OpenDAL reads.
    pub const VARIABLES: [&str; 4] = [
        "CUDA_LINK_CACHE_URL",
        "CUDA_LINK_CACHE_READ_ONLY",
        "CUDA_LINK_CACHE_KEY",
        "CUDA_LINK_CACHE_TIMEOUT",
    ];

    /// The shortest team key taken.
    pub const MIN_KEY_LEN: usize = 16;

    /// The largest object read from the store: 256 MiB.
    pub const MAX_OBJECT_BYTES: u64 = 256 << 20;

    /// The default bound on one call to the store.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

    /// A store by URL: `redis://host:6379/0`, `s3://bucket/prefix`,
    /// `gcs://bucket/prefix`, `azblob://container/prefix`,
    /// `webdav://host/path`, `ghac://`, `file:///shared/folder`. Options
    /// OpenDAL's services take may follow as a query
    /// (`s3://bucket/prefix?region=eu-west-1&endpoint=http://minio:9000`).
    /// Nothing is contacted until the first lookup.
    ///
    /// # Errors
    /// [`RemoteError::Url`] for a URL OpenDAL cannot read.
    pub fn new(url: &str) -> Result<Self, RemoteError> {
        opendal::init_default_registry();
        let shown = without_password(url);
        let url = with_atomic_writes(&credentials_as_options(url));
        let operator = opendal::Operator::from_uri(url.as_str()).map_err(|e| RemoteError::Url {
            url: shown.clone(),
            detail: e.to_string(),
        })?;
        Ok(RemoteCache {
            url: shown,
            operator,
            read_only: false,
            team_key: None,
            timeout: Self::DEFAULT_TIMEOUT,
            runtime: Mutex::new(None),
            failed: Arc::new(AtomicBool::new(false)),
            first_failure: Arc::new(Mutex::new(None)),
            pending: Arc::new((Mutex::new(0), Condvar::new())),
            counters: Arc::new(RemoteCounters::default()),
        })
    }

    /// The store that `get` (an environment getter: cuda-build passes
    /// its own, which tells cargo to watch each variable) configures
    /// through [`VARIABLES`](Self::VARIABLES); `None` without a URL.
    ///
    /// # Errors
    /// A URL OpenDAL cannot read, or a setting that does not parse.
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Option<Result<Self, RemoteError>> {
        let url = get("CUDA_LINK_CACHE_URL").filter(|url| !url.is_empty())?;
        Some(Self::configured(url, get))
    }

    fn configured(url: String, get: impl Fn(&str) -> Option<String>) -> Result<Self, RemoteError> {
        let mut remote = Self::new(&url)?;
        if let Some(value) = get("CUDA_LINK_CACHE_READ_ONLY") {
            remote.read_only = match value.as_str() {
                "" | "0" | "false" => false,
                "1" | "true" => true,
                _ => {
                    return Err(RemoteError::Setting {
                        variable: "CUDA_LINK_CACHE_READ_ONLY",
                        value,
                        detail: "expected 1 or 0",
                    });
                }
            };
        }
        // Set but empty (a fork's pull request gets empty secrets) is not
        // "no key": such a reader would serve what it cannot check.
        if let Some(key) = get("CUDA_LINK_CACHE_KEY") {
            if key.len() < Self::MIN_KEY_LEN {
                return Err(RemoteError::Setting {
                    variable: "CUDA_LINK_CACHE_KEY",
                    value: format!("({} bytes)", key.len()),
                    detail: "a team key has at least 16 bytes",
                });
            }
            remote.team_key = Some(key.into_bytes());
        }
        if let Some(value) = get("CUDA_LINK_CACHE_TIMEOUT") {
            let seconds: f64 = value
                .parse()
                .ok()
                .filter(|s: &f64| s.is_finite() && *s > 0.0)
                .ok_or(RemoteError::Setting {
                    variable: "CUDA_LINK_CACHE_TIMEOUT",
                    value: value.clone(),
                    detail: "expected a number of seconds above 0",
                })?;
            remote.timeout = Duration::from_secs_f64(seconds.min(3600.0));
        }
        Ok(remote)
    }

    /// Reads only: entries are never published (pull-request builds).
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// Signs what this process publishes with `key` (HMAC-SHA256), and
    /// serves only entries signed with it: someone with write access to
    /// the store alone cannot put a kernel into a build. Every reader
    /// holds the key too, so a reader can sign: give it only to builds
    /// trusted to publish, and let others read without a key.
    ///
    /// # Errors
    /// [`RemoteError::Setting`] for a key shorter than
    /// [`MIN_KEY_LEN`](Self::MIN_KEY_LEN) bytes.
    pub fn team_key(mut self, key: impl AsRef<[u8]>) -> Result<Self, RemoteError> {
        let key = key.as_ref();
        if key.len() < Self::MIN_KEY_LEN {
            return Err(RemoteError::Setting {
                variable: "CUDA_LINK_CACHE_KEY",
                value: format!("({} bytes)", key.len()),
                detail: "a team key has at least 16 bytes",
            });
        }
        self.team_key = Some(key.to_vec());
        Ok(self)
    }

    /// The bound on one call to the store (default 5 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The store's URL, without a password.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Why the store was given up on in this process, if it was: its
    /// first failure.
    pub fn failure(&self) -> Option<String> {
        self.first_failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The verified entry file stored for `key`, or `None`: not there,
    /// refused, or the store failed.
    pub(super) fn fetch(&self, key: &CacheKey, max_len: u64) -> Option<Vec<u8>> {
        if self.failed.load(Ordering::Relaxed) {
            return None;
        }
        let runtime = self.runtime()?;
        let path = object_path(key);
        let operator = self.operator.clone();
        let limit = max_len
            .min(Self::MAX_OBJECT_BYTES)
            .saturating_add(HEADER_LEN as u64);
        // The size first, so that no object past the bound is read: a
        // store may hold anything.
        let read = runtime.block_on(async {
            tokio::time::timeout(self.timeout, async {
                let len = operator.stat(&path).await?.content_length();
                if len > limit {
                    return Ok(None);
                }
                operator.read_with(&path).range(0..len).await.map(Some)
            })
            .await
        });
        let object = match read {
            Ok(Ok(Some(buffer))) => buffer.to_vec(),
            Ok(Ok(None)) => return self.refuse(key, "over the size bound"),
            Ok(Err(error)) if error.kind() == opendal::ErrorKind::NotFound => {
                bump(&self.counters.misses, 1);
                return None;
            }
            Ok(Err(error)) => return self.fail(format!("reading {path}: {error}")),
            Err(_) => return self.fail(format!("reading {path}: no answer in {:?}", self.timeout)),
        };
        bump(&self.counters.bytes_read, object.len() as u64);
        match open(&object, &key.0, self.team_key.as_deref()) {
            Ok(entry) if entry.len() as u64 <= max_len => Some(entry.to_vec()),
            Ok(_) => self.refuse(key, "over the size bound"),
            Err(why) => self.refuse(key, why),
        }
    }

    /// Publishes `entry` (an entry file) for `key` in the background,
    /// unless this is a reader or the store failed.
    pub(super) fn publish(&self, key: &CacheKey, entry: &[u8]) {
        if self.read_only || self.failed.load(Ordering::Relaxed) {
            return;
        }
        let Some(runtime) = self.runtime() else {
            return;
        };
        let object = seal(&key.0, entry, self.team_key.as_deref());
        let len = object.len() as u64;
        let path = object_path(key);
        let operator = self.operator.clone();
        let timeout = self.timeout;
        let pending = Arc::clone(&self.pending);
        *pending.0.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        let done = Finished(pending);
        let counters = Arc::clone(&self.counters);
        let failure = self.failure_sink();
        runtime.spawn(async move {
            let _done = done;
            match tokio::time::timeout(timeout, operator.write(&path, object)).await {
                Ok(Ok(_)) => bump(&counters.bytes_written, len),
                Ok(Err(error)) => failure(format!("writing {path}: {error}")),
                Err(_) => failure(format!("writing {path}: no answer in {timeout:?}")),
            }
        });
    }

    /// Waits for the writes in flight, for as long as one call may take.
    pub fn flush(&self) {
        let (count, done) = &*self.pending;
        let bound = self.timeout.saturating_add(Duration::from_millis(100));
        let Some(deadline) = Instant::now().checked_add(bound) else {
            return;
        };
        let mut left = count.lock().unwrap_or_else(|p| p.into_inner());
        while *left > 0 {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            left = done
                .wait_timeout(left, deadline - now)
                .map(|(guard, _)| guard)
                .unwrap_or_else(|p| p.into_inner().0);
        }
    }

    /// Counts a failure; the first one turns the store off for this
    /// process and is said once.
    fn fail<T>(&self, why: String) -> Option<T> {
        (self.failure_sink())(why);
        None
    }

    /// What a failure does, for a background write too.
    fn failure_sink(&self) -> impl Fn(String) + Send + 'static {
        let counters = Arc::clone(&self.counters);
        let failed = Arc::clone(&self.failed);
        let first = Arc::clone(&self.first_failure);
        let url = self.url.clone();
        move |why: String| {
            bump(&counters.errors, 1);
            if !failed.swap(true, Ordering::Relaxed) {
                log::warn!(
                    "cuda-link cache: the remote store {url} failed ({why}); the rest of this \
                     process compiles without it"
                );
                *first.lock().unwrap_or_else(|p| p.into_inner()) = Some(why);
            }
        }
    }

    /// Counts and says a remote entry that is not served.
    pub(super) fn refuse<T>(&self, key: &CacheKey, why: &str) -> Option<T> {
        bump(&self.counters.refused, 1);
        log::warn!(
            "cuda-link cache: not serving the remote entry {} of {}: {why}",
            key.to_hex(),
            self.url
        );
        None
    }

    /// The runtime of this process, made at the first call.
    fn runtime(&self) -> Option<Arc<tokio::runtime::Runtime>> {
        // Blocking on a runtime from inside another panics: a cache used
        // from async code goes without its store.
        if tokio::runtime::Handle::try_current().is_ok() {
            return self.fail("called from inside an async runtime".to_owned());
        }
        let mut slot = self.runtime.lock().unwrap_or_else(|p| p.into_inner());
        let pid = std::process::id();
        if let Some((owner, runtime)) = slot.as_ref() {
            if *owner == pid {
                return Some(Arc::clone(runtime));
            }
            // Made before a fork: its threads are the parent's. Leaked,
            // since dropping it would wait for them.
            if let Some((_, stale)) = slot.take() {
                std::mem::forget(stale);
            }
        }
        let built = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("cuda-link-cache")
            .enable_all()
            .build();
        match built {
            Ok(runtime) => {
                let runtime = Arc::new(runtime);
                *slot = Some((pid, Arc::clone(&runtime)));
                Some(runtime)
            }
            Err(error) => {
                drop(slot);
                self.fail(format!("cannot start its runtime: {error}"))
            }
        }
    }
}

impl Drop for RemoteCache {
    /// Waits for the writes in flight (bounded), then lets the runtime go
    /// without waiting for its threads: a call stuck in the store (a hung
    /// network mount) must not hold the process at exit.
    fn drop(&mut self) {
        self.flush();
        let taken = self
            .runtime
            .get_mut()
            .map(Option::take)
            .unwrap_or_else(|p| p.into_inner().take());
        if let Some((_, runtime)) = taken
            && let Ok(runtime) = Arc::try_unwrap(runtime)
        {
            runtime.shutdown_background();
        }
    }
}

/// Marks a background write finished when dropped, however it ended.
struct Finished(Arc<(Mutex<usize>, Condvar)>);

impl Drop for Finished {
    fn drop(&mut self) {
        let (count, done) = &*self.0;
        let mut left = count.lock().unwrap_or_else(|p| p.into_inner());
        *left = left.saturating_sub(1);
        done.notify_all();
    }
}

fn bump(counter: &AtomicU64, by: u64) {
    counter.fetch_add(by, Ordering::Relaxed);
}

/// Where an entry lives in the store: its key, spread over 256 prefixes.
fn object_path(key: &CacheKey) -> String {
    let hex = key.to_hex();
    format!("cuda-link-cache/v1/{}/{hex}", &hex[..2])
}

/// The tag of an object: HMAC-SHA256 under the team key, else SHA-256,
/// of its header, the key it is stored under, and the entry file.
fn tag(head: &[u8], key: &[u8; 32], entry: &[u8], team_key: Option<&[u8]>) -> [u8; 32] {
    match team_key {
        Some(team_key) => mac(team_key, head, key, entry)
            .finalize()
            .into_bytes()
            .into(),
        None => {
            let mut hash = Sha256::new();
            hash.update(head);
            hash.update(key);
            hash.update(entry);
            hash.finalize().into()
        }
    }
}

fn mac(team_key: &[u8], head: &[u8], key: &[u8; 32], entry: &[u8]) -> Hmac<Sha256> {
    // HMAC takes a key of any length: `new_from_slice` cannot fail.
    let mut mac = Hmac::<Sha256>::new_from_slice(team_key).unwrap_or_else(|_| unreachable!());
    mac.update(head);
    mac.update(key);
    mac.update(entry);
    mac
}

/// The object stored under `key` for an entry file.
fn seal(key: &[u8; 32], entry: &[u8], team_key: Option<&[u8]>) -> Vec<u8> {
    let flags = if team_key.is_some() { SIGNED } else { 0 };
    let mut object = Vec::with_capacity(HEADER_LEN + entry.len());
    object.extend_from_slice(MAGIC);
    object.extend_from_slice(&FORMAT.to_le_bytes());
    object.extend_from_slice(&flags.to_le_bytes());
    let tag = tag(&object, key, entry, team_key);
    object.extend_from_slice(&tag);
    object.extend_from_slice(entry);
    object
}

/// The entry file in an object, when its tag holds: with a team key, only
/// a signature under that key; without, the hash (a signed object is then
/// left to the entry's own checksum).
fn open<'a>(
    object: &'a [u8],
    key: &[u8; 32],
    team_key: Option<&[u8]>,
) -> Result<&'a [u8], &'static str> {
    let rest = object
        .strip_prefix(MAGIC)
        .ok_or("not an entry of this format")?;
    let (format, rest) = rest.split_first_chunk::<4>().ok_or("truncated")?;
    let (flags, rest) = rest.split_first_chunk::<4>().ok_or("truncated")?;
    let (stored, entry) = rest.split_first_chunk::<32>().ok_or("truncated")?;
    if u32::from_le_bytes(*format) != FORMAT {
        return Err("another format version");
    }
    let signed = u32::from_le_bytes(*flags) & SIGNED != 0;
    let head = &object[..MAGIC.len() + 8];
    match (team_key, signed) {
        (Some(_), false) => Err("unsigned, and a team key is set"),
        (Some(team_key), true) => mac(team_key, head, key, entry)
            .verify_slice(stored)
            .map(|()| entry)
            .map_err(|_| "its signature is not the team key's"),
        (None, true) => Ok(entry),
        (None, false) if tag(head, key, entry, None) == *stored => Ok(entry),
        (None, false) => Err("its hash does not match: corrupt or truncated"),
    }
}

/// `redis://user:password@host/0` as OpenDAL reads a user and password:
/// its services take them as options (`?username=..&password=..`) and
/// drop a URL's user part, which would connect without them. Other
/// schemes, and URLs without a user part, are left as they are.
fn credentials_as_options(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    if !matches!(scheme, "redis" | "rediss" | "webdav" | "webdavs") {
        return url.to_owned();
    }
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let Some((user_info, host)) = rest[..authority_end].rsplit_once('@') else {
        return url.to_owned();
    };
    let (user, password) = user_info.split_once(':').unwrap_or((user_info, ""));
    let mut options = Vec::new();
    if !user.is_empty() {
        options.push(format!("username={user}"));
    }
    if !password.is_empty() {
        options.push(format!("password={password}"));
    }
    let tail = &rest[authority_end..];
    let joiner = if tail.contains('?') { "&" } else { "?" };
    match options.is_empty() {
        true => format!("{scheme}://{host}{tail}"),
        false => format!("{scheme}://{host}{tail}{joiner}{}", options.join("&")),
    }
}

/// A folder store writes each object to a temporary in the folder and
/// renames it into place (OpenDAL's `atomic_write_dir`): a reader never
/// sees half an object, and a symbolic link planted at an object's path
/// is replaced, never followed. A URL that sets it, or whose path needs
/// escaping, is left as it is.
fn with_atomic_writes(url: &str) -> String {
    let Some(root) = url
        .strip_prefix("file://")
        .or_else(|| url.strip_prefix("fs://"))
    else {
        return url.to_owned();
    };
    let (path, query) = root.split_once('?').unwrap_or((root, ""));
    if query.contains("atomic_write_dir=")
        || path.is_empty()
        || path.contains(['&', '#', '%', ' ', '='])
    {
        return url.to_owned();
    }
    let joiner = if query.is_empty() { "?" } else { "&" };
    let dir = format!("{}/.cuda-link-tmp", path.trim_end_matches('/'));
    format!("{url}{joiner}atomic_write_dir={dir}")
}

/// `url` with any password replaced and its query (where OpenDAL takes
/// `password=`, `secret_access_key=`, ...) left out, for messages.
fn without_password(url: &str) -> String {
    let url = url.split(['?', '#']).next().unwrap_or(url);
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rsplit_once('@') {
        Some((user_info, host)) => {
            let user = user_info
                .split_once(':')
                .map_or(user_info, |(user, _)| user);
            format!("{scheme}://{user}:***@{host}{}", &rest[authority_end..])
        }
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_objects_open_and_every_corruption_is_caught() {
        let entry = b"CLNKCACHE\0 an entry file".as_slice();
        let stored_at = [7; 32];
        for key in [None, Some(b"team".as_slice())] {
            let object = seal(&stored_at, entry, key);
            assert_eq!(open(&object, &stored_at, key), Ok(entry));
            // Stored under another key: refused, signed or not.
            if key.is_some() {
                assert!(open(&object, &[8; 32], key).is_err());
            }
            for at in 0..object.len() {
                let mut flipped = object.clone();
                flipped[at] ^= 0x20;
                // Without a key, a flip of the signed flag makes a
                // "signed" object the entry's own checksum then judges.
                let flag_byte = MAGIC.len() + 4;
                if key.is_none() && at == flag_byte {
                    continue;
                }
                assert!(
                    open(&flipped, &stored_at, key).is_err(),
                    "{key:?} byte {at}"
                );
            }
            for len in 0..HEADER_LEN {
                assert!(open(&object[..len], &stored_at, key).is_err());
            }
        }
    }

    #[test]
    fn a_team_key_refuses_unsigned_and_foreign_objects() {
        let (entry, key) = (b"entry".as_slice(), &[1; 32]);
        assert!(open(&seal(key, entry, None), key, Some(b"team")).is_err());
        assert!(open(&seal(key, entry, Some(b"other")), key, Some(b"team")).is_err());
        assert_eq!(open(&seal(key, entry, Some(b"team")), key, None), Ok(entry));
    }

    #[test]
    fn a_user_and_password_become_options() {
        assert_eq!(
            credentials_as_options("redis://cache:s3cret@h:6379/0"),
            "redis://h:6379/0?username=cache&password=s3cret"
        );
        assert_eq!(
            credentials_as_options("redis://:s3cret@h:6379/0?root=x"),
            "redis://h:6379/0?root=x&password=s3cret"
        );
        assert_eq!(credentials_as_options("s3://b/p"), "s3://b/p");
        assert_eq!(credentials_as_options("redis://h:1/0"), "redis://h:1/0");
    }

    #[test]
    fn folder_stores_write_atomically() {
        assert_eq!(
            with_atomic_writes("file:///share/cache"),
            "file:///share/cache?atomic_write_dir=/share/cache/.cuda-link-tmp"
        );
        assert_eq!(with_atomic_writes("redis://h:1/0"), "redis://h:1/0");
        let set = "file:///s?atomic_write_dir=/t";
        assert_eq!(with_atomic_writes(set), set);
    }

    #[test]
    fn passwords_stay_out_of_messages() {
        assert_eq!(
            without_password("redis://user:secret@host:6379/0"),
            "redis://user:***@host:6379/0"
        );
        assert_eq!(without_password("s3://bucket/prefix"), "s3://bucket/prefix");
        assert_eq!(
            without_password("s3://bucket/p?region=x&secret_access_key=abc"),
            "s3://bucket/p"
        );
    }
}
