//! NVIDIA's libraries whose headers come in pip wheels of their own: a
//! header a compile cannot find (`cublas_v2.h`), named with the wheel that
//! holds it, for NVRTC's log and nvcc's alike.

/// `(header name prefix, wheel for CUDA 13, wheel for CUDA 12)`: the
/// header is found in `nvidia/cu13/include` (13) or the library's own
/// folder (12) once the wheel is installed.
const WHEELS: &[(&str, &str, &str)] = &[
    ("cublas", "nvidia-cublas", "nvidia-cublas-cu12"),
    ("curand", "nvidia-curand", "nvidia-curand-cu12"),
    ("cufft", "nvidia-cufft", "nvidia-cufft-cu12"),
    ("cusparse", "nvidia-cusparse", "nvidia-cusparse-cu12"),
    ("cusolver", "nvidia-cusolver", "nvidia-cusolver-cu12"),
    ("cudnn", "nvidia-cudnn-cu13", "nvidia-cudnn-cu12"),
    ("nccl", "nvidia-nccl-cu13", "nvidia-nccl-cu12"),
    ("nvtx3/", "nvidia-nvtx", "nvidia-nvtx-cu12"),
    ("npp", "nvidia-npp", "nvidia-npp-cu12"),
    ("nvjpeg", "nvidia-nvjpeg", "nvidia-nvjpeg-cu12"),
    ("cufile", "nvidia-cufile", "nvidia-cufile-cu12"),
    (
        "cuda_runtime",
        "nvidia-cuda-runtime",
        "nvidia-cuda-runtime-cu12",
    ),
    ("cub/", "nvidia-cuda-cccl", "nvidia-cuda-cccl-cu12"),
    ("thrust/", "nvidia-cuda-cccl", "nvidia-cuda-cccl-cu12"),
    ("cuda/", "nvidia-cuda-cccl", "nvidia-cuda-cccl-cu12"),
];

/// The pip wheels (CUDA 13's, CUDA 12's) that hold the NVIDIA header
/// `name`, if it is one of theirs.
///
/// ```
/// assert_eq!(cuda_compile::nvidia_wheel_of("cublas_v2.h"), Some(("nvidia-cublas", "nvidia-cublas-cu12")));
/// assert_eq!(cuda_compile::nvidia_wheel_of("my_kernels.h"), None);
/// ```
pub fn nvidia_wheel_of(name: &str) -> Option<(&'static str, &'static str)> {
    WHEELS
        .iter()
        .find(|(prefix, ..)| name.starts_with(prefix))
        .map(|&(_, cuda13, cuda12)| (cuda13, cuda12))
}

/// What to install for the first NVIDIA header a compiler's `log` says it
/// cannot find: NVRTC's `cannot open source file "cublas_v2.h"`, or gcc's
/// (under nvcc) `fatal error: cublas_v2.h: No such file or directory`.
/// `None` when no such header is missing.
///
/// ```
/// let log = "k.cu:2:10: fatal error: curand_kernel.h: No such file or directory";
/// let hint = cuda_compile::missing_header_hint(log).unwrap();
/// assert!(hint.contains("pip install nvidia-curand"));
/// ```
pub fn missing_header_hint(log: &str) -> Option<String> {
    let missing = log.lines().find_map(|line| {
        if let Some((_, rest)) = line.split_once("cannot open source file \"") {
            return rest.split('"').next();
        }
        let (_, rest) = line.split_once("fatal error: ")?;
        rest.strip_suffix(": No such file or directory")
    })?;
    let (cuda13, cuda12) = nvidia_wheel_of(missing)?;
    Some(format!(
        "{missing} is NVIDIA's, in the `{cuda13}` wheel: `pip install {cuda13}` (CUDA 13) or \
         `pip install {cuda12}` (CUDA 12), into the environment the compiler's wheels are in"
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn nvrtc_s_and_gcc_s_words_for_a_missing_header() {
        let nvrtc = "k.cu(3): catastrophic error: cannot open source file \"cufft.h\"";
        assert!(
            super::missing_header_hint(nvrtc)
                .unwrap()
                .contains("nvidia-cufft")
        );
        let ours = "k.cu(3): catastrophic error: cannot open source file \"mine.h\"";
        assert_eq!(super::missing_header_hint(ours), None);
        let gcc = "k.cu:1:10: fatal error: nccl.h: No such file or directory";
        assert!(
            super::missing_header_hint(gcc)
                .unwrap()
                .contains("nvidia-nccl-cu13")
        );
    }
}
