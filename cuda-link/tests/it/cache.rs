//! The persistent link cache with real nvJitLink links.

use std::path::Path;
use std::sync::Arc;

use cuda_link::CacheKey;
use cuda_link::{Arch, LinkCache, Linker, LinkerOptions, ObjectCode, OutputKind};
use cuda_link_tests::{fixtures, nvjitlink_libraries};
use nvjitlink_sys::NvJitLink;

fn saxpy() -> Option<ObjectCode> {
    Some(ObjectCode::from_ptx(fixtures::saxpy_ptx()?, "saxpy.ptx").unwrap())
}

fn nvjitlink(major: u32) -> Option<Arc<NvJitLink>> {
    let (_, path) = nvjitlink_libraries()
        .into_iter()
        .find(|(m, _)| *m == major)?;
    // SAFETY: the pinned nvJitLink wheel that `cargo xtask test` installed.
    Some(Arc::new(unsafe { NvJitLink::open(path) }.unwrap()))
}

/// Links `input` through `cache`; returns the output and the info log.
fn link_logged(
    lib: &Arc<NvJitLink>,
    cache: &Arc<LinkCache>,
    options: LinkerOptions,
    input: &ObjectCode,
) -> (ObjectCode, String) {
    let mut linker = Linker::with_nvjitlink(Arc::clone(lib), options)
        .unwrap()
        .with_cache(Arc::clone(cache));
    linker.add(input).unwrap();
    let linked = linker.link(OutputKind::Cubin).unwrap();
    (linked, linker.info_log().to_owned())
}

fn link_with(
    lib: &Arc<NvJitLink>,
    cache: &Arc<LinkCache>,
    options: LinkerOptions,
    input: &ObjectCode,
) -> ObjectCode {
    link_logged(lib, cache, options, input).0
}

