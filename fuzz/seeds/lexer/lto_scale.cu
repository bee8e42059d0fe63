// Multi-file LTO: scale(), inlined into lto_kernel.cu's kernel under LTO.
extern "C" __device__ float lto_scale(float v) { return v * 3.0f; }
