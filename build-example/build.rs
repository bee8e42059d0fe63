//! Compiles `kernels/*.cu` with NVRTC for sm_80 and sm_90 (or the archs
//! of `CUDA_COMPUTE_CAP`), plus PTX for later GPUs: no nvcc, no GPU, no
//! nvidia-smi.

fn main() -> Result<(), cuda_build::BuildError> {
    let mut build = cuda_build::Build::new();
    build
        .files(["kernels/saxpy.cu", "kernels/reduce.cu"])
        .include("kernels/include")
        .define("BLOCK", "256");
    // `CUDA_COMPUTE_CAP=80` builds for archs older than an H100 or H200,
    // whose driver then JIT-compiles the PTX: the GPU bundle runs both.
    if std::env::var_os("CUDA_COMPUTE_CAP").is_none() {
        build.archs(["sm_80", "sm_90"]);
    }
    build.compile("kernels")?;
    Ok(())
}