fn entries(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "clc"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

#[test]
fn hit_after_miss_returns_identical_bytes_and_log() {
    let _serial = cuda_link_tests::serial();
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(LinkCache::new(dir.path()).with_memory_tier(false));
    let options = LinkerOptions::for_arch(Arch::sm(90)).verbose(true);
    let (first, first_log) = link_logged(&lib, &cache, options.clone(), &input);
    let (second, second_log) = link_logged(&lib, &cache, options, &input);
    assert_eq!(first.as_bytes(), second.as_bytes());
    // The info log is cached with the output.
    assert!(!first_log.is_empty());
    assert_eq!(first_log, second_log);
    assert_eq!(second.inspect().unwrap().kernels(), ["saxpy"]);
    let stats = cache.stats();
    assert_eq!(
        (stats.misses, stats.hits, stats.stores),
        (1, 1, 1),
        "{stats:?}"
    );
    assert_eq!(entries(dir.path()).len(), 1);
}

/// The in-memory tier answers in front of the folder: a repeated link is
/// served from memory even after its file was corrupted, the same bytes
/// and log, and the folder is not read (no hit, no corrupt entry).
#[test]
fn the_memory_tier_answers_before_the_folder() {
    let _serial = cuda_link_tests::serial();
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(LinkCache::new(dir.path()));
    let options = LinkerOptions::for_arch(Arch::sm(90)).verbose(true);
    let (first, first_log) = link_logged(&lib, &cache, options.clone(), &input);
    for file in entries(dir.path()) {
        std::fs::write(file, b"corrupt").unwrap();
    }
    let memory_hits = cuda_link::MemoryCache::stats().hits;
    let (second, second_log) = link_logged(&lib, &cache, options, &input);
    assert_eq!(first.as_bytes(), second.as_bytes());
    assert_eq!(first_log, second_log);
    assert!(cuda_link::MemoryCache::stats().hits > memory_hits);
    let stats = cache.stats();
    assert_eq!((stats.hits, stats.corrupt), (0, 0), "{stats:?}");
}

#[test]
fn any_change_misses() {
    let _serial = cuda_link_tests::serial();
    let (Some(input), Some(lib13)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let Some(lib12) = nvjitlink(12) else { return };
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(LinkCache::new(dir.path()).with_memory_tier(false));
    let sm90 = LinkerOptions::for_arch(Arch::sm(90));
    link_with(&lib13, &cache, sm90.clone(), &input);

    // One byte of the input: a space in the PTX changes nothing but the key.
    let mut bytes = input.as_bytes().to_vec();
    bytes.insert(bytes.len() - 1, b' ');
    let changed = ObjectCode::from_ptx(bytes, "saxpy.ptx").unwrap();
    link_with(&lib13, &cache, sm90.clone(), &changed);
    // One option.
    link_with(&lib13, &cache, sm90.clone().lineinfo(true), &input);
    // The library version.
    link_with(&lib12, &cache, sm90.clone(), &input);
    let stats = cache.stats();
    assert_eq!((stats.misses, stats.hits), (4, 0), "{stats:?}");
    assert_eq!(entries(dir.path()).len(), 4);

    // Flags are hashed in order: nvJitLink's last -O wins.
    let a = ["-arch=sm_90".to_owned(), "-lineinfo".to_owned()];
    let b = ["-lineinfo".to_owned(), "-arch=sm_90".to_owned()];
    let inputs = std::slice::from_ref(&input);
    assert_ne!(
        CacheKey::for_link("nvJitLink 13.5", OutputKind::Cubin, &a, inputs),
        CacheKey::for_link("nvJitLink 13.5", OutputKind::Cubin, &b, inputs)
    );
    assert_ne!(
        CacheKey::for_link("nvJitLink 13.5", OutputKind::Cubin, &a, inputs),
        CacheKey::for_link("nvJitLink 13.5", OutputKind::Ptx, &a, inputs)
    );
}

/// `optimization_level: 3` plus a raw `-O0` links at -O0, and the reverse
/// at -O3: the two must not share an entry.
#[test]
fn order_dependent_flags_miss() {
    let _serial = cuda_link_tests::serial();
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(LinkCache::new(dir.path()).with_memory_tier(false));
    let with = |level: u32, raw: &str| {
        LinkerOptions::for_arch(Arch::sm(90))
            .optimization_level(level)
            .extra_flags([raw.to_owned()])
    };
    link_with(&lib, &cache, with(3, "-O0"), &input);
    link_with(&lib, &cache, with(0, "-O3"), &input);
    let stats = cache.stats();
    assert_eq!((stats.misses, stats.hits), (2, 0), "{stats:?}");
    assert_eq!(entries(dir.path()).len(), 2);
}

fn key_of(lib: &Arc<NvJitLink>, options: LinkerOptions, inputs: &[ObjectCode]) -> CacheKey {
    let mut linker = Linker::with_nvjitlink(Arc::clone(lib), options).unwrap();
    linker.add_many(inputs).unwrap();
    linker.cache_key(OutputKind::Cubin).unwrap()
}

/// Every field of `LinkerOptions`, and every byte of an input, is in the key.
#[test]
fn every_option_and_every_input_byte_is_in_the_key() {
    let _serial = cuda_link_tests::serial();
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let base = LinkerOptions::for_arch(Arch::sm(90));
    let variants: Vec<(&str, LinkerOptions)> = vec![
        ("arch", LinkerOptions::for_arch("sm_90a".parse().unwrap())),
        ("max_register_count", base.clone().max_register_count(32)),
        ("time", base.clone().time(true)),
        ("verbose", base.clone().verbose(true)),
        (
            "link_time_optimization",
            base.clone().link_time_optimization(true),
        ),
        ("ptx", base.clone().ptx(true)),
        ("optimization_level", base.clone().optimization_level(1)),
        ("debug", base.clone().debug(true)),
        ("lineinfo", base.clone().lineinfo(true)),
        ("ftz", base.clone().ftz(true)),
        ("prec_div", base.clone().prec_div(false)),
        ("prec_sqrt", base.clone().prec_sqrt(false)),
        ("fma", base.clone().fma(false)),
        ("kernels_used", base.clone().kernels_used(["saxpy"])),
        ("variables_used", base.clone().variables_used(["v"])),
        (
            "optimize_unused_variables",
            base.clone().optimize_unused_variables(true),
        ),
        ("ptxas_options", base.clone().ptxas_options(["-v"])),
        ("split_compile", base.clone().split_compile(2)),
        (
            "split_compile_extended",
            base.clone().split_compile_extended(2),
        ),
        ("no_cache", base.clone().no_cache(true)),
        (
            "extra_flags",
            base.clone().extra_flags(["-jump-table-density=50"]),
        ),
    ];
    let inputs = std::slice::from_ref(&input);
    let mut keys = std::collections::HashMap::new();
    keys.insert(key_of(&lib, base.clone(), inputs), "base");
    for (field, options) in variants {
        let previous = keys.insert(key_of(&lib, options, inputs), field);
        assert_eq!(previous, None, "{field} does not change the key");
    }
    // `backend` picks the library, whose identity is in the key: see
    // `any_change_misses` for nvJitLink 12 against 13.

    let bytes = input.as_bytes();
    let mut checked = 0;
    for at in 0..bytes.len() {
        let mut changed = bytes.to_vec();
        changed[at] = if changed[at] == b' ' { b'\t' } else { b' ' };
        let Ok(code) = ObjectCode::from_ptx(changed, "saxpy.ptx") else {
            continue;
        };
        // Inputs a linker refuses (`.version 8 8`) have no key.
        let mut linker = Linker::with_nvjitlink(Arc::clone(&lib), base.clone()).unwrap();
        if linker.add(&code).is_err() {
            continue;
        }
        let key = linker.cache_key(OutputKind::Cubin).unwrap();
        let previous = keys.insert(key, "a byte");
        assert_eq!(previous, None, "byte {at} does not change the key");
        checked += 1;
    }
    assert!(
        checked > bytes.len() * 9 / 10,
        "{checked} of {}",
        bytes.len()
    );
}

#[test]
fn corrupt_and_truncated_entries_are_relinked() {
    let _serial = cuda_link_tests::serial();
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(LinkCache::new(dir.path()).with_memory_tier(false));
    let options = LinkerOptions::for_arch(Arch::sm(90));
    let good = link_with(&lib, &cache, options.clone(), &input);
    let entry = entries(dir.path()).remove(0);

    let mut bytes = std::fs::read(&entry).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&entry, &bytes).unwrap();
    assert_eq!(
        link_with(&lib, &cache, options.clone(), &input).as_bytes(),
        good.as_bytes()
    );

    std::fs::write(&entry, &bytes[..100]).unwrap();
    assert_eq!(
        link_with(&lib, &cache, options.clone(), &input).as_bytes(),
        good.as_bytes()
    );

    let stats = cache.stats();
    assert_eq!(
        (stats.corrupt, stats.hits, stats.stores),
        (2, 0, 3),
        "{stats:?}"
    );
    // The rewritten entry is intact again.
    link_with(&lib, &cache, options, &input);
    assert_eq!(cache.stats().hits, 1);
}

/// An entry whose checksum holds but whose output is not a valid cubin
/// (written by an older or buggy writer) is relinked and replaced.
#[test]
fn a_checksummed_but_invalid_entry_is_relinked() {
    let _serial = cuda_link_tests::serial();
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(LinkCache::new(dir.path()).with_memory_tier(false));
    let options = LinkerOptions::for_arch(Arch::sm(90));
    let key = key_of(&lib, options.clone(), std::slice::from_ref(&input));
    cache.store(&key, b"\x7fELF but not a cubin", "");
    let linked = link_with(&lib, &cache, options.clone(), &input);
    assert_eq!(linked.inspect().unwrap().kernels(), ["saxpy"]);
    let stats = cache.stats();
    assert_eq!(
        (stats.corrupt, stats.hits, stats.misses),
        (1, 0, 1),
        "{stats:?}"
    );
    link_with(&lib, &cache, options, &input);
    assert_eq!(cache.stats().hits, 1, "the replaced entry serves");
}

/// Temporaries left by crashed writers go at the next scan; a fresh one,
/// which another writer may still be filling, stays.
#[test]
fn stale_temporaries_are_cleaned() {
    let _serial = cuda_link_tests::serial();
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let stale = dir.path().join(".tmp-crashed-1234-0");
    let fresh = dir.path().join(".tmp-writing-5678-0");
    for path in [&stale, &fresh] {
        std::fs::write(path, b"half an entry").unwrap();
    }
    let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .append(true)
        .open(&stale)
        .unwrap()
        .set_modified(an_hour_ago)
        .unwrap();
    let cache = Arc::new(LinkCache::new(dir.path()).with_memory_tier(false));
    link_with(&lib, &cache, LinkerOptions::for_arch(Arch::sm(90)), &input);
    assert!(!stale.exists());
    assert!(fresh.exists());
    assert_eq!(cache.stats().stale_temporaries, 1);
}

#[cfg(unix)]
fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    let probe = tempfile::tempdir().unwrap();
    std::fs::metadata(probe.path()).unwrap().uid() == 0
}

