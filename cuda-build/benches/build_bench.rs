//! One timed `cuda-build` build, for `cargo xtask bench-build`,
//! `bench-remote` and `peer-candle`: `build_bench OUT_DIR CACHE_DIR ARCHS
//! FILE...` (ARCHS comma-separated; one fatbin per file, PTX for the
//! lowest arch; or one `compute_XX`: PTX alone, written as text) prints
//! `ms compiled cached processes remote`, then the build's summary line.
//! `CUDA_BUILD_BENCH_FLAGS` adds NVRTC options (space-separated).
//! `CUDA_BUILD_BENCH_PCH=0` turns NVRTC's precompiled headers off; with
//! the `remote` feature, `CUDA_LINK_CACHE_URL` puts a shared store behind
//! the cache.

// A bench's own switch, not a build script's input.
#![allow(clippy::disallowed_methods)]

use std::time::Instant;

fn main() -> Result<(), cuda_build::BuildError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [out, cache, archs, files @ ..] = args.as_slice() else {
        eprintln!("usage: build_bench OUT_DIR CACHE_DIR ARCHS FILE...");
        std::process::exit(2);
    };
    let start = Instant::now();
    let mut build = cuda_build::Build::new();
    match archs.strip_prefix("compute_") {
        Some(_) => build
            .archs(Vec::<&str>::new())
            .ptx(Some(archs))
            .write_ptx(true),
        None => build.archs(archs.split(',')),
    };
    let flags = std::env::var("CUDA_BUILD_BENCH_FLAGS").unwrap_or_default();
    for flag in flags.split_whitespace() {
        build.flag(flag);
    }
    let built = build
        .files(files)
        .per_file(true)
        .out_dir(out)
        .cache_dir(cache)
        .cargo_metadata(false)
        .precompiled_headers(std::env::var("CUDA_BUILD_BENCH_PCH").as_deref() != Ok("0"))
        .compile("kernels")?;
    println!(
        "{:.1} {} {} {} {}",
        start.elapsed().as_secs_f64() * 1e3,
        built.compiled,
        built.cached,
        built.processes,
        built.remote
    );
    println!("{}", built.summary());
    Ok(())
}
