//! `cargo bench -p cuda-link --bench multi_arch`: the figures of issue 28,
//! as ratios measured side by side in one run (ABBA pairs, the median of
//! per-pair ratios):
//!
//! - a three-arch link (`link_fatbin`: sm_80, sm_90, sm_100, one thread
//!   each) against the same three links one after the other;
//! - the pure-Rust fatbin writer against nvFatbin, on the same entries.

use std::sync::Arc;
use std::time::Instant;

use cuda_link::inspect::Compression;
use cuda_link::{Arch, FatbinBuilder, LinkTarget, Linker, LinkerOptions, ObjectCode, OutputKind};
use cuda_link_tests::fixtures;

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// `(median ratio first / second, min, max)` over `rounds` ABBA pairs.
fn paired(rounds: usize, mut first: impl FnMut(), mut second: impl FnMut()) -> (f64, f64, f64) {
    let time = |f: &mut dyn FnMut()| {
        let start = Instant::now();
        f();
        start.elapsed().as_secs_f64()
    };
    first();
    second();
    let mut ratios = Vec::new();
    for round in 0..rounds {
        let (a, b) = if round % 2 == 0 {
            let a = time(&mut first);
            (a, time(&mut second))
        } else {
            let b = time(&mut second);
            (time(&mut first), b)
        };
        ratios.push(a / b);
    }
    let m = median(&mut ratios);
    (m, ratios[0], ratios[ratios.len() - 1])
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let (Some(path), Some(ltoir)) = (
        cuda_link_tests::redist("CUDA_LINK_NVJITLINK13_PATH"),
        fixtures::ltoir(fixtures::HEAVY_CU, "heavy.cu", "sm_80"),
    ) else {
        eprintln!("SKIPPED: run through `cargo xtask bench`");
        return;
    };
    // SAFETY: the pinned nvJitLink wheel `cargo xtask` provisions.
    let lib = Arc::new(unsafe { cuda_link::NvJitLink::open(&path) }.unwrap());
    let input = ObjectCode::from_ltoir(ltoir, "heavy.ltoir").unwrap();
    let arches = [Arch::sm(80), Arch::sm(90), Arch::sm(100)];
    let cores = std::thread::available_parallelism().map_or(1, usize::from);

    let options = LinkerOptions::default()
        .targets(arches.map(LinkTarget::Cubin))
        .no_cache(true);
    let parallel = || {
        let mut linker = Linker::with_nvjitlink(Arc::clone(&lib), options.clone()).unwrap();
        linker.add(&input).unwrap();
        linker.link_fatbin().unwrap();
    };
    let sequential = || {
        for arch in arches {
            let options = LinkerOptions::for_arch(arch).no_cache(true);
            let mut linker = Linker::with_nvjitlink(Arc::clone(&lib), options).unwrap();
            linker.add(&input).unwrap();
            linker.link(OutputKind::Cubin).unwrap();
        }
    };
    let (ratio, low, high) = paired(6, parallel, sequential);
    println!(
        "three-arch link / three sequential links: {ratio:.2}x ({low:.2}x to {high:.2}x, \
         6 ABBA pairs, {cores} cores)"
    );

    let cubins: Vec<ObjectCode> = arches
        .iter()
        .map(|&arch| {
            let mut linker =
                Linker::with_nvjitlink(Arc::clone(&lib), LinkerOptions::for_arch(arch)).unwrap();
            linker.add(&input).unwrap();
            linker.link(OutputKind::Cubin).unwrap()
        })
        .collect();
    let Some(nvfatbin_path) = cuda_link_tests::redist("CUDA_LINK_NVFATBIN13_PATH") else {
        return;
    };
    // SAFETY: the pinned nvFatbin wheel `cargo xtask` provisions.
    let nvfatbin = unsafe { nvfatbin_sys::NvFatbin::open(nvfatbin_path) }.unwrap();
    for codec in [Compression::None, Compression::Lz4, Compression::Zstd] {
        let mut builder = FatbinBuilder::new().compression(codec);
        for cubin in &cubins {
            builder = builder.add(cubin, None).unwrap();
        }
        let (ratio, low, high) = paired(
            40,
            || {
                builder.build("ours").unwrap();
            },
            || {
                builder.build_with(&nvfatbin, "nvFatbin").unwrap();
            },
        );
        println!(
            "fatbin of 3 cubins, {}: pure Rust / nvFatbin {ratio:.2}x ({low:.2}x to {high:.2}x, \
             40 ABBA pairs)",
            codec.name()
        );
    }
}
