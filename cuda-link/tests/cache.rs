//! The persistent link cache with real nvJitLink links.

use std::path::Path;
use std::sync::Arc;

use cuda_link::cache::CacheKey;
use cuda_link::{LinkCache, Linker, LinkerOptions, ObjectCode, OutputKind};
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
    let options = LinkerOptions {
        verbose: true,
        ..LinkerOptions::for_arch("sm_90")
    };
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
    let sm90 = LinkerOptions::for_arch("sm_90");
    link_with(&lib13, &cache, sm90.clone(), &input);

    // One byte of the input: a space in the PTX changes nothing but the key.
    let mut bytes = input.as_bytes().to_vec();
    bytes.insert(bytes.len() - 1, b' ');
    let changed = ObjectCode::from_ptx(bytes, "saxpy.ptx").unwrap();
    link_with(&lib13, &cache, sm90.clone(), &changed);
    // One option.
    link_with(
        &lib13,
        &cache,
        LinkerOptions {
            lineinfo: true,
            ..sm90.clone()
        },
        &input,
    );
    // The library version.
    link_with(&lib12, &cache, sm90.clone(), &input);
    let stats = cache.stats();
    assert_eq!((stats.misses, stats.hits), (4, 0), "{stats:?}");
    assert_eq!(entries(dir.path()).len(), 4);

    // Options are normalised: the same set in another order hits.
    let a = ["-arch=sm_90".to_owned(), "-lineinfo".to_owned()];
    let b = ["-lineinfo".to_owned(), "-arch=sm_90".to_owned()];
    let inputs = std::slice::from_ref(&input);
    assert_eq!(
        CacheKey::new("nvJitLink 13.5", OutputKind::Cubin, &a, inputs),
        CacheKey::new("nvJitLink 13.5", OutputKind::Cubin, &b, inputs)
    );
    assert_ne!(
        CacheKey::new("nvJitLink 13.5", OutputKind::Cubin, &a, inputs),
        CacheKey::new("nvJitLink 13.5", OutputKind::Ptx, &a, inputs)
    );
}

#[test]
fn corrupt_and_truncated_entries_are_relinked() {
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(LinkCache::new(dir.path()));
    let options = LinkerOptions::for_arch("sm_90");
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

#[test]
fn eight_threads_race_on_one_key() {
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(LinkCache::new(dir.path()));
    let reference = Linker::with_nvjitlink(Arc::clone(&lib), LinkerOptions::for_arch("sm_90"))
        .unwrap()
        .add(&input)
        .unwrap()
        .link(OutputKind::Cubin)
        .unwrap();
    let outputs: Vec<Vec<u8>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                scope.spawn(|| {
                    (0..3)
                        .map(|_| {
                            link_with(&lib, &cache, LinkerOptions::for_arch("sm_90"), &input)
                                .as_bytes()
                                .to_vec()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert_eq!(outputs.len(), 24);
    assert!(outputs.iter().all(|o| o == reference.as_bytes()));
    let stats = cache.stats();
    assert_eq!(stats.hits + stats.misses, 24);
    assert_eq!(stats.corrupt, 0);
    assert_eq!(entries(dir.path()).len(), 1);
}

/// Run as a child process by `two_processes_race_on_one_key`.
#[test]
fn child_process_links_through_the_cache() {
    let Some(dir) = std::env::var_os("CUDA_LINK_CACHE_CHILD_DIR") else {
        return;
    };
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let cache = Arc::new(LinkCache::new(dir));
    for _ in 0..5 {
        let linked = link_with(&lib, &cache, LinkerOptions::for_arch("sm_90"), &input);
        assert_eq!(linked.inspect().unwrap().kernels(), ["saxpy"]);
    }
    assert_eq!(cache.stats().corrupt, 0);
}

#[test]
fn two_processes_race_on_one_key() {
    let (Some(input), Some(lib)) = (saxpy(), nvjitlink(13)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let spawn = || {
        std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "child_process_links_through_the_cache",
                "--test-threads=1",
            ])
            .env("CUDA_LINK_CACHE_CHILD_DIR", dir.path())
            .spawn()
            .unwrap()
    };
    let children = [spawn(), spawn()];
    let cache = Arc::new(LinkCache::new(dir.path()));
    let ours = link_with(&lib, &cache, LinkerOptions::for_arch("sm_90"), &input);
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let again = link_with(&lib, &cache, LinkerOptions::for_arch("sm_90"), &input);
    assert_eq!(ours.as_bytes(), again.as_bytes());
    assert_eq!(entries(dir.path()).len(), 1);
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
        let linked = link_with(&lib, &cache, LinkerOptions::for_arch("sm_90"), &input);
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
        link_with(&lib, &probe, LinkerOptions::for_arch("sm_90"), &input);
        std::fs::metadata(&entries(probe.dir())[0]).unwrap().len()
    };
    // Room for two entries of about this size.
    let cache = Arc::new(LinkCache::new(dir.path().join("lru")).with_max_bytes(one * 2 + one / 2));
    let options = |registers| LinkerOptions {
        max_register_count: Some(registers),
        ..LinkerOptions::for_arch("sm_90")
    };
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
