//! The cudarc path: link inline PTX with cuda-link (re-exported as
//! `cuda_module::cuda_link`), load it with `Library::load`, launch saxpy on
//! a cudarc stream with cudarc memory (each argument checked against the
//! kernel's parameters), copy back and check every number. Needs a GPU:
//! `cargo run -p cuda-module --features cudarc --example saxpy_cudarc`.
//! `saxpy.rs` is the same without cudarc.

use cuda_module::Library;
use cuda_module::cuda_link::{Linker, LinkerOptions, ObjectCode, OutputKind};
use cudarc::driver::{CudaContext, LaunchConfig};

/// `saxpy(float a, const float *x, float *y, int n)`: `y[i] = a * x[i] + y[i]`.
const SAXPY_PTX: &str = r#"
.version 7.0
.target sm_75
.address_size 64

.visible .entry saxpy(.param .f32 a, .param .u64 x, .param .u64 y, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .f32 %f<5>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<8>;

    ld.param.f32 %f1, [a];
    ld.param.u64 %rd1, [x];
    ld.param.u64 %rd2, [y];
    ld.param.u32 %r2, [n];
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mov.u32 %r5, %tid.x;
    mad.lo.s32 %r1, %r3, %r4, %r5;
    setp.ge.s32 %p1, %r1, %r2;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd3, %rd1;
    cvta.to.global.u64 %rd4, %rd2;
    mul.wide.s32 %rd5, %r1, 4;
    add.s64 %rd6, %rd3, %rd5;
    add.s64 %rd7, %rd4, %rd5;
    ld.global.f32 %f2, [%rd6];
    ld.global.f32 %f3, [%rd7];
    fma.rn.f32 %f4, %f2, %f1, %f3;
    st.global.f32 [%rd7], %f4;
DONE:
    ret;
}
"#;

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
