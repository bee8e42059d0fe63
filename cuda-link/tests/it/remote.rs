//! The cache's remote tier against a real `redis-server` (and a folder
//! standing in for a network share): what one cache folder stored, another
//! hits; what the store corrupts, forges or loses is never served.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cuda_link::{
    Arch, CacheEntry, CacheKey, CachedLink, LinkCache, Linker, LinkerOptions, ObjectCode,
    OutputKind, RemoteCache,
};
use cuda_link_tests::redis::RedisServer;
use cuda_link_tests::{fixtures, serial};

fn key(name: &str) -> CacheKey {
    let mut key = CacheKey::builder("cuda-link remote test");
    key.field(name.as_bytes());
    key.finish()
}

fn entry(text: &str) -> CacheEntry {
    CachedLink::entry(text.as_bytes(), "the log")
}

/// A cache in a fresh folder with `remote` behind it.
fn cache(remote: RemoteCache) -> (tempfile::TempDir, LinkCache) {
    let dir = tempfile::tempdir().unwrap();
    let cache = LinkCache::new(dir.path().join("cache")).with_remote(remote);
    (dir, cache)
}

fn remote(url: &str) -> RemoteCache {
    RemoteCache::new(url)
        .unwrap()
        .timeout(Duration::from_secs(3))
}

#[test]
fn a_second_cache_folder_hits_what_the_first_stored() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (_a_dir, a) = cache(remote(&redis.url()));
    a.store(&key("k"), b"\x7fELF not really", "log");
    a.flush();
    let why = a.remote().unwrap().failure();
    assert!(
        a.stats().remote_bytes_written > 0,
        "{:?} {why:?}",
        a.stats()
    );

    let (b_dir, b) = cache(remote(&redis.url()));
    let hit = b
        .load(&key("k"))
        .unwrap_or_else(|| panic!("{:?} {:?}", b.stats(), b.remote().unwrap().failure()));
    assert_eq!(hit.output, b"\x7fELF not really");
    assert_eq!(hit.info_log, "log");
    let stats = b.stats();
    assert_eq!((stats.hits, stats.remote_hits), (0, 1), "{stats:?}");
    // Kept in B's folder: found there without the store.
    let local = LinkCache::new(b_dir.path().join("cache"));
    assert!(local.load(&key("k")).is_some());
    assert_eq!(local.stats().hits, 1);
}

/// A real link: runner B's linker serves runner A's output, bit for bit,
/// without linking.
#[test]
fn a_link_on_one_runner_is_a_hit_on_another() {
    let Some(ptx) = fixtures::saxpy_ptx() else {
        return;
    };
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let _serial = serial();
    let input = ObjectCode::from_ptx(ptx, "saxpy.ptx").unwrap();
    let link = |cache: Arc<LinkCache>| {
        let options = LinkerOptions::for_arch(Arch::sm(90)).no_cache(true);
        let mut linker = Linker::new(options).unwrap().with_cache(Arc::clone(&cache));
        linker.add(&input).unwrap();
        let cubin = linker.link(OutputKind::Cubin).unwrap();
        cache.flush();
        (cubin, cache.stats())
    };
    let (_a_dir, a) = cache(remote(&redis.url()));
    let (from_a, a_stats) = link(Arc::new(a));
    assert_eq!(
        (a_stats.stores, a_stats.remote_misses),
        (1, 1),
        "{a_stats:?}"
    );
    let (_b_dir, b) = cache(remote(&redis.url()));
    let (from_b, b_stats) = link(Arc::new(b));
    assert_eq!(b_stats.remote_hits, 1, "{b_stats:?}");
    assert_eq!(b_stats.stores, 0, "B linked although A's entry was there");
    assert_eq!(from_a.as_bytes(), from_b.as_bytes());
    assert!(from_b.inspect().unwrap().kernels().contains(&"saxpy"));
}

/// A byte flipped anywhere in the stored object: refused, counted, and
/// the lookup is a miss, so the caller compiles again.
#[test]
fn a_flipped_byte_in_a_remote_entry_is_refused() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (_a_dir, a) = cache(remote(&redis.url()));
    a.store_entry(&key("flip"), &entry("the output"));
    a.flush();
    let keys = redis.keys();
    assert_eq!(keys.len(), 1, "{keys:?}");
    let length: usize = String::from_utf8_lossy(&redis.cli(&["STRLEN", &keys[0]]).stdout)
        .trim()
        .parse()
        .unwrap();
    // Two bytes overwritten at each place: the header, the tag, the
    // entry's header, its body. The writer stores the entry again between.
    for at in [0, 20, 60, length / 2, length - 2] {
        redis.cli(&["SETRANGE", &keys[0], &at.to_string(), "ZY"]);
        let (_b_dir, b) = cache(remote(&redis.url()));
        assert!(
            b.load(&key("flip")).is_none(),
            "served with byte {at} flipped"
        );
        assert_eq!(b.stats().remote_refused, 1, "byte {at}: {:?}", b.stats());
        a.store_entry(&key("flip"), &entry("the output"));
        a.flush();
    }
    // Restored, it is served again.
    let (_c_dir, c) = cache(remote(&redis.url()));
    assert!(c.load(&key("flip")).is_some(), "{:?}", c.stats());
}

