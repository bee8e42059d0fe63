//! Device code built once per test process from `tests/data/*.cu`.

use std::sync::OnceLock;

use crate::{Compiled, nvrtc};

/// `saxpy(float a, const float *x, float *y, int n)`.
pub const SAXPY_CU: &str = include_str!("../data/saxpy.cu");
/// `lto_saxpy`, calling `scale` and `offset` from other modules.
pub const LTO_MAIN_CU: &str = include_str!("../data/lto_main.cu");
/// Defines `scale`.
pub const LTO_SCALE_CU: &str = include_str!("../data/lto_scale.cu");
/// Defines `offset`.
pub const LTO_OFFSET_CU: &str = include_str!("../data/lto_offset.cu");
/// Calls the undefined `missing_function`.
pub const EXTERN_USER_CU: &str = include_str!("../data/extern_user.cu");
/// `add_bias` reading the global `bias`.
pub const COUNTER_CU: &str = include_str!("../data/counter.cu");
/// `parent` launching `child`: needs `libcudadevrt.a`.
pub const DEVRT_USER_CU: &str = include_str!("../data/devrt_user.cu");

/// `heavy`, with high register pressure.
pub const HEAVY_CU: &str = include_str!("../data/heavy.cu");

/// The architecture the fixtures target.
pub const ARCH: &str = "sm_90";

fn cached(
    cell: &'static OnceLock<Option<Compiled>>,
    source: &str,
    name: &str,
    options: &[&str],
) -> Option<&'static Compiled> {
    cell.get_or_init(|| {
        crate::redist("CUDA_LINK_NVRTC_PATH")?;
        Some(nvrtc(source, name, options).unwrap_or_else(|e| panic!("{name}: {e}")))
    })
    .as_ref()
}

/// Relocatable PTX of [`SAXPY_CU`].
pub fn saxpy_ptx() -> Option<Vec<u8>> {
    static CELL: OnceLock<Option<Compiled>> = OnceLock::new();
    let compiled = cached(
        &CELL,
        SAXPY_CU,
        "saxpy.cu",
        &["-arch=compute_90", "-rdc=true"],
    )?;
    Some(compiled.ptx.clone().expect("NVRTC produced no PTX"))
}

/// LTO-IR of [`SAXPY_CU`].
pub fn saxpy_ltoir() -> Option<Vec<u8>> {
    static CELL: OnceLock<Option<Compiled>> = OnceLock::new();
    let compiled = cached(
        &CELL,
        SAXPY_CU,
        "saxpy.cu",
        &["-arch=sm_90", "-rdc=true", "-dlto"],
    )?;
    Some(compiled.ltoir.clone().expect("NVRTC produced no LTO-IR"))
}

/// LTO-IR of `source` for `arch`, compiled each call.
pub fn ltoir(source: &str, name: &str, arch: &str) -> Option<Vec<u8>> {
    crate::redist("CUDA_LINK_NVRTC_PATH")?;
    let arch = format!("-arch={arch}");
    let compiled = nvrtc(source, name, &[&arch, "-rdc=true", "-dlto"])
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    Some(compiled.ltoir.expect("NVRTC produced no LTO-IR"))
}

/// Relocatable PTX of `source`, compiled each call.
pub fn ptx(source: &str, name: &str) -> Option<Vec<u8>> {
    crate::redist("CUDA_LINK_NVRTC_PATH")?;
    let compiled = nvrtc(source, name, &["-arch=compute_90", "-rdc=true"])
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    Some(compiled.ptx.expect("NVRTC produced no PTX"))
}

/// A relocatable (`ptxas -c`) cubin of [`SAXPY_CU`] for [`ARCH`].
pub fn saxpy_relocatable_cubin() -> Option<Vec<u8>> {
    let ptx = saxpy_ptx()?;
    crate::redist("CUDA_LINK_PTXAS")?;
    Some(crate::ptxas(&ptx, ARCH, true).expect("ptxas -c"))
}

/// An executable cubin of [`SAXPY_CU`] for [`ARCH`].
pub fn saxpy_executable_cubin() -> Option<Vec<u8>> {
    let ptx = saxpy_ptx()?;
    crate::redist("CUDA_LINK_PTXAS")?;
    Some(crate::ptxas(&ptx, ARCH, false).expect("ptxas"))
}

/// The bytes of `libcudadevrt.a`.
///
/// Its one member, `cuda_device_runtime.o`, is a real nvcc host object.
pub fn cudadevrt_bytes() -> Option<Vec<u8>> {
    Some(std::fs::read(crate::cudadevrt()?).expect("read libcudadevrt.a"))
}

/// `cuda_device_runtime.o`, the host object inside `libcudadevrt.a`.
pub fn cudadevrt_object() -> Option<Vec<u8>> {
    let archive = cudadevrt_bytes()?;
    let start = archive
        .windows(4)
        .position(|w| w == b"\x7fELF")
        .expect("an ELF member");
    Some(archive[start..].to_vec())
}