/// Entries planted in a directory that another user owns, or that anyone
/// may write, or planted as another user's file, are never served.
#[cfg(unix)]
#[test]
fn planted_entries_are_never_served() {
    let _serial = cuda_link_tests::serial();
    use std::os::unix::fs::{PermissionsExt, chown};
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    if !running_as_root() {
        cuda_link_tests::skip("chown needs root (CI runs as root)");
        return;
    }
    let options = LinkerOptions::for_arch(Arch::sm(90));
    let key = key_of(&lib, options.clone(), std::slice::from_ref(&input));
    let plant = |dir: &Path| {
        let planter = LinkCache::new(dir).with_memory_tier(false);
        planter.store(&key, b"planted", "");
        entries(dir).remove(0)
    };
    let outcome = |dir: &Path| {
        let cache = Arc::new(LinkCache::new(dir).with_memory_tier(false));
        let linked = link_with(&lib, &cache, options.clone(), &input);
        assert_eq!(linked.inspect().unwrap().kernels(), ["saxpy"]);
        cache.stats()
    };

    // A directory owned by another user.
    let root = tempfile::tempdir().unwrap();
    let theirs = root.path().join("theirs");
    let entry = plant(&theirs);
    chown(&theirs, Some(65534), Some(65534)).unwrap();
    let stats = outcome(&theirs);
    assert!(
        stats.refused > 0 && stats.hits == 0 && stats.stores == 0,
        "{stats:?}"
    );
    assert_eq!(
        std::fs::read(&entry).unwrap().len(),
        std::fs::read(&entry).unwrap().len()
    );

    // A directory anyone may write.
    let open = root.path().join("open");
    plant(&open);
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let stats = outcome(&open);
    assert!(stats.refused > 0 && stats.hits == 0, "{stats:?}");

    // Our directory, another user's entry in it.
    let ours = root.path().join("ours");
    let entry = plant(&ours);
    chown(&entry, Some(65534), Some(65534)).unwrap();
    let stats = outcome(&ours);
    assert!(stats.refused > 0 && stats.hits == 0, "{stats:?}");

    // Our directory, a group-writable entry in it.
    let loose = root.path().join("loose");
    let entry = plant(&loose);
    std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o666)).unwrap();
    let stats = outcome(&loose);
    assert!(stats.refused > 0 && stats.hits == 0, "{stats:?}");
}

/// The cache creates its directory private to its user.
#[cfg(unix)]
#[test]
fn a_new_directory_is_private() {
    let _serial = cuda_link_tests::serial();
    use std::os::unix::fs::PermissionsExt;
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("new/cache");
    let cache = Arc::new(LinkCache::new(&dir).with_memory_tier(false));
    link_with(&lib, &cache, LinkerOptions::for_arch(Arch::sm(90)), &input);
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
    let entry = entries(&dir).remove(0);
    assert_eq!(
        std::fs::metadata(entry).unwrap().permissions().mode() & 0o777,
        0o600
    );
}

/// Options of the four keys the races use; four entries overflow the
/// bound the races set, so eviction runs throughout.
fn race_options(key: usize) -> LinkerOptions {
    LinkerOptions::for_arch(Arch::sm(90)).max_register_count(32 + 8 * key as u32)
}

/// A bound of about two and a half entries.
fn race_bound(lib: &Arc<NvJitLink>, input: &ObjectCode) -> u64 {
    let probe = tempfile::tempdir().unwrap();
    let cache = Arc::new(LinkCache::new(probe.path()).with_memory_tier(false));
    link_with(lib, &cache, race_options(0), input);
    std::fs::metadata(&entries(probe.path())[0]).unwrap().len() * 5 / 2
}

