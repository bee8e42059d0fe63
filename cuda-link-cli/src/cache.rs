//! The persistent cache on the command line: the flags `link` and
//! `compile` share, the remote store behind the folder, the report after a
//! run, and the `cache` command.

use std::path::PathBuf;
use std::sync::Arc;

use cuda_link::{CacheStats, LinkCache, RemoteCache};

use crate::{Failure, say};

/// The cache flags of `link` and `compile`.
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct CacheArgs {
    /// Serve repeated work from the persistent cache (default directory:
    /// CUDA_LINK_CACHE_DIR, else ~/.cache/cuda-link). On by default where
    /// CUDA_LINK_CACHE_DIR or CUDA_LINK_CACHE_URL is set.
    #[arg(long)]
    pub(crate) cache: bool,
    /// Use no persistent cache, whatever the environment sets.
    #[arg(long, conflicts_with_all = ["cache", "cache_dir", "cache_url", "cache_read_only"])]
    pub(crate) no_cache: bool,
    /// Use the persistent cache in this directory.
    #[arg(long)]
    pub(crate) cache_dir: Option<PathBuf>,
    /// A store shared by a team behind the folder (default:
    /// CUDA_LINK_CACHE_URL): redis://host:6379/0, s3://bucket/prefix,
    /// gcs://..., azblob://..., webdav://..., file:///shared/folder.
    /// Implies --cache.
    #[arg(long, value_name = "URL")]
    pub(crate) cache_url: Option<String>,
    /// Read the shared store, never write to it (default:
    /// CUDA_LINK_CACHE_READ_ONLY=1).
    #[arg(long)]
    pub(crate) cache_read_only: bool,
}

impl CacheArgs {
    /// The cache asked for, with the store behind it; `None` without one.
    pub(crate) fn open(&self) -> Result<Option<Arc<LinkCache>>, Failure> {
        let set = |name: &str| std::env::var_os(name).is_some_and(|value| !value.is_empty());
        let asked = self.cache || self.cache_dir.is_some() || self.cache_url.is_some();
        // One variable sets the cache up, for the CLI as for the libraries.
        let from_env = set("CUDA_LINK_CACHE_DIR") || set("CUDA_LINK_CACHE_URL");
        if self.no_cache || !(asked || from_env) {
            return Ok(None);
        }
        let cache = LinkCache::new(
            self.cache_dir
                .clone()
                .unwrap_or_else(LinkCache::default_dir),
        );
        if self
            .cache_url
            .as_deref()
            .is_some_and(RemoteCache::url_has_password)
        {
            say::err(
                "cuda-link: warning: --cache-url carries a password, which any user sees in \
                 `ps`; set CUDA_LINK_CACHE_PASSWORD (Redis, WebDAV) or the store's own \
                 credential variables instead",
            );
        }
        let from_env = |name: &str| std::env::var(name).ok();
        let remote = RemoteCache::from_env(|name| match name {
            "CUDA_LINK_CACHE_URL" => self.cache_url.clone().or_else(|| from_env(name)),
            "CUDA_LINK_CACHE_READ_ONLY" if self.cache_read_only => Some("1".into()),
            _ => from_env(name),
        });
        Ok(Some(Arc::new(match remote {
            Some(remote) => cache.with_remote(remote.map_err(|e| Failure::Usage(e.to_string()))?),
            None => cache,
        })))
    }
}

/// After a run: the store's writes finished (a spinner on a terminal when
/// they take over a second); the store's failure, always (the run went on
/// without it); with `verbose`, one line on what the cache did.
pub(crate) fn report(cache: &LinkCache, verbose: bool) {
    if let Some(remote) = cache.remote() {
        let step = format!("publishing to the shared cache {}", remote.url());
        crate::progress::while_running(&step, || cache.flush());
    }
    if let Some(remote) = cache.remote()
        && let Some(why) = remote.failure()
    {
        say::err(format!(
            "cuda-link: warning: the shared cache {} failed ({why}); this run went on without it",
            remote.url()
        ));
    }
    if verbose {
        say::err(format!("cuda-link: {}", summary(cache)));
    }
}

/// One line on what the cache did for this run.
fn summary(cache: &LinkCache) -> String {
    let stats = cache.stats();
    let dir = cache.dir().display();
    if stats.remote_hits > 0 {
        let url = cache.remote().map_or("", |remote| remote.url());
        format!("cache hit in {url}, kept in {dir}")
    } else if stats.hits > 0 {
        format!("cache hit in {dir}")
    } else if stats.refused > 0 {
        format!("cache refused: {dir} or its entry is another user's or writable by others")
    } else if stats.stores > 0 {
        format!("cache miss, stored in {dir}")
    } else {
        format!("cache miss, not stored in {dir}")
    }
}

/// What `cuda-link cache` does.
#[derive(clap::Subcommand, Debug, Clone, Copy)]
pub(crate) enum CacheAction {
    /// Entries and bytes in the directory, and what the runs that used it
    /// did: local hits, remote hits, misses, remote errors, bytes moved.
    Stats,
    /// Remove every entry.
    Clear,
    /// Print the directory.
    Dir,
    /// Make an Ed25519 key pair for a shared store: the signing key for
    /// the builds that publish (CUDA_LINK_CACHE_SIGNING_KEY, a secret),
    /// the verify key for every reader (CUDA_LINK_CACHE_VERIFY_KEY).
    Keygen,
}

/// `cuda-link cache ...`.
pub(crate) fn run(action: CacheAction, dir: Option<PathBuf>) -> Result<(), String> {
    let cache = LinkCache::new(dir.unwrap_or_else(LinkCache::default_dir));
    let shown = cache.dir().display();
    match action {
        CacheAction::Dir => {
            let _ = say::out(format!("{shown}"));
        }
        CacheAction::Keygen => {
            let (signing, verify) = RemoteCache::generate_keys().map_err(|e| e.to_string())?;
            let _ = say::out(format!(
                "CUDA_LINK_CACHE_SIGNING_KEY={signing}\nCUDA_LINK_CACHE_VERIFY_KEY={verify}"
            ));
        }
        CacheAction::Stats => match cache.disk_usage() {
            Ok((entries, bytes)) => {
                let _ = say::out(format!("{shown}: {entries} entries, {bytes} bytes"));
                let recorded = cache.recorded_stats().unwrap_or_default();
                let _ = say::out(recorded_line(&recorded));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let _ = say::out(format!("{shown}: 0 entries, 0 bytes (not created yet)"));
            }
            Err(e) => return Err(format!("cannot read {shown}: {e}")),
        },
        CacheAction::Clear => {
            let (entries, _) = cache.disk_usage().unwrap_or_default();
            match cache.clear() {
                Ok(()) => {
                    let _ = say::out(format!("{shown}: removed {entries} entries"));
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    let _ = say::out(format!("{shown}: nothing to clear"));
                }
                Err(e) => return Err(format!("cannot clear {shown}: {e}")),
            }
        }
    }
    Ok(())
}

/// The recorded counters on one line.
fn recorded_line(stats: &CacheStats) -> String {
    format!(
        "since cleared: {} local hits, {} remote hits, {} misses, {} stored, {} remote errors, \
         {} remote entries refused; {} bytes read and {} written here, {} read from and {} \
         written to the shared store",
        stats.hits,
        stats.remote_hits,
        stats.misses.saturating_sub(stats.remote_hits),
        stats.stores,
        stats.remote_errors,
        stats.remote_refused,
        stats.bytes_read,
        stats.bytes_written,
        stats.remote_bytes_read,
        stats.remote_bytes_written,
    )
}
