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

/// The tests' writers' Ed25519 key, and its public half.
const SIGNING: &str = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
const VERIFY: &str = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";

/// A store whose entries this process signs and checks.
fn remote(url: &str) -> RemoteCache {
    keyless(url).signing_key(SIGNING).unwrap()
}

/// A store with no key: unused unless told to trust it.
fn keyless(url: &str) -> RemoteCache {
    RemoteCache::new(url)
        .unwrap()
        .timeout(Duration::from_secs(3))
}

/// A reader holding only the writers' public key.
fn verifier(url: &str) -> RemoteCache {
    keyless(url).verify_key(VERIFY).unwrap()
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
    let reader = || cache(keyless(&redis.url()).team_key(team).unwrap());
    let foreign = "someone else's key, also long";
    for (name, writer) in [
        ("unsigned", keyless(&redis.url()).trust_unsigned(true)),
        ("foreign", keyless(&redis.url()).team_key(foreign).unwrap()),
    ] {
        let (_w_dir, w) = cache(writer);
        w.store_entry(&key(name), &entry("a forged kernel"));
        w.flush();
        let (_r_dir, r) = reader();
        assert!(r.load(&key(name)).is_none(), "{name} served");
        assert_eq!(r.stats().remote_refused, 1, "{name}: {:?}", r.stats());
    }
    let (_w_dir, w) = cache(keyless(&redis.url()).team_key(team).unwrap());
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

/// Without a key, a store is neither read nor written, unless the user
/// chose to trust it as it is.
#[test]
fn a_keyless_store_is_not_used_unless_trusted() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (_a_dir, a) = cache(keyless(&redis.url()));
    a.store_entry(&key("keyless"), &entry("from a keyless writer"));
    a.flush();
    assert!(redis.keys().is_empty(), "{:?}", redis.keys());
    let (_t_dir, trusting) = cache(keyless(&redis.url()).trust_unsigned(true));
    trusting.store_entry(&key("trusted"), &entry("from a trusting writer"));
    trusting.flush();
    assert_eq!(redis.keys().len(), 1);
    let (_b_dir, b) = cache(keyless(&redis.url()));
    assert!(b.load(&key("trusted")).is_none());
    let stats = b.stats();
    assert_eq!(
        (stats.remote_hits, stats.remote_misses, stats.remote_refused),
        (0, 0, 0),
        "the store was asked: {stats:?}"
    );
    let (_c_dir, c) = cache(keyless(&redis.url()).trust_unsigned(true));
    assert_eq!(
        c.load(&key("trusted")).unwrap().output,
        b"from a trusting writer"
    );
}

/// A reader with the public key alone serves what the writers signed,
/// refuses what they did not, and publishes nothing.
#[test]
fn a_verify_only_reader_serves_signed_entries_and_cannot_write() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let url = redis.url();
    for (name, writer) in [
        ("signed", remote(&url)),
        ("unsigned", keyless(&url).trust_unsigned(true)),
        (
            "team",
            keyless(&url)
                .team_key("a team key, 16 bytes or more")
                .unwrap(),
        ),
        (
            "other signer",
            keyless(&url).signing_key(&"11".repeat(32)).unwrap(),
        ),
    ] {
        let (_w_dir, w) = cache(writer);
        w.store_entry(&key(name), &entry(name));
        w.flush();
    }
    assert_eq!(redis.keys().len(), 4);
    let (_r_dir, reader) = cache(verifier(&url));
    assert_eq!(reader.load(&key("signed")).unwrap().output, b"signed");
    for name in ["unsigned", "team", "other signer"] {
        assert!(reader.load(&key(name)).is_none(), "{name} served");
    }
    assert_eq!(reader.stats().remote_refused, 3, "{:?}", reader.stats());
    reader.store_entry(&key("from a reader"), &entry("a pull request's kernel"));
    reader.flush();
    assert_eq!(
        redis.keys().len(),
        4,
        "the reader wrote: {:?}",
        redis.keys()
    );
    assert!(
        reader.load(&key("from a reader")).is_some(),
        "kept in its folder"
    );
}

