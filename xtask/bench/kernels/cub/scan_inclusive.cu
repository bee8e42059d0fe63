// A header-heavy kernel file, as real ones are: fp16, bf16 and CUB,
// templated for three element types. Benchmark input of `cargo xtask
// bench-build --set cub`.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cstdint>

template <typename T> __device__ float to_float(T v) { return static_cast<float>(v); }
template <> __device__ float to_float<__half>(__half v) { return __half2float(v); }
template <> __device__ float to_float<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T, int BLOCK>
__global__ void scan_inclusive(const T *x, float *out, int64_t n) {
    using Scan = cub::BlockScan<float, BLOCK>;
    __shared__ typename Scan::TempStorage storage;
    float v = threadIdx.x < n ? to_float(x[blockIdx.x * n + threadIdx.x]) : 0.0f;
    float result;
    Scan(storage).InclusiveSum(v, result);
    if (threadIdx.x < n) out[blockIdx.x * n + threadIdx.x] = result;
}
template __global__ void scan_inclusive<float, 256>(const float *, float *, int64_t);
template __global__ void scan_inclusive<__half, 256>(const __half *, float *, int64_t);
template __global__ void scan_inclusive<__nv_bfloat16, 256>(const __nv_bfloat16 *, float *, int64_t);
