//! Compiles `kernels/*.cu` with NVRTC for sm_80 and sm_90, plus PTX for
//! later GPUs: no nvcc, no GPU, no nvidia-smi.

fn main() -> Result<(), cuda_build::BuildError> {
    cuda_build::Build::new()
        .files(["kernels/saxpy.cu", "kernels/reduce.cu"])
        .include("kernels/include")
        .define("BLOCK", "256")
        .archs(["sm_80", "sm_90"])
        .compile("kernels")?;
    Ok(())
}
