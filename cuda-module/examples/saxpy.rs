//! The path without cudarc: link inline PTX with cuda-link (re-exported as
//! `cuda_module::cuda_link`), load it with `Library::load`, launch saxpy
//! with the raw `Kernel::launch` on our own device memory, copy back and
//! check every number. Needs a GPU:
//! `cargo run -p cuda-module --example saxpy`.

use std::ffi::c_void;

use cuda_module::cuda_link::{Linker, LinkerOptions, ObjectCode, OutputKind};
use cuda_module::{Context, DeviceBuffer, LaunchConfig, Library};

/// `saxpy(float a, const float *x, float *y, int n)`: `y[i] = a * x[i] + y[i]`,
/// shared by both saxpy examples.
const SAXPY_PTX: &str = include_str!("saxpy.ptx");

const N: usize = 1 << 16;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let context = Context::primary(0)?;
    // The linker links for the current context's device.
    let _current = context.make_current()?;
    let mut linker = Linker::new(LinkerOptions::default())?;
    linker.add(&ObjectCode::from_ptx(SAXPY_PTX, "saxpy.ptx")?)?;
    let library = Library::load(&linker.link(OutputKind::Cubin)?)?;
    let saxpy = library.kernel("saxpy")?;

    let xs: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let x = DeviceBuffer::from_slice(&context, &xs)?;
    let y = DeviceBuffer::from_slice(&context, &vec![1.0f32; N])?;
    let (mut a, mut x_arg, mut y_arg, mut n) = (2.0f32, x.pointer(), y.pointer(), N as i32);
    let mut params: [*mut c_void; 4] = [
        (&raw mut a).cast(),
        (&raw mut x_arg).cast(),
        (&raw mut y_arg).cast(),
        (&raw mut n).cast(),
    ];
    let config = LaunchConfig::for_elements(N as u32, 256);
    // SAFETY: one value of each of saxpy's parameter types; x and y hold N
    // floats each, and saxpy stays within n = N.
    unsafe { saxpy.launch(&context, std::ptr::null_mut(), config, &mut params) }?;
    cuda_module::synchronize(&context)?;

    let ys: Vec<f32> = y.to_vec()?;
    // Exact: every 2 * i + 1 below 2^24 is an f32.
    let wrong = (0..N).filter(|&i| ys[i] != 2.0 * xs[i] + 1.0).count();
    println!(
        "saxpy of {N} floats, linked by {}: {wrong} wrong",
        linker.backend_name()
    );
    if wrong > 0 {
        return Err(format!("{wrong} of {N} results are wrong").into());
    }
    Ok(())
}
