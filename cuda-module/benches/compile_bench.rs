//! `compile-bench CACHE_DIR [INCLUDE_DIR]`, bundled by `cargo xtask
//! test-gpu`: a warm compile-cache hit plus load and first lookup, the
//! figure `xtask/bench/compile_bench.py` measures for cuda.core; one JSON line
//! of medians. With `INCLUDE_DIR`, the kernel includes `saxpy_op.h` from
//! that folder, so a hit also checks what the include could reach.
//! `compile_bench.sh` runs the two in ABBA pairs.

use std::sync::Arc;
use std::time::Instant;

use cuda_compile::{Compiler, Program, ProgramOptions, Target};
use cuda_link::{Arch, LinkCache};
use cuda_module::{Context, Library};

/// The kernel both sides compile: the same text as the Python side's.
const SOURCE: &str = r#"
template <typename T>
__global__ void saxpy(T a, const T *x, T *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
// Instantiated in the source: cuda.core's cache refuses name expressions.
template __global__ void saxpy<float>(float, const float *, float *, int);
"#;

/// The same kernel with its body in a header of the include folder.
const SOURCE_WITH_INCLUDE: &str = r#"
#include "saxpy_op.h"
template <typename T>
__global__ void saxpy(T a, const T *x, T *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = saxpy_op(a, x[i], y[i]);
}
template __global__ void saxpy<float>(float, const float *, float *, int);
"#;

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let context = Context::primary(0)?;
    let _current = context.make_current()?;
    let arch = cuda_link::current_device_arch().unwrap_or(Arch::sm(90));
    let mut args = std::env::args().skip(1);
    let dir = args.next().unwrap_or_else(|| "compile-cache".into());
    let include_dir = args.next();
    let compiler = Compiler::new()?.with_cache(Arc::new(LinkCache::new(dir)));
    let mut options = ProgramOptions::for_arch(arch);
    let source = match &include_dir {
        Some(folder) => {
            options.include_path.push(folder.clone());
            SOURCE_WITH_INCLUDE
        }
        None => SOURCE,
    };
    let program = Program::new(source, "saxpy.cu").name_expression("saxpy<float>");
    let once = || -> Result<(f64, bool), Box<dyn std::error::Error>> {
        let start = Instant::now();
        let compiled = compiler.compile(&program, Target::Cubin, &options)?;
        let library = Library::load(&compiled.code)?;
        let kernel = library.kernel("saxpy<float>")?;
        kernel.function(&context)?;
        Ok((start.elapsed().as_secs_f64(), compiled.from_cache))
    };
    let (cold, hit) = once()?;
    let mut warm = Vec::new();
    for _ in 0..50 {
        let (seconds, hit) = once()?;
        assert!(hit, "a warm compile must be a cache hit");
        warm.push(seconds);
    }
    println!(
        "{{\"side\": \"rust\", \"includes\": {}, \"first_s\": {cold}, \"first_was_hit\": {hit}, \"warm_hit_load_lookup_s\": {}}}",
        include_dir.is_some(),
        median(warm)
    );
    Ok(())
}
