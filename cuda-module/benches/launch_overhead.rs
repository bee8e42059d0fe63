//! Per-launch overhead of the checked launch (`Kernel::launch_on`) against
//! cudarc's `launch_builder`, on the same kernel, stream and memory.
//!
//! Both queue `BATCH` launches of an empty kernel, then synchronize; the
//! two alternate, ABBA, for `ROUNDS` rounds, and the median of the
//! per-round ratios is printed, with their interquartile range and each
//! side's median time per launch.
//! Run by `cargo xtask test-gpu`'s bundle (`launch_overhead.sh`).

use std::time::{Duration, Instant};

use cuda_link::{Arch, Linker, LinkerOptions, ObjectCode, OutputKind};
use cuda_link_tests::nvrtc;
use cuda_module::{Context, LaunchConfig, Library};
use cudarc::driver::{CudaContext, PushKernelArg};

const NOOP_CU: &str = "extern \"C\" __global__ void touch(float *y, float a, int n)\n\
    { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n && a < 0.0f) y[i] = a; }\n";
const BATCH: usize = 2000;
const ROUNDS: usize = 30;

fn median(values: &mut [f64]) -> f64 {
    quantile(values, 0.5)
}

/// The `q` quantile (0 to 1) of `values`, the nearest rank.
fn quantile(values: &mut [f64], q: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    values[((values.len() - 1) as f64 * q).round() as usize]
}

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let cudarc = CudaContext::new(0)?;
    let stream = cudarc.default_stream();
    let ptx = nvrtc(NOOP_CU, "touch.cu", &["-arch=compute_90"])?
        .ptx
        .ok_or("no PTX")?;
    let mut linker = Linker::new(LinkerOptions::for_arch(Arch::sm(90)).no_cache(true))?;
    linker.add(&ObjectCode::from_ptx(ptx, "touch.ptx")?)?;
    let cubin = linker.link(OutputKind::Cubin)?;

    // Ours: a library, the kernel, a context over cudarc's.
    let context = Context::from_cudarc(&cudarc);
    let library = Library::load(&cubin)?;
    let ours = library.kernel("touch")?;
    // cudarc's: the same cubin through its own module loader.
    let module = cudarc.load_module(cudarc::nvrtc::Ptx::from_binary(cubin.as_bytes().to_vec()))?;
    let theirs = module.load_function("touch")?;

    let mut y = stream.alloc_zeros::<f32>(1024)?;
    let (a, n) = (1.0f32, 1024i32);
    let config = LaunchConfig::for_elements(1024, 256);
    let cudarc_config = cudarc::driver::LaunchConfig::from(config);

    let run_ours =
        |y: &mut cudarc::driver::CudaSlice<f32>| -> Result<Duration, Box<dyn std::error::Error + Send + Sync>> {
            let start = Instant::now();
            for _ in 0..BATCH {
                let mut launch = ours.launch_on(&context, &stream)?;
                launch.slice_mut(y).arg(&a).arg(&n);
                // SAFETY: touch writes at most y's 1024 floats (never, a > 0).
                unsafe { launch.launch(config) }?;
            }
            stream.synchronize()?;
            Ok(start.elapsed())
        };
    let run_theirs =
        |y: &mut cudarc::driver::CudaSlice<f32>| -> Result<Duration, Box<dyn std::error::Error + Send + Sync>> {
            let start = Instant::now();
            for _ in 0..BATCH {
                let mut launch = stream.launch_builder(&theirs);
                launch.arg(&mut *y).arg(&a).arg(&n);
                // SAFETY: as above.
                unsafe { launch.launch(cudarc_config) }?;
            }
            stream.synchronize()?;
            Ok(start.elapsed())
        };
    // Warm-up: first launches load code and fill caches on both sides.
    run_ours(&mut y)?;
    run_theirs(&mut y)?;

    let (mut ratios, mut ours_us, mut theirs_us) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let (o, t) = if round % 2 == 0 {
            let o = run_ours(&mut y)?;
            (o, run_theirs(&mut y)?)
        } else {
            let t = run_theirs(&mut y)?;
            (run_ours(&mut y)?, t)
        };
        ratios.push(o.as_secs_f64() / t.as_secs_f64());
        ours_us.push(o.as_secs_f64() * 1e6 / BATCH as f64);
        theirs_us.push(t.as_secs_f64() * 1e6 / BATCH as f64);
    }
    println!(
        "checked launch {:.3} µs, cudarc launch_builder {:.3} µs per launch; ratio (median of {ROUNDS} ABBA rounds of {BATCH}) {:.3}, interquartile {:.3} – {:.3}",
        median(&mut ours_us),
        median(&mut theirs_us),
        median(&mut ratios),
        quantile(&mut ratios, 0.25),
        quantile(&mut ratios, 0.75),
    );
    Ok(())
}
