//! The cudarc path: link inline PTX with cuda-link (re-exported as
//! `cuda_module::cuda_link`), load it with `Library::load`, launch saxpy on
//! a cudarc stream with cudarc memory (each argument checked against the
//! kernel's parameters), copy back and check every number. Needs a GPU:
//! `cargo run -p cuda-module --features cudarc --example saxpy_cudarc`.
//! `saxpy.rs` is the same without cudarc.

use cuda_module::Library;
use cuda_module::cuda_link::{Linker, LinkerOptions, ObjectCode, OutputKind};
use cudarc::driver::{CudaContext, LaunchConfig};

/// `saxpy(float a, const float *x, float *y, int n)`: `y[i] = a * x[i] + y[i]`,
/// shared by both saxpy examples.
const SAXPY_PTX: &str = include_str!("saxpy.ptx");

const N: usize = 1 << 16;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // cudarc makes its context current on this thread: the linker links
    // for that device.
    let cuda = CudaContext::new(0)?;
    let stream = cuda.default_stream();
    let mut linker = Linker::new(LinkerOptions::default())?;
    linker.add(&ObjectCode::from_ptx(SAXPY_PTX, "saxpy.ptx")?)?;
    let saxpy = Library::load(&linker.link(OutputKind::Cubin)?)?.kernel("saxpy")?;

    let xs: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let x = stream.clone_htod(&xs)?;
    let mut y = stream.clone_htod(&vec![1.0f32; N])?;
    let (a, n) = (2.0f32, N as i32);
    // No `Context` to keep: the launch takes the stream's.
    let mut launch = saxpy.launch_on_stream(&stream);
    launch.arg(&a).slice(&x).slice_mut(&mut y).arg(&n);
    // cudarc's own configuration converts to ours.
    // SAFETY: saxpy reads x and writes y within their N elements.
    unsafe { launch.launch(LaunchConfig::for_num_elems(N as u32)) }?;
    drop(launch); // its borrows of x and y end here

    let ys = stream.clone_dtoh(&y)?;
    // Exact: every 2 * i + 1 below 2^24 is an f32.
    let wrong = (0..N).filter(|&i| ys[i] != 2.0 * xs[i] + 1.0).count();
    println!("saxpy of {N} floats on a cudarc stream: {wrong} wrong");
    if wrong > 0 {
        return Err(format!("{wrong} of {N} results are wrong").into());
    }
    Ok(())
}
