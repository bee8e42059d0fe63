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
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(LinkCache::new(dir.path()));
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

#[test]
fn any_change_misses() {
    let (Some(input), Some(lib13)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let Some(lib12) = nvjitlink(12) else { return };
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(LinkCache::new(dir.path()));
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
        CacheKey::new("nvJitLink 13.5", OutputKind::Cubin, &a, inputs),
        CacheKey::new("nvJitLink 13.5", OutputKind::Cubin, &b, inputs)
    );
    assert_ne!(
        CacheKey::new("nvJitLink 13.5", OutputKind::Cubin, &a, inputs),
        CacheKey::new("nvJitLink 13.5", OutputKind::Ptx, &a, inputs)
    );
}

/// `optimization_level: 3` plus a raw `-O0` links at -O0, and the reverse
/// at -O3: the two must not share an entry.
#[test]
fn order_dependent_flags_miss() {
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(LinkCache::new(dir.path()));
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
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(LinkCache::new(dir.path()));
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
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(LinkCache::new(dir.path()));
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
    let cache = Arc::new(LinkCache::new(dir.path()));
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
    use std::os::unix::fs::{PermissionsExt, chown};
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    if !running_as_root() {
        eprintln!("skipped: chown needs root (CI runs as root)");
        return;
    }
    let options = LinkerOptions::for_arch(Arch::sm(90));
    let key = key_of(&lib, options.clone(), std::slice::from_ref(&input));
    let plant = |dir: &Path| {
        let planter = LinkCache::new(dir);
        planter.store(&key, b"planted", "");
        entries(dir).remove(0)
    };
    let outcome = |dir: &Path| {
        let cache = Arc::new(LinkCache::new(dir));
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
    use std::os::unix::fs::PermissionsExt;
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("new/cache");
    let cache = Arc::new(LinkCache::new(&dir));
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
    let cache = Arc::new(LinkCache::new(probe.path()));
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
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let bound = race_bound(&lib, &input);
    let cache = Arc::new(LinkCache::new(dir.path()).with_max_bytes(bound));
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
    let cache = Arc::new(LinkCache::new(dir).with_max_bytes(bound));
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
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let bound = race_bound(&lib, &input);
    let spawn = || {
        std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "child_process_links_through_the_cache",
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
    let cache = Arc::new(LinkCache::new(dir.path()).with_max_bytes(bound));
    let extra = race_options(0).lineinfo(true);
    link_with(&lib, &cache, extra, &input);
    let (_, bytes) = cache.disk_usage().unwrap();
    assert!(bytes <= bound, "{bytes} > {bound}");
    assert_eq!(cache.stats().corrupt, 0);
}

#[test]
fn an_unwritable_directory_still_links() {
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // A path below a regular file cannot be created, even by root.
    let blocker = dir.path().join("not-a-directory");
    std::fs::write(&blocker, b"").unwrap();
    let cache = Arc::new(LinkCache::new(blocker.join("cache")));
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
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let one = {
        let probe = Arc::new(LinkCache::new(dir.path().join("probe")));
        link_with(&lib, &probe, LinkerOptions::for_arch(Arch::sm(90)), &input);
        std::fs::metadata(&entries(probe.dir())[0]).unwrap().len()
    };
    // Room for two entries of about this size.
    let cache = Arc::new(LinkCache::new(dir.path().join("lru")).with_max_bytes(one * 2 + one / 2));
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