/// Checks one link per key against a link without the cache.
fn reference_outputs(lib: &Arc<NvJitLink>, input: &ObjectCode) -> Vec<Vec<u8>> {
    (0..4)
        .map(|key| {
            Linker::with_nvjitlink(Arc::clone(lib), race_options(key))
                .unwrap()
                .add(input)
                .unwrap()
                .link(OutputKind::Cubin)
                .unwrap()
                .as_bytes()
                .to_vec()
        })
        .collect()
}

/// 16 threads, each linking all four keys in its own order, against one
/// cache that keeps evicting: every output is the uncached one.
#[test]
fn sixteen_threads_race_on_same_and_different_keys() {
    let _serial = cuda_link_tests::serial();
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let bound = race_bound(&lib, &input);
    let cache = Arc::new(
        LinkCache::new(dir.path())
            .with_memory_tier(false)
            .with_max_bytes(bound),
    );
    let reference = reference_outputs(&lib, &input);
    std::thread::scope(|scope| {
        for thread in 0..16 {
            let (lib, cache, input, reference) = (&lib, &cache, &input, &reference);
            scope.spawn(move || {
                for round in 0..4 {
                    let key = (thread + round) % 4;
                    let linked = link_with(lib, cache, race_options(key), input);
                    assert_eq!(
                        linked.as_bytes(),
                        reference[key],
                        "thread {thread}, key {key}"
                    );
                }
            });
        }
    });
    let stats = cache.stats();
    assert_eq!(stats.hits + stats.misses, 64, "{stats:?}");
    assert_eq!(stats.corrupt, 0, "{stats:?}");
    assert!(stats.evictions > 0, "{stats:?}");
    let (_, bytes) = cache.disk_usage().unwrap();
    assert!(bytes <= bound, "{bytes} > {bound}");
}

/// Run as a child process by `four_processes_race_on_same_and_different_keys`.
#[test]
fn child_process_links_through_the_cache() {
    let _serial = cuda_link_tests::serial();
    let Some(dir) = std::env::var_os("CUDA_LINK_CACHE_CHILD_DIR") else {
        return;
    };
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let bound = std::env::var("CUDA_LINK_CACHE_CHILD_BOUND")
        .unwrap()
        .parse()
        .unwrap();
    let cache = Arc::new(
        LinkCache::new(dir)
            .with_memory_tier(false)
            .with_max_bytes(bound),
    );
    let reference = reference_outputs(&lib, &input);
    for round in 0..8 {
        let key = (round + std::process::id() as usize) % 4;
        let linked = link_with(&lib, &cache, race_options(key), &input);
        assert_eq!(linked.as_bytes(), reference[key], "key {key}");
    }
    assert_eq!(cache.stats().corrupt, 0);
}

#[test]
fn four_processes_race_on_same_and_different_keys() {
    let _serial = cuda_link_tests::serial();
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let bound = race_bound(&lib, &input);
    let spawn = || {
        std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "cache::child_process_links_through_the_cache",
                "--test-threads=1",
            ])
            .env("CUDA_LINK_CACHE_CHILD_DIR", dir.path())
            .env("CUDA_LINK_CACHE_CHILD_BOUND", bound.to_string())
            .output()
            .unwrap()
    };
    let outputs = std::thread::scope(|scope| {
        let children: Vec<_> = (0..4).map(|_| scope.spawn(spawn)).collect();
        children
            .into_iter()
            .map(|c| c.join().unwrap())
            .collect::<Vec<_>>()
    });
    for output in outputs {
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{stdout}");
        assert!(stdout.contains("1 passed"), "{stdout}");
    }
    // Each process sees the others' entries at its next scan; a new
    // process's first store is one.
    let cache = Arc::new(
        LinkCache::new(dir.path())
            .with_memory_tier(false)
            .with_max_bytes(bound),
    );
    let extra = race_options(0).lineinfo(true);
    link_with(&lib, &cache, extra, &input);
    let (_, bytes) = cache.disk_usage().unwrap();
    assert!(bytes <= bound, "{bytes} > {bound}");
    assert_eq!(cache.stats().corrupt, 0);
}

#[test]
fn an_unwritable_directory_still_links() {
    let _serial = cuda_link_tests::serial();
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // A path below a regular file cannot be created, even by root.
    let blocker = dir.path().join("not-a-directory");
    std::fs::write(&blocker, b"").unwrap();
    let cache = Arc::new(LinkCache::new(blocker.join("cache")).with_memory_tier(false));
    for _ in 0..2 {
        let linked = link_with(&lib, &cache, LinkerOptions::for_arch(Arch::sm(90)), &input);
        assert_eq!(linked.inspect().unwrap().kernels(), ["saxpy"]);
    }
    let stats = cache.stats();
    assert_eq!(
        (stats.write_failures, stats.misses, stats.hits),
        (2, 2, 0),
        "{stats:?}"
    );
}

#[test]
fn least_recently_used_entries_are_evicted() {
    let _serial = cuda_link_tests::serial();
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let one = {
        let probe = Arc::new(LinkCache::new(dir.path().join("probe")).with_memory_tier(false));
        link_with(&lib, &probe, LinkerOptions::for_arch(Arch::sm(90)), &input);
        std::fs::metadata(&entries(probe.dir())[0]).unwrap().len()
    };
    // Room for two entries of about this size.
    let cache = Arc::new(
        LinkCache::new(dir.path().join("lru"))
            .with_memory_tier(false)
            .with_max_bytes(one * 2 + one / 2),
    );
    let options = |registers| LinkerOptions::for_arch(Arch::sm(90)).max_register_count(registers);
    link_with(&lib, &cache, options(32), &input);
    std::thread::sleep(std::time::Duration::from_millis(20));
    link_with(&lib, &cache, options(40), &input);
    std::thread::sleep(std::time::Duration::from_millis(20));
    link_with(&lib, &cache, options(32), &input); // a hit: 32 is now the most recent
    std::thread::sleep(std::time::Duration::from_millis(20));
    link_with(&lib, &cache, options(48), &input); // evicts 40
    assert_eq!(cache.stats().evictions, 1);
    link_with(&lib, &cache, options(32), &input);
    link_with(&lib, &cache, options(40), &input);
    let stats = cache.stats();
    assert_eq!((stats.hits, stats.misses), (2, 4), "{stats:?}");
}

