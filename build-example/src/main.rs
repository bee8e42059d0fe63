//! Launches the kernels `build.rs` compiled (`cuda_build::include_kernels!`)
//! and checks every number: saxpy, `scale<float>` and a block sum, through
//! `cuda-module`, and with the `cudarc` feature saxpy again on a cudarc
//! stream. Needs a GPU to run, not to build:
//! `cargo run -p cuda-build-example [--features cudarc]`.

use std::ffi::c_void;

use cuda_module::cuda_link::ObjectCode;
use cuda_module::{Context, DeviceBuffer, LaunchConfig, Library};

cuda_build::include_kernels!("kernels");

const N: usize = 1 << 16;
/// The block size, as build.rs defines `BLOCK`.
const BLOCK: u32 = 256;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("kernels: {:?}", kernels::KERNELS);
    // The embedded fatbin, validated and loaded without a copy.
    let code = ObjectCode::from_fatbin(kernels::FATBIN, "kernels")?;
    let context = Context::primary(0)?;
    let _current = context.make_current()?;
    let library = Library::load(&code)?;

    let xs: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let x = DeviceBuffer::from_slice(&context, &xs)?;
    let y = DeviceBuffer::from_slice(&context, &vec![1.0f32; N])?;
    let config = LaunchConfig::for_elements(N as u32, BLOCK);

    let (mut a, mut x_arg, mut y_arg, mut n) = (2.0f32, x.pointer(), y.pointer(), N as i64);
    let mut params: [*mut c_void; 4] = [
        (&raw mut a).cast(),
        (&raw mut x_arg).cast(),
        (&raw mut y_arg).cast(),
        (&raw mut n).cast(),
    ];
    // SAFETY: one value of each of saxpy's parameter types (float, const
    // float *, float *, int64_t); x and y hold N floats, saxpy stays
    // below n = N.
    unsafe {
        library
            .kernel(kernels::SAXPY)?
            .launch(&context, std::ptr::null_mut(), config, &mut params)
    }?;

    let mut factor = 0.5f32;
    let mut params: [*mut c_void; 3] = [
        (&raw mut y_arg).cast(),
        (&raw mut factor).cast(),
        (&raw mut n).cast(),
    ];
    // SAFETY: scale<float>(float *, float, int64_t) on y's N floats.
    unsafe {
        library.kernel(kernels::SCALE_FLOAT)?.launch(
            &context,
            std::ptr::null_mut(),
            config,
            &mut params,
        )
    }?;

    let blocks = N / BLOCK as usize;
    let partial = DeviceBuffer::from_slice(&context, &vec![0.0f32; blocks])?;
    let mut partial_arg = partial.pointer();
    let mut params: [*mut c_void; 3] = [
        (&raw mut y_arg).cast(),
        (&raw mut partial_arg).cast(),
        (&raw mut n).cast(),
    ];
    // SAFETY: block_sum(const float *, float *, int64_t): y holds N floats,
    // partial one float per block of BLOCK threads (its shared array).
    unsafe {
        library.kernel(kernels::BLOCK_SUM)?.launch(
            &context,
            std::ptr::null_mut(),
            config,
            &mut params,
        )
    }?;
    cuda_module::synchronize(&context)?;

    // Exact in f32: y[i] = (2i + 1) / 2 = i + 0.5, and each block's sum is
    // an integer below 2^24.
    let ys: Vec<f32> = y.to_vec()?;
    let sums: Vec<f32> = partial.to_vec()?;
    let wrong_y = (0..N).filter(|&i| ys[i] != i as f32 + 0.5).count();
    let wrong_sums = (0..blocks)
        .filter(|&b| sums[b] != (65_536 * b + 32_768) as f32)
        .count();
    println!("saxpy, scale<float>, block_sum of {N} floats: {wrong_y} + {wrong_sums} wrong");
    if wrong_y + wrong_sums > 0 {
        return Err(format!("{wrong_y} elements and {wrong_sums} sums are wrong").into());
    }
    #[cfg(feature = "cudarc")]
    with_cudarc(&library, &xs)?;
    Ok(())
}

/// saxpy on a cudarc stream, with cudarc memory, each argument checked
/// against the kernel's parameters.
#[cfg(feature = "cudarc")]
fn with_cudarc(library: &Library, xs: &[f32]) -> Result<(), Box<dyn std::error::Error>> {
    let cuda = cudarc::driver::CudaContext::new(0)?;
    let stream = cuda.default_stream();
    let x = stream.clone_htod(xs)?;
    let mut y = stream.clone_htod(&vec![1.0f32; N])?;
    let (a, n) = (2.0f32, N as i64);
    let saxpy = library.kernel(kernels::SAXPY)?;
    let mut launch = saxpy.launch_on_stream(&stream);
    launch.arg(&a).slice(&x).slice_mut(&mut y).arg(&n);
    // SAFETY: saxpy reads x and writes y within their N elements.
    unsafe { launch.launch(cudarc::driver::LaunchConfig::for_num_elems(N as u32)) }?;
    drop(launch);
    let ys = stream.clone_dtoh(&y)?;
    let wrong = (0..N).filter(|&i| ys[i] != 2.0 * xs[i] + 1.0).count();
    println!("saxpy on a cudarc stream: {wrong} wrong");
    if wrong > 0 {
        return Err(format!("{wrong} of {N} results are wrong").into());
    }
    Ok(())
}
