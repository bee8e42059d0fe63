//! No silent empty output: a build fails, naming the file, when a file
//! that defines kernels yields none, also beside files that do.

use std::path::Path;

use cuda_build::{Build, BuildError};

fn have_libraries() -> bool {
    cuda_link_tests::redist("CUDA_LINK_NVRTC_PATH").is_some()
        && cuda_link_tests::redist("CUDA_LINK_NVJITLINK_PATH").is_some()
}

/// A template kernel whose only instantiation is a launcher NVRTC never
/// sees: this file compiles to no kernel.
const HIDDEN_TEMPLATE: &str = "template <typename T> __global__ void scale(T *y, T a) { y[0] *= a; }\n\
    #ifndef __CUDACC_RTC__\n\
    void launch(float *y) { scale<float><<<1, 1>>>(y, 2.0f); }\n\
    #endif\n";
const ADD: &str = "extern \"C\" __global__ void add(float *y) { y[0] += 1.0f; }\n";
/// Device functions alone: no kernel, none expected.
const HELPERS: &str = "__device__ float twice(float x) { return 2.0f * x; }\n";

fn build(dir: &Path, files: &[(&str, &str)]) -> Result<cuda_build::Built, BuildError> {
    let mut build = Build::new();
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
        build.file(dir.join(name));
    }
    build
        .archs(["sm_80"])
        .out_dir(dir.join("out"))
        .cache_dir(dir.join("cache"))
        .cargo_metadata(false)
        .compile("kernels")
}

#[test]
fn a_file_yielding_no_kernel_beside_others_is_an_error() {
    if !have_libraries() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let built = build(
        dir.path(),
        &[("add.cu", ADD), ("hidden.cu", HIDDEN_TEMPLATE)],
    );
    match built {
        Err(BuildError::NoKernels { files }) => {
            assert_eq!(files, [dir.path().join("hidden.cu")]);
        }
        other => panic!("{other:?}"),
    }
    // A file of device functions defines no kernel, and is fine.
    let dir = tempfile::tempdir().unwrap();
    let built = build(dir.path(), &[("add.cu", ADD), ("helpers.cu", HELPERS)]).unwrap();
    assert_eq!(built.kernels, ["add"]);
}

/// A host-code file that includes a header of one of NVIDIA's libraries
/// (cuBLAS), whose wheel is not installed: nvcc's "No such file" comes
/// with the wheel to install.
#[test]
fn a_missing_nvidia_header_names_its_wheel() {
    let Some(_) = cuda_link_tests::redist("CUDA_LINK_NVCC") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("gemm.cu");
    std::fs::write(
        &file,
        "#include <cublas_v2.h>\n__global__ void k(float *y) { y[0] = 1.0f; }\n\
         extern \"C\" void launch(float *y) { k<<<1, 1>>>(y); }\n",
    )
    .unwrap();
    let built = Build::new()
        .file(&file)
        .archs(["sm_80"])
        .out_dir(dir.path().join("out"))
        .cache_dir(dir.path().join("cache"))
        .cargo_metadata(false)
        .compile("kernels");
    let error = format!("{}", cuda_link::Report(&built.unwrap_err()));
    assert!(
        error.contains("cublas_v2.h") && error.contains("pip install nvidia-cublas"),
        "{error}"
    );
}