/// With a team key, only entries signed with it are served.
#[test]
fn unsigned_or_wrongly_signed_entries_are_ignored_when_a_key_is_set() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let team = "the team's key, 32 bytes long...";
    let reader = || cache(remote(&redis.url()).team_key(team).unwrap());
    let foreign = "someone else's key, also long";
    for (name, writer) in [
        ("unsigned", remote(&redis.url())),
        ("foreign", remote(&redis.url()).team_key(foreign).unwrap()),
    ] {
        let (_w_dir, w) = cache(writer);
        w.store_entry(&key(name), &entry("a forged kernel"));
        w.flush();
        let (_r_dir, r) = reader();
        assert!(r.load(&key(name)).is_none(), "{name} served");
        assert_eq!(r.stats().remote_refused, 1, "{name}: {:?}", r.stats());
    }
    let (_w_dir, w) = cache(remote(&redis.url()).team_key(team).unwrap());
    w.store_entry(&key("signed"), &entry("the team's kernel"));
    w.flush();
    let (_r_dir, r) = reader();
    assert_eq!(r.load(&key("signed")).unwrap().output, b"the team's kernel");
}

/// A password in the URL reaches the server; without it, the server's
/// refusal is a failure the cache goes on without.
#[test]
fn a_password_in_the_url_is_used() {
    let Some(redis) = RedisServer::start_with(&["--requirepass", "s3cret-pass"]) else {
        return;
    };
    let with = format!("redis://:s3cret-pass@127.0.0.1:{}/0", redis.port());
    let (_a_dir, a) = cache(remote(&with));
    a.store_entry(&key("auth"), &entry("behind a password"));
    a.flush();
    assert!(
        a.remote().unwrap().failure().is_none(),
        "{:?}",
        a.remote().unwrap().failure()
    );
    assert!(
        !a.remote().unwrap().url().contains("s3cret"),
        "{}",
        a.remote().unwrap().url()
    );
    let (_b_dir, b) = cache(remote(&with));
    assert!(
        b.load(&key("auth")).is_some(),
        "{:?}",
        b.remote().unwrap().failure()
    );
    let (_c_dir, c) = cache(remote(&redis.url()));
    assert!(c.load(&key("auth")).is_none());
    assert_eq!(c.stats().remote_errors, 1, "{:?}", c.stats());
}

/// A reader publishes nothing.
#[test]
fn a_read_only_cache_never_publishes() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (_dir, reader) = cache(remote(&redis.url()).read_only(true));
    reader.store_entry(&key("pr"), &entry("from a pull request"));
    reader.flush();
    assert!(redis.keys().is_empty(), "{:?}", redis.keys());
    assert!(reader.load(&key("pr")).is_some(), "kept in its own folder");
}

/// A server that went away costs one bounded wait, says why once, and
/// the cache goes on with its folder.
#[test]
fn a_stopped_server_degrades_to_local_compiles_with_a_warning() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let url = redis.url();
    redis.stop();
    let (_dir, cache) = cache(remote(&url).timeout(Duration::from_secs(2)));
    let start = Instant::now();
    assert!(cache.load(&key("down")).is_none());
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "{:?}",
        start.elapsed()
    );
    let failure = cache
        .remote()
        .unwrap()
        .failure()
        .expect("the failure is kept");
    assert!(failure.contains("cuda-link-cache/v1/"), "{failure}");
    let start = Instant::now();
    assert!(cache.load(&key("down again")).is_none());
    assert!(
        start.elapsed() < Duration::from_millis(500),
        "the store is asked again"
    );
    cache.store_entry(&key("local"), &entry("compiled here"));
    cache.flush();
    assert!(cache.load(&key("local")).is_some());
    let stats = cache.stats();
    assert_eq!(stats.remote_errors, 1, "{stats:?}");
    assert_eq!(stats.hits, 1, "{stats:?}");
}

/// A folder (a network share, mounted) is a store too.
#[test]
fn a_shared_folder_is_a_store() {
    let share = tempfile::tempdir().unwrap();
    let url = format!("file://{}", share.path().display());
    let (_a_dir, a) = cache(remote(&url));
    a.store_entry(&key("share"), &entry("shared"));
    a.flush();
    let (_b_dir, b) = cache(remote(&url));
    assert_eq!(b.load(&key("share")).unwrap().output, b"shared");
    assert_eq!(b.stats().remote_hits, 1);

    // A link planted where an object will go is replaced, not followed.
    let victim = share.path().join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    let hex = key("planted").to_hex();
    let dir = share.path().join("cuda-link-cache/v1").join(&hex[..2]);
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(&victim, dir.join(&hex)).unwrap();
    a.store_entry(&key("planted"), &entry("new"));
    a.flush();
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    assert_eq!(b.load(&key("planted")).unwrap().output, b"new");
}

#[test]
fn a_url_opendal_cannot_read_is_a_typed_error() {
    let err = RemoteCache::new("nosuchstore://x/y").unwrap_err();
    assert!(matches!(err, cuda_link::RemoteError::Url { .. }), "{err}");
    let setting = RemoteCache::from_env(|name| match name {
        "CUDA_LINK_CACHE_URL" => Some("file:///tmp".into()),
        "CUDA_LINK_CACHE_TIMEOUT" => Some("soon".into()),
        _ => None,
    });
    assert!(
        matches!(setting, Some(Err(cuda_link::RemoteError::Setting { variable, .. })) if variable == "CUDA_LINK_CACHE_TIMEOUT")
    );
    assert!(RemoteCache::from_env(|_| None).is_none());
    // A key that is set but empty, as a fork's pull request gets secrets,
    // turns the store off rather than serve what it cannot check.
    let empty_key = RemoteCache::from_env(|name| match name {
        "CUDA_LINK_CACHE_URL" => Some("file:///tmp".into()),
        "CUDA_LINK_CACHE_KEY" => Some(String::new()),
        _ => None,
    });
    assert!(matches!(
        empty_key,
        Some(Err(cuda_link::RemoteError::Setting { .. }))
    ));
    assert!(
        RemoteCache::new("file:///tmp")
            .unwrap()
            .team_key("short")
            .is_err()
    );
}
