//! [`RemoteCache`]: the tier behind a [`LinkCache`](super::LinkCache)'s
//! folder, on a store a team already runs (Redis, S3, GCS, Azure Blob,
//! WebDAV, GitHub Actions' cache, a shared folder), through Apache OpenDAL
//! as sccache does. The cache reads its folder first, then the store, and
//! writes a remote hit to its folder; it writes new entries to both, the
//! store in the background.
//!
//! What the store holds is never taken on its word: an object is the
//! entry file as the folder keeps it (its key and checksum inside), behind
//! a header that says how it is vouched for (`sealed.rs`): an Ed25519
//! signature that readers check with the public key alone, an HMAC-SHA256
//! under a shared team key, or, where a reader opted in to trusting the
//! store itself, a SHA-256. Without a key to check entries with, the store
//! is not used. A reader checks the tag, then the entry's key and
//! checksum, then the output as a fresh compile's (the caller's
//! validation, which is structural: it cannot tell one valid cubin from
//! another, so the tag is what keeps a stranger's kernel out). A store
//! that fails costs one bounded wait; the rest of the process compiles
//! without it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use ed25519_dalek::{SigningKey, VerifyingKey};

use super::sealed::{self, Keys};
use super::store::{
    Store, credentials_as_options, url_has_password, with_password, without_password,
};
use super::{CacheKey, hex};

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

