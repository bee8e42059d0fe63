//! Where the time of a small link + load + first lookup goes, step by
//! step, for `cargo xtask bench-gpu` (its `phases.sh`).
//!
//! Usage, on a GPU machine, after `gpu_bench prepare DATA_DIR`:
//! `gpu_phases DATA_DIR` links `small.ptx` for sm_90, loads the cubin and
//! looks up `saxpy`, 40 times per isolation setting, with the `tracing`
//! spans of cuda-link and cuda-module recorded; then the same with the
//! link a warm hit of the persistent cache (its in-memory tier off: open,
//! read, checksum, validation). It prints, per span path, the median time
//! per iteration (JSON on stdout, a table on stderr).

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

use std::sync::Arc;

use cuda_link::{Arch, Isolation, LinkCache, Linker, LinkerOptions, ObjectCode, OutputKind};
use cuda_link_tests::phases::PhaseTimes;
use cuda_module::{Context, Library};

const RUNS: usize = 40;

fn main() {
    let data_dir = PathBuf::from(std::env::args().nth(1).expect("usage: gpu_phases DATA_DIR"));
    let ptx = std::fs::read(data_dir.join("small.ptx")).expect("run `gpu_bench prepare` first");
    let context = Context::primary(0).unwrap();
    let _current = context.make_current().unwrap();
    let times = PhaseTimes::install();

    // A fresh cache, filled by the warm-up of its configuration.
    let cache_dir = data_dir.join("phases-cache");
    let _ = std::fs::remove_dir_all(&cache_dir);
    let persistent = Arc::new(LinkCache::new(&cache_dir).with_memory_tier(false));
    let mut report = serde_json::Map::new();
    for (label, isolation, cache) in [
        ("isolated (default)", Isolation::default(), None),
        ("in-process", Isolation::InProcess, None),
        (
            "warm persistent hit",
            Isolation::default(),
            Some(&persistent),
        ),
    ] {
        let once = || {
            let _e2e = tracing::debug_span!("e2e").entered();
            let ptx = ObjectCode::from_ptx(ptx.clone(), "saxpy.cu").unwrap();
            let options = LinkerOptions::for_arch(Arch::sm(90))
                .no_cache(cache.is_none())
                .isolation(isolation);
            let mut linker = Linker::new(options).unwrap();
            if let Some(cache) = cache {
                linker = linker.with_cache(Arc::clone(cache));
            }
            linker.add(&ptx).unwrap();
            let cubin = linker.link(OutputKind::Cubin).unwrap();
            let library = Library::load(&cubin).unwrap();
            black_box(library.kernel("saxpy").unwrap().function(&context).unwrap());
        };
        for _ in 0..3 {
            once();
        }
        times.take();
        let mut per_path: std::collections::BTreeMap<String, Vec<Duration>> = Default::default();
        for _ in 0..RUNS {
            once();
            for (path, (total, _)) in times.take() {
                per_path.entry(path).or_default().push(total);
            }
        }
        eprintln!("== {label}: median per iteration of {RUNS}");
        let mut medians = serde_json::Map::new();
        for (path, mut samples) in per_path {
            samples.sort();
            let median = samples[samples.len() / 2];
            let depth = path.matches('/').count();
            let name = path.rsplit('/').next().unwrap_or(&path);
            eprintln!(
                "{:indent$}{name:<24} {:>9.1} µs",
                "",
                median.as_secs_f64() * 1e6,
                indent = 2 * depth
            );
            medians.insert(path, median.as_secs_f64().into());
        }
        report.insert(label.into(), medians.into());
    }
    println!("{}", serde_json::Value::Object(report));
}