// ---------------------------------------------------------------------
// Another local user against the cache.
//
// The tests run as root. "Another user" is uid 65534 (nobody): the
// parent test process makes that user's files and links and chowns them
// to it. The victim is a child process (this test binary again, running
// `victim_child`) that drops to uid 65533 before it touches the cache, so
// that ownership and permissions apply to it as to any user. When the
// victim needs the attacker to act in the middle, it prints
// `@@attacker <step>` and waits on its stdin; the parent does the step and
// answers. A child that blocks is killed after a minute, which fails the
// test.
// ---------------------------------------------------------------------

#[cfg(unix)]
const VICTIM_UID: u32 = 65533;
#[cfg(unix)]
const ATTACKER_UID: u32 = 65534;

/// Distinct keys without a backend: the tests below store and look up
/// entries directly.
fn test_key(n: u32) -> CacheKey {
    CacheKey::for_link("no backend", OutputKind::Cubin, &[format!("-key={n}")], &[])
}

fn served(cache: &LinkCache, key: &CacheKey) -> Option<Vec<u8>> {
    cache.load(key).map(|hit| hit.output)
}

/// A command that runs the ignored test `test` of this binary alone.
#[cfg(unix)]
fn child_command(test: &str) -> std::process::Command {
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    let test = format!("cache::{test}");
    command.args([
        "--exact",
        &test,
        "--include-ignored",
        "--nocapture",
        "--test-threads=1",
    ]);
    command
}

/// Runs `command` (see [`child_command`]), doing each `@@attacker` step
/// it asks for with `attacker`; kills it after `limit`. Returns its
/// output once it passed.
#[cfg(unix)]
fn run_child(
    mut command: std::process::Command,
    limit: std::time::Duration,
    mut attacker: impl FnMut(&str),
) -> String {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::process::Stdio;
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let (finished, watch) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if watch.recv_timeout(limit).is_err() {
            // Not yet waited for, so `pid` is still this child.
            // SAFETY: a signal to a process we started.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            return true;
        }
        false
    });
    let mut stderr = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = String::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let Ok(line) = line else { break };
        // After libtest's `test victim_child ... `, on the same line.
        if let Some((_, step)) = line.split_once("@@attacker ") {
            attacker(step);
            let _ = writeln!(stdin, "done");
        }
        stdout.push_str(&line);
        stdout.push('\n');
    }
    let _ = finished.send(());
    let killed = watchdog.join().unwrap();
    let status = child.wait().unwrap();
    let stderr = stderr.join().unwrap();
    assert!(
        !killed,
        "the child blocked and was killed\n{stdout}\n{stderr}"
    );
    assert!(
        status.success() && stdout.contains("1 passed"),
        "the child failed: {status:?}\n{stdout}\n{stderr}"
    );
    stdout
}

/// In the victim: asks the parent for an attacker's step and waits for it.
#[cfg(unix)]
fn ask_attacker(step: &str) {
    use std::io::Write;
    println!("@@attacker {step}");
    std::io::stdout().flush().unwrap();
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer).unwrap();
    assert_eq!(answer.trim(), "done");
}

#[cfg(unix)]
fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Makes `path` (a file, or a directory and everything in it) `uid`'s.
#[cfg(unix)]
fn chown_all(path: &Path, uid: u32) {
    std::os::unix::fs::lchown(path, Some(uid), Some(uid)).unwrap();
    if std::fs::symlink_metadata(path).unwrap().is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            chown_all(&entry.unwrap().path(), uid);
        }
    }
}

/// A link at `link` to `target`, made by the attacker.
#[cfg(unix)]
fn attacker_symlink(target: &Path, link: &Path) {
    let fresh = link.with_extension("new-link");
    std::os::unix::fs::symlink(target, &fresh).unwrap();
    std::os::unix::fs::lchown(&fresh, Some(ATTACKER_UID), Some(ATTACKER_UID)).unwrap();
    // Atomically, over whatever is at `link`.
    std::fs::rename(&fresh, link).unwrap();
}

/// The names in `dir`, sorted.
/// The entries and other files in `dir`, sorted; a cache's own counters
/// (`*.stats`, what `recorded_stats` sums) are left out.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !name.ends_with(".stats"))
        .collect();
    names.sort();
    names
}

/// A root "like /tmp" for a victim test: everyone may traverse and
/// create in it.
#[cfg(unix)]
fn shared_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    chmod(root.path(), 0o1777);
    root
}

#[cfg(unix)]
fn victim_command(scenario: &str, root: &Path) -> std::process::Command {
    let mut command = child_command("victim_child");
    command
        .env("CUDA_LINK_CACHE_VICTIM", scenario)
        .env("CUDA_LINK_CACHE_VICTIM_ROOT", root)
        .env("CUDA_LINK_CACHE_VICTIM_UID", VICTIM_UID.to_string());
    command
}