/// The feature that builds the store a URL's scheme names.
fn feature_of(url: &str) -> Option<&'static str> {
    let (scheme, _) = url.split_once("://")?;
    Some(match scheme.to_ascii_lowercase().as_str() {
        "redis" | "rediss" => "remote-redis",
        "s3" => "remote-s3",
        "gcs" | "gs" => "remote-gcs",
        "azblob" => "remote-azblob",
        "webdav" => "remote-webdav",
        "ghac" => "remote-ghac",
        _ => return None,
    })
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
/// // A reader that checks the writers' signatures and cannot publish.
/// let remote = RemoteCache::new("redis://cache.internal:6379/0")?
///     .verify_key("3b6a27bcceb6a42d62a3a8d02a6f0d73653215771de243a63ac048a18b59da29")?;
/// let cache = LinkCache::open_default().with_remote(remote);
/// # Ok::<(), cuda_link::RemoteError>(())
/// ```
pub struct RemoteCache {
    url: String,
    store: Arc<Store>,
    read_only: bool,
    keys: Keys,
    timeout: Duration,
    /// The runtime OpenDAL's calls run on, made at the first call (a
    /// build script forks its compile workers only while it has one
    /// thread), with the process that made it.
    runtime: Mutex<Option<(crate::forks::Owner, Arc<tokio::runtime::Runtime>)>>,
    /// Set by the first failure: the rest of the process goes without.
    failed: Arc<AtomicBool>,
    /// Set once the store was said to be unused for want of a key.
    untrusted_said: AtomicBool,
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
            .field("keys", &self.keys)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl RemoteCache {
    /// The variables [`from_env`](Self::from_env) reads: the store's URL;
    /// `1` for a reader that never publishes; the keys (the shared HMAC
    /// team key, the writers' Ed25519 signing key, the readers' Ed25519
    /// verify key, each key in 64 hex digits); `1` to trust a store's
    /// unsigned entries (anyone who can write the store can then put a
    /// kernel into a build); the seconds one call may take (default 5);
    /// the store's password (Redis, WebDAV), kept out of the URL and so
    /// out of `ps`. Other credentials are the store's own variables
    /// (`AWS_ACCESS_KEY_ID`, `GOOGLE_APPLICATION_CREDENTIALS`, ...), which
    /// OpenDAL reads.
    pub const VARIABLES: [&str; 8] = [
        "CUDA_LINK_CACHE_URL",
        "CUDA_LINK_CACHE_READ_ONLY",
        "CUDA_LINK_CACHE_KEY",
        "CUDA_LINK_CACHE_SIGNING_KEY",
        "CUDA_LINK_CACHE_VERIFY_KEY",
        "CUDA_LINK_CACHE_TRUST_UNSIGNED",
        "CUDA_LINK_CACHE_TIMEOUT",
        "CUDA_LINK_CACHE_PASSWORD",
    ];

    /// Why a store with no key is not used ([`is_trusted`](Self::is_trusted)
    /// false), and what to set.
    pub const UNTRUSTED: &str = "no key to check its entries with. Set \
        CUDA_LINK_CACHE_VERIFY_KEY (the writers' public key) or CUDA_LINK_CACHE_KEY (a shared \
        team key), or CUDA_LINK_CACHE_TRUST_UNSIGNED=1 to let anyone who can write to it put \
        kernels into this build";

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
        let store = Store::new(credentials_as_options(url)).map_err(|e| RemoteError::Url {
            url: shown.clone(),
            detail: match feature_of(url) {
                Some(feature) if e.kind() == opendal::ErrorKind::Unsupported => format!(
                    "{e} (this build has no such store: turn on cuda-link's `{feature}` \
                     feature, or cuda-build's)"
                ),
                _ => e.to_string(),
            },
        })?;
        Ok(RemoteCache {
            url: shown,
            store: Arc::new(store),
            read_only: false,
            keys: Keys::default(),
            timeout: Self::DEFAULT_TIMEOUT,
            runtime: Mutex::new(None),
            failed: Arc::new(AtomicBool::new(false)),
            untrusted_said: AtomicBool::new(false),
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
        let url = match get("CUDA_LINK_CACHE_PASSWORD").filter(|p| !p.is_empty()) {
            Some(password) => with_password(&url, &password).ok_or(RemoteError::Setting {
                variable: "CUDA_LINK_CACHE_PASSWORD",
                value: "(set)".into(),
                detail: "a password is for redis:// and webdav:// stores; the others take \
                         their own credential variables",
            })?,
            None => url,
        };
        let flag = |variable: &'static str| match get(variable) {
            None => Ok(false),
            Some(value) => match value.as_str() {
                "" | "0" | "false" => Ok(false),
                "1" | "true" => Ok(true),
                _ => Err(RemoteError::Setting {
                    variable,
                    value,
                    detail: "expected 1 or 0",
                }),
            },
        };
        let mut remote = Self::new(&url)?;
        remote.read_only = flag("CUDA_LINK_CACHE_READ_ONLY")?;
        remote.keys.trust_unsigned = flag("CUDA_LINK_CACHE_TRUST_UNSIGNED")?;
        // Set but empty (a fork's pull request gets empty secrets) is not
        // "no key": such a reader would serve what it cannot check.
        if let Some(key) = get("CUDA_LINK_CACHE_KEY") {
            remote = remote.team_key(key)?;
        }
        if let Some(key) = get("CUDA_LINK_CACHE_SIGNING_KEY") {
            remote = remote.signing_key(&key)?;
        }
        if let Some(key) = get("CUDA_LINK_CACHE_VERIFY_KEY") {
            remote = remote.verify_key(&key)?;
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
    /// serves entries signed with it: someone with write access to the
    /// store alone cannot put a kernel into a build. Every reader holds
    /// the key too, so a reader can sign: give it only to builds trusted
    /// to publish, and give the others a [`verify_key`](Self::verify_key).
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
        self.keys.team = Some(key.to_vec());
        Ok(self)
    }

    /// Signs what this process publishes with the Ed25519 key whose 32
    /// secret bytes `hex` holds (64 hex digits, as
    /// [`generate_keys`](Self::generate_keys) writes them), and serves
    /// entries signed by it. Give it to the builds that publish (the main
    /// branch's CI); every other reader takes the public half.
    ///
    /// # Errors
    /// [`RemoteError::Setting`] for anything but 64 hex digits.
    pub fn signing_key(mut self, hex: &str) -> Result<Self, RemoteError> {
        let bytes = sealed::key_from_hex(hex).ok_or_else(|| RemoteError::Setting {
            variable: "CUDA_LINK_CACHE_SIGNING_KEY",
            value: format!("({} characters)", hex.len()),
            detail: "an Ed25519 signing key is 64 hex digits",
        })?;
        self.keys.signing = Some(SigningKey::from_bytes(&bytes));
        Ok(self)
    }

    /// Serves entries signed by the Ed25519 key whose public half `hex`
    /// holds (64 hex digits). A reader with verify keys alone cannot
    /// publish: it never writes to the store. Pull-request builds and
    /// laptops can read the team's kernels and put none there. May be
    /// given more than once (a key being replaced, and its successor).
    ///
    /// # Errors
    /// [`RemoteError::Setting`] for anything but 64 hex digits of a valid
    /// Ed25519 public key.
    pub fn verify_key(mut self, hex: &str) -> Result<Self, RemoteError> {
        let key = sealed::key_from_hex(hex)
            .and_then(|bytes| VerifyingKey::from_bytes(&bytes).ok())
            // A small-order key accepts signatures anyone can make.
            .filter(|key| !key.is_weak())
            .ok_or_else(|| RemoteError::Setting {
                variable: "CUDA_LINK_CACHE_VERIFY_KEY",
                value: hex.trim().to_owned(),
                detail: "an Ed25519 verify key is 64 hex digits of a valid, not weak, public key",
            })?;
        self.keys.verifying.push(key);
        Ok(self)
    }

    /// Serves entries that no key vouches for (default off): anyone who
    /// can write to the store can then put a kernel into a build. For a
    /// store only trusted writers reach. Without it, and without a key,
    /// the store is not used.
    pub fn trust_unsigned(mut self, trust: bool) -> Self {
        self.keys.trust_unsigned = trust;
        self
    }

    /// A new Ed25519 key pair, as 64 hex digits each: the signing key (a
    /// secret, for [`signing_key`](Self::signing_key) or
    /// `CUDA_LINK_CACHE_SIGNING_KEY`) and its verify key (public, for
    /// [`verify_key`](Self::verify_key) or `CUDA_LINK_CACHE_VERIFY_KEY`).
    ///
    /// # Errors
    /// The system's random source failed.
    pub fn generate_keys() -> Result<(String, String), RemoteError> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|error| RemoteError::Setting {
            variable: "CUDA_LINK_CACHE_SIGNING_KEY",
            value: String::new(),
            detail: if error.raw_os_error().is_some() {
                "the system's random source failed"
            } else {
                "no random source"
            },
        })?;
        let signing = SigningKey::from_bytes(&seed);
        Ok((
            hex(&signing.to_bytes()),
            hex(signing.verifying_key().as_bytes()),
        ))
    }

