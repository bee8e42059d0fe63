//! Two runners, each with a cache folder of its own, sharing one real
//! `redis-server`: the second builds nothing NVRTC must compile, and its
//! fatbin is the first one's.

#![cfg(feature = "remote-redis")]

use std::path::Path;

use cuda_build::Build;

const KERNEL_CU: &str = "#include <stdint.h>\n\
    extern \"C\" __global__ void add(float *y, const float *x, int64_t n) {\n\
      int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n\
      if (i < n) y[i] += x[i];\n}\n";

fn have_libraries() -> bool {
    cuda_link_tests::redist("CUDA_LINK_NVRTC_PATH").is_some()
        && cuda_link_tests::redist("CUDA_LINK_NVJITLINK_PATH").is_some()
}

/// One runner: the shared kernel, its own output and cache folders.
fn runner(kernels: &Path, dir: &Path, url: &str) -> Build {
    Build::new()
        .file(kernels.join("add.cu"))
        .archs(["sm_80", "sm_90"])
        .out_dir(dir.join("out"))
        .cache_dir(dir.join("cache"))
        .cache_url(url)
        .cache_signing_key("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
        .cargo_metadata(false)
        .clone()
}

#[test]
fn a_second_runner_takes_every_compile_from_the_shared_store() {
    if !have_libraries() {
        return;
    }
    let Some(redis) = cuda_link_tests::redis::RedisServer::start() else {
        return;
    };
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("add.cu"), KERNEL_CU).unwrap();
    // Written a minute ago: a build leaves no stamp while an input is too
    // recent to tell from an edit during the build.
    let file = std::fs::File::options()
        .append(true)
        .open(project.path().join("add.cu"))
        .unwrap();
    file.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(60))
        .unwrap();

    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let first = runner(project.path(), a.path(), &redis.url())
        .compile("kernels")
        .unwrap();
    assert_eq!(
        (first.compiled, first.remote),
        (2, 0),
        "{}",
        first.summary()
    );
    // The second runner is another machine: nothing of the first in
    // this process's memory.
    cuda_link::MemoryCache::clear();
    let second = runner(project.path(), b.path(), &redis.url())
        .compile("kernels")
        .unwrap();
    assert_eq!(
        (second.compiled, second.cached, second.remote),
        (0, 2, 2),
        "{}",
        second.summary()
    );
    assert!(
        second.summary().contains("2 from the shared store"),
        "{}",
        second.summary()
    );
    assert_eq!(
        std::fs::read(&first.fatbins[0]).unwrap(),
        std::fs::read(&second.fatbins[0]).unwrap()
    );
}

/// A read-only runner (a pull request's) publishes nothing.
#[test]
fn a_read_only_runner_publishes_nothing() {
    if !have_libraries() {
        return;
    }
    let Some(redis) = cuda_link_tests::redis::RedisServer::start() else {
        return;
    };
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("add.cu"), KERNEL_CU).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let built = runner(project.path(), dir.path(), &redis.url())
        .cache_read_only(true)
        .compile("kernels")
        .unwrap();
    assert_eq!(built.compiled, 2);
    assert!(redis.keys().is_empty(), "{:?}", redis.keys());
}