/// The victim's cache lives at `shared/cache`, where `shared` is another
/// user's directory (say, a project tree of theirs that
/// `CUDA_LINK_CACHE_DIR` points into). The cache directory itself is the
/// victim's, mode 0700, so the first use accepts it. Then the other user,
/// who may rename what is in `shared`, moves it aside and puts a symbolic
/// link to a directory of theirs in its place.
///
/// What this proves: the verdict is the descriptor opened at first use,
/// not the path. After the swap the victim still stores into and reads
/// from its own directory; nothing it writes lands in the attacker's
/// directory, so the attacker gets no file of the victim's to rename to
/// another key's name, and key B is never served another key's cubin. With
/// a verdict remembered per path, the victim wrote key C's entry into the
/// attacker's directory, the attacker renamed it to key B's name, and key
/// B was served C's cubin.
#[cfg(unix)]
#[test]
fn a_directory_swapped_for_a_symlink_after_first_use_is_not_followed() {
    let _serial = cuda_link_tests::serial();
    if !running_as_root() {
        cuda_link_tests::skip("needs root to act as two users (CI runs as root)");
        return;
    }
    let root = shared_root();
    let shared = root.path().join("shared");
    let cache_dir = shared.join("cache");
    let moved = shared.join("moved");
    let theirs = root.path().join("theirs");
    std::fs::create_dir(&shared).unwrap();
    chown_all(&shared, ATTACKER_UID);
    std::fs::create_dir(&cache_dir).unwrap();
    chmod(&cache_dir, 0o700);
    chown_all(&cache_dir, VICTIM_UID);
    // The attacker's directory, open to all so that writes would land.
    std::fs::create_dir(&theirs).unwrap();
    chmod(&theirs, 0o777);
    chown_all(&theirs, ATTACKER_UID);

    let b_name = format!("{}.clc", test_key(1).to_hex());
    run_child(
        victim_command("swap", root.path()),
        std::time::Duration::from_secs(60),
        |step| match step {
            "swap" => {
                std::fs::rename(&cache_dir, &moved).unwrap();
                attacker_symlink(&theirs, &cache_dir);
            }
            "rename" => {
                // Whatever the victim wrote here becomes key B's entry.
                for name in names(&theirs) {
                    if name.ends_with(".clc") {
                        std::fs::rename(theirs.join(&name), theirs.join(&b_name)).unwrap();
                    }
                }
            }
            other => panic!("unknown step {other}"),
        },
    );
    assert_eq!(
        names(&theirs),
        Vec::<String>::new(),
        "the victim wrote into the attacker's directory"
    );
    let mut expected = vec![
        format!("{}.clc", test_key(0).to_hex()),
        format!("{}.clc", test_key(2).to_hex()),
    ];
    expected.sort();
    assert_eq!(names(&moved), expected);
}

/// With no `CUDA_LINK_CACHE_DIR`, `XDG_CACHE_HOME` or `HOME`, the cache
/// falls back to `$TMPDIR/cuda-link-cache-<uid>`, which another user can
/// create first.
///
/// What this proves: a fallback pre-created by another user as a symbolic
/// link, even to a directory that the victim owns, is refused from the
/// first use, so the attacker's later retargeting of the link reaches
/// nothing: no entry is written through it (neither in the victim's
/// directory nor, after the retargeting, in the attacker's), and key B is
/// not served the entry the attacker renamed to B's name. And a fallback
/// pre-created as a plain directory of the other user's is refused too:
/// its planted entry is not served, and the victim writes nothing there.
#[cfg(unix)]
#[test]
fn a_fallback_directory_pre_created_by_another_user_is_refused() {
    let _serial = cuda_link_tests::serial();
    if !running_as_root() {
        cuda_link_tests::skip("needs root to act as two users (CI runs as root)");
        return;
    }
    let root = shared_root();
    let fallback = root.path().join(format!("cuda-link-cache-{VICTIM_UID}"));
    // A directory of the victim's, as its real cache could be.
    let victims = root.path().join("victims");
    std::fs::create_dir(&victims).unwrap();
    chmod(&victims, 0o700);
    chown_all(&victims, VICTIM_UID);
    let theirs = root.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    chmod(&theirs, 0o777);
    chown_all(&theirs, ATTACKER_UID);
    attacker_symlink(&victims, &fallback);

    let b_name = format!("{}.clc", test_key(1).to_hex());
    let mut command = victim_command("fallback", root.path());
    command
        .env_remove("CUDA_LINK_CACHE_DIR")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("HOME")
        .env("TMPDIR", root.path());
    run_child(
        command,
        std::time::Duration::from_secs(60),
        |step| match step {
            "retarget" => attacker_symlink(&theirs, &fallback),
            "rename" => {
                for name in names(&theirs) {
                    if name.ends_with(".clc") {
                        std::fs::rename(theirs.join(&name), theirs.join(&b_name)).unwrap();
                    }
                }
            }
            "directory" => {
                std::fs::remove_file(&fallback).unwrap();
                let planter = LinkCache::new(&fallback).with_memory_tier(false);
                planter.store(&test_key(1), b"planted cubin of B", "");
                chmod(&fallback, 0o777);
                chown_all(&fallback, ATTACKER_UID);
            }
            other => panic!("unknown step {other}"),
        },
    );
    assert_eq!(names(&victims), Vec::<String>::new());
    assert_eq!(names(&theirs), Vec::<String>::new());
    assert_eq!(names(&fallback), [b_name]);
}