/// Another program's signed entry, moved under the victim's key, its
/// scheme or tag changed: served by no reader, whatever keys it holds.
#[test]
fn a_forged_object_is_never_served() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let url = redis.url();
    let team = "a team key, 16 bytes or more";
    let (_w_dir, w) = cache(remote(&url));
    w.store_entry(&key("intruder"), &entry("the intruder's kernel"));
    w.flush();
    let (_t_dir, t) = cache(keyless(&url).team_key(team).unwrap());
    t.store_entry(&key("intruder, team"), &entry("the intruder's kernel"));
    t.flush();
    let objects = redis.keys();
    let victim_hex = key("victim").to_hex();
    let victim = |from: &str| {
        let hex = key(from).to_hex();
        objects
            .iter()
            .find(|object| object.ends_with(&hex))
            .unwrap()
            .replace(&hex[..2], &victim_hex[..2])
            .replace(&hex, &victim_hex)
    };
    let readers = || {
        [
            ("writer", remote(&url)),
            ("verifier", verifier(&url)),
            ("team", keyless(&url).team_key(team).unwrap()),
            ("keyless", keyless(&url)),
        ]
    };
    // (the object moved, a byte to overwrite at an offset, or none)
    let forgeries: [(&str, Option<(usize, &str)>); 6] = [
        ("intruder", None),
        ("intruder, team", None),
        // Scheme 1 (HMAC) claimed for a signature, 2 (Ed25519) for a MAC.
        ("intruder", Some((12, "\x01"))),
        ("intruder, team", Some((12, "\x02"))),
        // Any tag.
        ("intruder", Some((16, "a forged tag of any bytes"))),
        ("intruder, team", Some((16, "a forged tag of any bytes"))),
    ];
    for (from, overwrite) in forgeries {
        let source = objects
            .iter()
            .find(|object| object.ends_with(&key(from).to_hex()))
            .unwrap();
        let target = victim(from);
        redis.cli(&["COPY", source, &target, "REPLACE"]);
        if let Some((at, bytes)) = overwrite {
            redis.cli(&["SETRANGE", &target, &at.to_string(), bytes]);
        }
        assert!(redis.keys().contains(&target), "{target} not planted");
        for (mode, reader) in readers() {
            let (_r_dir, r) = cache(reader);
            assert!(
                r.load(&key("victim")).is_none(),
                "{mode} served {from} forged with {overwrite:?}"
            );
        }
    }
}

/// An entry of 2 million empty blobs, well formed and signed by the
/// writers' key under a real key: refused in under a second (its decode
/// was quadratic), never served.
#[test]
fn an_entry_of_millions_of_blobs_is_refused_at_once() {
    use ed25519_dalek::Signer;
    // Its 100 MB or so of objects would show in the peak memory that
    // `hostile::big_compressed_ptx_is_inspected_as_a_stream` measures.
    let _serial = cuda_link_tests::serial();
    use sha2::Digest;
    let share = tempfile::tempdir().unwrap();
    let url = format!("file://{}", share.path().display());
    let stored_at = key("two million blobs");
    let hex = stored_at.to_hex();
    let key_bytes: Vec<u8> = (0..32)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    // The entry file, as `cache/entry.rs` lays it out (format 4).
    let count = 2_000_000u64;
    let mut body = count.to_le_bytes().to_vec();
    for i in 0..count {
        let name = i.to_string();
        body.extend_from_slice(&(name.len() as u64).to_le_bytes());
        body.extend_from_slice(name.as_bytes());
        body.extend_from_slice(&0u64.to_le_bytes());
    }
    let (magic, version, len) = (
        b"CLNKCACHE\0",
        4u32.to_le_bytes(),
        (body.len() as u64).to_le_bytes(),
    );
    let mut sum = twox_hash::XxHash3_128::new();
    for part in [&magic[..], &version, &key_bytes, &len, &body] {
        sum.write(part);
    }
    let mut file = magic.to_vec();
    for part in [
        &version[..],
        &key_bytes,
        &sum.finish_128().to_le_bytes(),
        &len,
        &body,
    ] {
        file.extend_from_slice(part);
    }
    // The object, as `cache/sealed.rs` lays it out (format 2, Ed25519).
    let mut head = b"CLNKRMT\0".to_vec();
    head.extend_from_slice(&2u32.to_le_bytes());
    head.extend_from_slice(&2u32.to_le_bytes());
    let digest = sha2::Sha256::new()
        .chain_update(&head)
        .chain_update(&key_bytes)
        .chain_update(&file)
        .finalize();
    let seed: [u8; 32] = (0..32)
        .map(|i| u8::from_str_radix(&SIGNING[2 * i..2 * i + 2], 16).unwrap())
        .collect::<Vec<_>>()
        .try_into()
        .unwrap();
    let signature = ed25519_dalek::SigningKey::from_bytes(&seed).sign(&digest);
    let mut object = head;
    object.extend_from_slice(&signature.to_bytes());
    object.extend_from_slice(&file);
    let dir = share.path().join("cuda-link-cache/v1").join(&hex[..2]);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(&hex), &object).unwrap();

    let (_r_dir, reader) = cache(verifier(&url));
    let started = Instant::now();
    assert!(reader.load(&stored_at).is_none());
    eprintln!("refused in {:?}", started.elapsed());
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(reader.stats().remote_refused, 1, "{:?}", reader.stats());
}

