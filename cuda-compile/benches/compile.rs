//! `cargo bench -p cuda-compile --bench compile`: the compile figures of
//! `docs/benchmarks.md`, as ratios measured side by side in one run.
//!
//! - cold compile through `Compiler` against the same NVRTC calls made
//!   raw: ABBA pairs, the median of per-pair ratios;
//! - a warm cache hit against a cold compile of the fp16 + CCCL + cub
//!   kernel;
//! - eight programs compiled on 1, 2 and 4 threads.
//!
//! NVRTC 13.5 from `CUDA_LINK_NVRTC13_PATH` (set by `cargo xtask bench`
//! and `cargo xtask test`), else `CUDA_LINK_NVRTC_PATH`.

use std::ffi::{CString, c_char};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cuda_compile::{Compiler, Program, ProgramOptions, Target};
use cuda_link::{Arch, LinkCache};
use nvrtc_sys::{Nvrtc, sys::nvrtcResult};

const SAXPY: &str = r#"
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"#;

const REDUCE: &str = r#"
#include <cuda_fp16.h>
#include <cub/block/block_reduce.cuh>
__global__ void sum(const __half *x, float *out) {
    using Reduce = cub::BlockReduce<float, 128>;
    __shared__ typename Reduce::TempStorage storage;
    float total = Reduce(storage).Sum(__half2float(x[threadIdx.x]));
    if (threadIdx.x == 0) *out = total;
}
"#;

fn nvrtc() -> Option<Arc<Nvrtc>> {
    let path = std::env::var_os("CUDA_LINK_NVRTC13_PATH")
        .or_else(|| std::env::var_os("CUDA_LINK_NVRTC_PATH"))?;
    // SAFETY: the pinned NVRTC wheel that `cargo xtask` provisions.
    Some(Arc::new(unsafe { Nvrtc::open(path) }.expect("NVRTC loads")))
}