/// What this proves: an entry that is a FIFO is refused at once, without
/// blocking the lookup (a plain `open` of a FIFO waits for a writer,
/// forever), and nothing is served.
#[cfg(unix)]
#[test]
fn a_fifo_entry_is_refused_without_blocking() {
    let _serial = cuda_link_tests::serial();
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::OpenOptionsExt;
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(LinkCache::new(dir.path()).with_memory_tier(false));
    let key = test_key(0);
    let fifo = cache.entry_path(&key);
    let c_path = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);

    let (sender, receiver) = std::sync::mpsc::channel();
    let looking = Arc::clone(&cache);
    std::thread::spawn(move || {
        let _ = sender.send(served(&looking, &key));
    });
    match receiver.recv_timeout(std::time::Duration::from_secs(10)) {
        Ok(found) => assert_eq!(found, None),
        Err(_) => {
            // Let the blocked lookup go before failing.
            let _ = std::fs::File::options()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&fifo);
            panic!("the lookup of a FIFO entry blocked for 10 s");
        }
    }
    let stats = cache.stats();
    assert_eq!(
        (stats.refused, stats.hits, stats.misses, stats.bytes_read),
        (1, 0, 1, 0),
        "{stats:?}"
    );
}

/// What this proves: an entry that is a symbolic link is not followed,
/// even to an intact entry of the same key elsewhere: nothing is served.
#[cfg(unix)]
#[test]
fn a_symlinked_entry_is_refused() {
    let _serial = cuda_link_tests::serial();
    let root = tempfile::tempdir().unwrap();
    let key = test_key(0);
    let elsewhere = LinkCache::new(root.path().join("elsewhere")).with_memory_tier(false);
    elsewhere.store(&key, b"cubin behind a link", "");
    assert_eq!(
        served(&elsewhere, &key).as_deref(),
        Some(&b"cubin behind a link"[..])
    );
    let cache = LinkCache::new(root.path().join("cache")).with_memory_tier(false);
    cache.store(&test_key(1), b"another entry", ""); // makes the directory
    std::os::unix::fs::symlink(elsewhere.entry_path(&key), cache.entry_path(&key)).unwrap();
    assert_eq!(served(&cache, &key), None);
    let stats = cache.stats();
    assert_eq!((stats.refused, stats.hits), (1, 0), "{stats:?}");
    // A store replaces the link with an entry of its own.
    cache.store(&key, b"cubin of the key", "");
    assert_eq!(
        served(&cache, &key).as_deref(),
        Some(&b"cubin of the key"[..])
    );
    assert!(
        std::fs::symlink_metadata(cache.entry_path(&key))
            .unwrap()
            .is_file()
    );
}

/// What this proves: a file far over [`LinkCache::MAX_ENTRY_BYTES`] (a
/// sparse terabyte) under an entry's name is refused from its size, before
/// anything is read or allocated for it: the lookup runs in a child whose
/// address space is capped at 16 GiB, and returns at once, as a refusal.
/// Allocating the file's length up front aborted that child.
#[cfg(unix)]
#[test]
fn an_oversized_entry_is_refused_without_reading_it() {
    let _serial = cuda_link_tests::serial();
    let dir = tempfile::tempdir().unwrap();
    let cache = LinkCache::new(dir.path()).with_memory_tier(false);
    let entry = cache.entry_path(&test_key(0));
    std::fs::File::create(&entry)
        .unwrap()
        .set_len(1 << 40)
        .unwrap();
    let mut command = child_command("victim_child");
    command
        .env("CUDA_LINK_CACHE_VICTIM", "oversized")
        .env("CUDA_LINK_CACHE_VICTIM_ROOT", dir.path());
    run_child(command, std::time::Duration::from_secs(60), |step| {
        panic!("unknown step {step}")
    });
    assert_eq!(std::fs::metadata(&entry).unwrap().len(), 1 << 40);
}

/// What this proves: the entry binds its key. An intact entry moved to
/// another key's file name is not served for that key (it is refused, not
/// taken for corrupt), and a new store for the key replaces it.
#[test]
fn an_entry_renamed_to_another_key_is_refused() {
    let _serial = cuda_link_tests::serial();
    let dir = tempfile::tempdir().unwrap();
    let cache = LinkCache::new(dir.path()).with_memory_tier(false);
    let (a, b) = (test_key(0), test_key(1));
    cache.store(&a, b"cubin of A", "log of A");
    cache.store(&b, b"cubin of B", "log of B");
    std::fs::rename(cache.entry_path(&a), cache.entry_path(&b)).unwrap();
    assert_eq!(served(&cache, &b), None);
    assert_eq!(served(&cache, &a), None);
    let stats = cache.stats();
    assert_eq!(
        (stats.refused, stats.hits, stats.corrupt, stats.misses),
        (1, 0, 0, 2),
        "{stats:?}"
    );
    cache.store(&b, b"cubin of B", "log of B");
    assert_eq!(served(&cache, &b).as_deref(), Some(&b"cubin of B"[..]));
}