/// Every path under `dir` with its size and modification time.
fn tree(dir: &std::path::Path) -> Vec<(std::path::PathBuf, u64, std::time::SystemTime)> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap().flatten() {
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                stack.push(entry.path());
            }
            found.push((entry.path(), meta.len(), meta.modified().unwrap()));
        }
    }
    found.sort();
    found
}

/// A folder store is not touched before the first lookup, and a reader's
/// lookup of a missing folder creates nothing.
#[test]
fn a_folder_store_does_no_io_before_its_first_lookup() {
    let parent = tempfile::tempdir().unwrap();
    let folder = parent.path().join("not/yet");
    let url = format!("file://{}", folder.display());
    // Read-only by setting, and by holding no key to publish with.
    for reader in [verifier(&url).read_only(true), verifier(&url)] {
        let (_r_dir, reader) = cache(reader);
        assert!(!folder.exists());
        assert!(reader.load(&key("missing")).is_none());
        assert!(!folder.exists(), "a reader created its store's folder");
    }
    let (_w_dir, writer) = cache(remote(&url));
    assert!(!folder.exists(), "made before the first call");
    writer.store_entry(&key("first"), &entry("first"));
    writer.flush();
    assert!(folder.exists());
}

/// A read-only reader of a folder writes nothing there (no folder for
/// atomic writes either) and still reads it, also when the folder is
/// not writable.
#[test]
fn a_read_only_folder_store_writes_nothing_and_is_read() {
    use std::os::unix::fs::PermissionsExt;
    let share = tempfile::tempdir().unwrap();
    let url = format!("file://{}", share.path().display());
    let (_w_dir, writer) = cache(remote(&url));
    writer.store_entry(&key("published"), &entry("published"));
    writer.flush();
    std::fs::remove_dir_all(share.path().join(".cuda-link-tmp")).unwrap();
    let before = tree(share.path());
    let set_mode = |mode: u32| {
        for (path, _, _) in tree(share.path()) {
            let mode = if path.is_dir() { mode } else { mode & 0o444 };
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        std::fs::set_permissions(share.path(), std::fs::Permissions::from_mode(mode)).unwrap();
    };
    set_mode(0o555);
    let (_r_dir, reader) = cache(verifier(&url).read_only(true));
    assert_eq!(
        reader.load(&key("published")).map(|hit| hit.output),
        Some(b"published".to_vec()),
        "{:?} {:?}",
        reader.stats(),
        reader.remote().unwrap().failure()
    );
    let (_s_dir, signer) = cache(remote(&url).read_only(true));
    signer.store_entry(&key("from a reader"), &entry("not published"));
    signer.flush();
    set_mode(0o755);
    assert_eq!(tree(share.path()), before, "a read-only store was written");
}

/// A store whose every call blocks (a stopped server: it accepts the
/// connection and never answers, as a hung network mount never answers a
/// `stat`) costs one bounded wait; the store is then off for the process.
#[test]
fn a_store_that_never_answers_costs_one_bounded_wait() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    redis.signal(libc::SIGSTOP);
    let (_dir, reader) = cache(verifier(&redis.url()).timeout(Duration::from_secs(1)));
    let started = Instant::now();
    assert!(reader.load(&key("blocked")).is_none());
    let waited = started.elapsed();
    redis.signal(libc::SIGCONT);
    assert!(waited < Duration::from_secs(3), "{waited:?}");
    let failure = reader.remote().unwrap().failure().unwrap_or_default();
    assert!(failure.contains("no answer in"), "{failure}");
    let started = Instant::now();
    assert!(reader.load(&key("blocked again")).is_none());
    assert!(
        started.elapsed() < Duration::from_millis(200),
        "asked again"
    );
}