/// The same compile as `Compiler::compile` makes for `SAXPY` with
/// `options`, as raw NVRTC calls: create, compile, read the cubin, destroy.
fn raw_compile(nvrtc: &Nvrtc, args: &[CString]) -> Vec<u8> {
    let source = CString::new(SAXPY).unwrap();
    let pointers: Vec<*const c_char> = args.iter().map(|a| a.as_ptr()).collect();
    let mut program = std::ptr::null_mut();
    let ok = |result: Result<nvrtcResult, _>| assert_eq!(result, Ok(nvrtcResult::NVRTC_SUCCESS));
    // SAFETY: out-pointers, C strings and arrays alive for each call; the
    // program is destroyed once; the buffer has the size NVRTC reported.
    unsafe {
        ok(nvrtc.nvrtcCreateProgram(
            &mut program,
            source.as_ptr(),
            c"saxpy.cu".as_ptr(),
            0,
            std::ptr::null(),
            std::ptr::null(),
        ));
        ok(nvrtc.nvrtcCompileProgram(program, pointers.len() as i32, pointers.as_ptr()));
        let mut size = 0;
        ok(nvrtc.nvrtcGetCUBINSize(program, &mut size));
        let mut cubin = vec![0u8; size];
        ok(nvrtc.nvrtcGetCUBIN(program, cubin.as_mut_ptr().cast()));
        ok(nvrtc.nvrtcDestroyProgram(&mut program));
        cubin
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn time(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

fn cold_overhead(nvrtc: &Arc<Nvrtc>) {
    // Every compile compiles: the in-memory tier would answer repeats.
    cuda_link::MemoryCache::set_capacity(0);
    let compiler = Compiler::with_nvrtc(Arc::clone(nvrtc));
    let options = ProgramOptions::for_arch(Arch::sm(90))
        .no_builtin_headers(true)
        .no_bundled_headers(true);
    let program = Program::new(SAXPY, "saxpy.cu");
    let args = [CString::new("-arch=sm_90").unwrap()];
    let ours = || {
        compiler.compile(&program, Target::Cubin, &options).unwrap();
    };
    let raw = || {
        raw_compile(nvrtc, &args);
    };
    ours();
    raw();
    let mut ratios = Vec::new();
    let (mut ours_times, mut raw_times) = (Vec::new(), Vec::new());
    for round in 0..20 {
        let (a, b) = if round % 2 == 0 {
            let a = time(ours);
            (a, time(raw))
        } else {
            let b = time(raw);
            (time(ours), b)
        };
        ratios.push(a.as_secs_f64() / b.as_secs_f64());
        ours_times.push(a.as_secs_f64());
        raw_times.push(b.as_secs_f64());
    }
    cuda_link::MemoryCache::set_capacity(cuda_link::MemoryCache::DEFAULT_BYTES);
    let overhead = (median(&mut ratios) - 1.0) * 100.0;
    println!(
        "cold compile (saxpy cubin): ours {:.2} ms, raw NVRTC {:.2} ms, overhead {overhead:+.2} % \
         (median of 20 ABBA pairs; spread {:+.1} % to {:+.1} %)",
        median(&mut ours_times) * 1e3,
        median(&mut raw_times) * 1e3,
        (ratios[0] - 1.0) * 100.0,
        (ratios[ratios.len() - 1] - 1.0) * 100.0,
    );
}

fn warm_hit(nvrtc: &Arc<Nvrtc>) {
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(LinkCache::new(dir.path()).with_memory_tier(false));
    let compiler = Compiler::with_nvrtc(Arc::clone(nvrtc)).with_cache(cache);
    let uncached = Compiler::with_nvrtc(Arc::clone(nvrtc));
    // Without a cache, repeats come from the in-memory tier.
    let remembered = Compiler::with_nvrtc(Arc::clone(nvrtc));
    let options = ProgramOptions::for_arch(Arch::sm(90));
    let program = Program::new(REDUCE, "reduce.cu");
    // Installs the bundled headers, outside the timings.
    compiler.compile(&program, Target::Cubin, &options).unwrap();
    let mut warm: Vec<f64> = (0..200)
        .map(|_| {
            time(|| {
                let hit = compiler.compile(&program, Target::Cubin, &options).unwrap();
                assert!(hit.from_cache);
            })
            .as_secs_f64()
        })
        .collect();
    cuda_link::MemoryCache::set_capacity(0);
    let mut cold: Vec<f64> = (0..3)
        .map(|_| {
            time(|| {
                uncached.compile(&program, Target::Cubin, &options).unwrap();
            })
            .as_secs_f64()
        })
        .collect();
    cuda_link::MemoryCache::set_capacity(cuda_link::MemoryCache::DEFAULT_BYTES);
    remembered
        .compile(&program, Target::Cubin, &options)
        .unwrap();
    let mut memory: Vec<f64> = (0..200)
        .map(|_| {
            time(|| {
                let hit = remembered
                    .compile(&program, Target::Cubin, &options)
                    .unwrap();
                assert!(hit.from_cache);
            })
            .as_secs_f64()
        })
        .collect();
    // The include scan alone, as `Compiler::dependencies` runs it: a new
    // program's first scan, its second (which sets the watches up), and
    // its third (remembered); medians over 20 programs.
    let mut scans: [Vec<f64>; 3] = Default::default();
    for n in 0..20 {
        let program = Program::new(format!("{REDUCE}// {n}\n"), "reduce.cu");
        for times in &mut scans {
            times.push(
                time(|| _ = remembered.dependencies(&program, &options).unwrap()).as_secs_f64(),
            );
        }
    }
    let [first, second, third] = scans.map(|mut times| median(&mut times));
    println!(
        "fp16 + cub include scan: first {:.2} ms, second (watching) {:.2} ms, third (remembered) {:.1} µs",
        first * 1e3,
        second * 1e3,
        third * 1e6
    );
    let (cold, warm, memory) = (median(&mut cold), median(&mut warm), median(&mut memory));
    println!(
        "fp16 + cub cubin: cold {:.0} ms, persistent hit {:.1} µs ({:.0}×), in-memory hit {:.1} µs \
         ({:.0}×) (median of 3 cold, 200 warm each)",
        cold * 1e3,
        warm * 1e6,
        cold / warm,
        memory * 1e6,
        cold / memory
    );
}

fn threads(nvrtc: &Arc<Nvrtc>) {
    let options = ProgramOptions::for_arch(Arch::sm(90));
    let programs: Vec<Program> = (0..8)
        .map(|i| {
            Program::new(
                SAXPY.replace("saxpy", &format!("saxpy{i}")),
                format!("p{i}.cu"),
            )
        })
        .collect();
    let run = |count: usize| {
        let start = Instant::now();
        std::thread::scope(|scope| {
            for chunk in programs.chunks(programs.len().div_ceil(count)) {
                let compiler = Compiler::with_nvrtc(Arc::clone(nvrtc));
                let options = &options;
                scope.spawn(move || {
                    for program in chunk {
                        compiler.compile(program, Target::Cubin, options).unwrap();
                    }
                });
            }
        });
        start.elapsed().as_secs_f64()
    };
    run(1);
    let one = run(1);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    for count in [1, 2, 4] {
        let elapsed = if count == 1 { one } else { run(count) };
        println!(
            "8 programs on {count} thread(s): {:.0} ms, {:.2}× of one thread ({cores} cores)",
            elapsed * 1e3,
            one / elapsed
        );
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let Some(nvrtc) = nvrtc() else {
        eprintln!("SKIPPED: CUDA_LINK_NVRTC13_PATH is unset; run through `cargo xtask bench`");
        return;
    };
    println!(
        "NVRTC {} ({})",
        nvrtc.version_string(),
        nvrtc.path().display()
    );
    // `cargo bench -p cuda-compile --bench compile -- warm_hit` runs one.
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wanted = |name: &str| only.is_empty() || only.iter().any(|o| name.contains(o.as_str()));
    if wanted("cold_overhead") {
        cold_overhead(&nvrtc);
    }
    if wanted("warm_hit") {
        warm_hit(&nvrtc);
    }
    if wanted("threads") {
        threads(&nvrtc);
    }
}