/// The victim's side of the tests above, in a child process.
#[cfg(unix)]
#[test]
#[ignore = "run in a child process by the tests of another user's attacks"]
fn victim_child() {
    let _serial = cuda_link_tests::serial();
    let Ok(scenario) = std::env::var("CUDA_LINK_CACHE_VICTIM") else {
        return;
    };
    let root = std::path::PathBuf::from(std::env::var_os("CUDA_LINK_CACHE_VICTIM_ROOT").unwrap());
    if let Ok(uid) = std::env::var("CUDA_LINK_CACHE_VICTIM_UID") {
        let uid: u32 = uid.parse().unwrap();
        // SAFETY: plain system calls; the group list goes first, then the
        // group, then the user, after which none of them can come back.
        unsafe {
            assert_eq!(libc::setgroups(0, std::ptr::null()), 0);
            assert_eq!(libc::setgid(uid), 0);
            assert_eq!(libc::setuid(uid), 0);
        }
        // SAFETY: geteuid has no preconditions.
        assert_eq!(unsafe { libc::geteuid() }, uid);
    }
    let (a, b, c) = (test_key(0), test_key(1), test_key(2));
    match scenario.as_str() {
        "swap" => {
            let cache = LinkCache::new(root.join("shared/cache")).with_memory_tier(false);
            cache.store(&a, b"cubin of A", "");
            assert_eq!(served(&cache, &a).as_deref(), Some(&b"cubin of A"[..]));
            ask_attacker("swap");
            cache.store(&c, b"cubin of C", "");
            ask_attacker("rename");
            assert_eq!(
                served(&cache, &b),
                None,
                "key B was served another key's cubin"
            );
            // The cache goes on in the victim's own directory.
            assert_eq!(served(&cache, &c).as_deref(), Some(&b"cubin of C"[..]));
            assert_eq!(served(&cache, &a).as_deref(), Some(&b"cubin of A"[..]));
            let stats = cache.stats();
            assert_eq!((stats.stores, stats.refused), (2, 0), "{stats:?}");
        }
        "fallback" => {
            let cache = LinkCache::open_default();
            assert_eq!(
                cache.dir(),
                root.join(format!("cuda-link-cache-{VICTIM_UID}"))
            );
            cache.store(&a, b"cubin of A", "");
            ask_attacker("retarget");
            cache.store(&c, b"cubin of C", "");
            ask_attacker("rename");
            assert_eq!(served(&cache, &b), None, "key B was served");
            assert_eq!(served(&cache, &a), None);
            let stats = cache.stats();
            assert_eq!(
                (stats.stores, stats.hits, stats.refused),
                (0, 0, 4),
                "{stats:?}"
            );

            ask_attacker("directory");
            let cache = LinkCache::open_default();
            assert_eq!(served(&cache, &b), None, "the planted entry was served");
            cache.store(&c, b"cubin of C", "");
            let stats = cache.stats();
            assert_eq!(
                (stats.stores, stats.hits, stats.refused),
                (0, 0, 2),
                "{stats:?}"
            );
        }
        "oversized" => {
            let limit = libc::rlimit {
                rlim_cur: 16 << 30,
                rlim_max: 16 << 30,
            };
            // SAFETY: a valid limit, for this process only.
            assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) }, 0);
            let cache = LinkCache::new(&root).with_memory_tier(false);
            let started = std::time::Instant::now();
            assert_eq!(served(&cache, &a), None);
            assert!(started.elapsed() < std::time::Duration::from_secs(5));
            let stats = cache.stats();
            assert_eq!(
                (stats.refused, stats.corrupt, stats.bytes_read),
                (1, 0, 0),
                "{stats:?}"
            );
        }
        other => panic!("unknown scenario {other}"),
    }
}

/// Two different nvJitLink files, each loaded by the bare name
/// `libnvJitLink.so` behind a versioned symbolic link (as the system loader
/// finds it through `LD_LIBRARY_PATH`), must give different keys, and the
/// same file the same key.
///
/// What this proves: the key holds the identity (real path, device, inode,
/// size, modification time) of the file that actually holds the library's
/// functions, found with `dladdr`, not of the name asked for, which for a
/// bare name had no size or time: both files gave the same key.
#[cfg(unix)]
#[test]
fn different_nvjitlink_files_behind_one_name_give_different_keys() {
    let _serial = cuda_link_tests::serial();
    let Some((_, library)) = nvjitlink_libraries().into_iter().find(|(m, _)| *m == 13) else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    for (dir, appended) in [("one", &b""[..]), ("two", &b"\0another build"[..])] {
        let dir = root.path().join(dir);
        std::fs::create_dir(&dir).unwrap();
        let mut bytes = std::fs::read(&library).unwrap();
        bytes.extend_from_slice(appended);
        std::fs::write(dir.join("libnvJitLink.so.13"), bytes).unwrap();
        std::os::unix::fs::symlink("libnvJitLink.so.13", dir.join("libnvJitLink.so")).unwrap();
    }
    let key = |dir: &str| {
        let mut command = child_command("identity_child");
        command
            .env("CUDA_LINK_CACHE_IDENTITY_CHILD", "1")
            .env("LD_LIBRARY_PATH", root.path().join(dir));
        let stdout = run_child(command, std::time::Duration::from_secs(120), |step| {
            panic!("unknown step {step}")
        });
        stdout
            .lines()
            .find_map(|line| Some(line.split_once("@@key ")?.1))
            .unwrap()
            .to_owned()
    };
    let one = key("one");
    let two = key("two");
    assert_ne!(one, two, "two different files gave the same key");
    assert_eq!(one, key("one"), "the same file gave two keys");
}

/// Run by `different_nvjitlink_files_behind_one_name_give_different_keys`.
#[cfg(unix)]
#[test]
#[ignore = "run in a child process by different_nvjitlink_files_behind_one_name_give_different_keys"]
fn identity_child() {
    let _serial = cuda_link_tests::serial();
    if std::env::var_os("CUDA_LINK_CACHE_IDENTITY_CHILD").is_none() {
        return;
    }
    // SAFETY: a copy of the pinned nvJitLink wheel, which the parent made.
    let lib = Arc::new(unsafe { NvJitLink::open("libnvJitLink.so") }.unwrap());
    let linker = Linker::with_nvjitlink(lib, LinkerOptions::for_arch(Arch::sm(90))).unwrap();
    println!(
        "@@key {}",
        linker.cache_key(OutputKind::Cubin).unwrap().to_hex()
    );
}