    /// Whether some key checks the store's entries, or the store is
    /// trusted as it is ([`trust_unsigned`](Self::trust_unsigned)): else
    /// it is not used.
    pub fn is_trusted(&self) -> bool {
        self.keys.can_read()
    }

    /// Whether `url` carries a password, in its user part or as an option
    /// (`password=`, `secret_access_key=`, ...): the CLI warns, since a
    /// command line shows in `ps`; `CUDA_LINK_CACHE_PASSWORD` and the
    /// store's own credential variables do not.
    pub fn url_has_password(url: &str) -> bool {
        url_has_password(url)
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
        if self.failed.load(Ordering::Relaxed) || !self.trusted() {
            return None;
        }
        let runtime = self.runtime()?;
        let path = object_path(key);
        // A process that never publishes builds the store as a reader:
        // nothing is created in a folder store.
        let read_only = self.never_publishes();
        let store = Arc::clone(&self.store);
        let limit = max_len
            .min(Self::MAX_OBJECT_BYTES)
            .saturating_add(sealed::MAX_HEAD_LEN as u64);
        // The size first, so that no object past the bound is read: a
        // store may hold anything. The store's first build is inside the
        // same bound.
        let read = runtime.block_on(async {
            tokio::time::timeout(self.timeout, async {
                let operator = store.operator(read_only).await?;
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
        match sealed::open(&object, &key.0, &self.keys) {
            Ok(entry) if entry.len() as u64 <= max_len => Some(entry.to_vec()),
            Ok(_) => self.refuse(key, "over the size bound"),
            Err(why) => self.refuse(key, why),
        }
    }

    /// Publishes `entry` (an entry file) for `key` in the background,
    /// unless this is a reader or the store failed.
    pub(super) fn publish(&self, key: &CacheKey, entry: &[u8]) {
        // Publishing needs a key or trust, as reading does: a process that
        // publishes can also read.
        if self.never_publishes() || self.failed.load(Ordering::Relaxed) {
            return;
        }
        let Some(runtime) = self.runtime() else {
            return;
        };
        let object = sealed::seal(&key.0, entry, &self.keys);
        let len = object.len() as u64;
        let path = object_path(key);
        let store = Arc::clone(&self.store);
        let timeout = self.timeout;
        let pending = Arc::clone(&self.pending);
        *pending.0.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        let done = Finished(pending);
        let counters = Arc::clone(&self.counters);
        let failure = self.failure_sink();
        runtime.spawn(async move {
            let _done = done;
            let write = async {
                let operator = store.operator(false).await?;
                operator.write(&path, object).await
            };
            match tokio::time::timeout(timeout, write).await {
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

    /// A reader by setting, or for want of a way to vouch for entries.
    fn never_publishes(&self) -> bool {
        self.read_only || !self.keys.can_write()
    }

    /// Whether the store can be used: a key checks its entries, or the
    /// user chose to trust it as it is. Said once when not.
    fn trusted(&self) -> bool {
        if self.keys.can_read() {
            return true;
        }
        if !self.untrusted_said.swap(true, Ordering::Relaxed) {
            log::warn!(
                "cuda-link cache: not using the remote store {}: {}",
                self.url,
                Self::UNTRUSTED
            );
        }
        false
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
        let current = crate::forks::Owner::current();
        if let Some((owner, runtime)) = slot.as_ref() {
            if *owner == current {
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
                *slot = Some((current, Arc::clone(&runtime)));
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
