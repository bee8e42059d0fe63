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

struct PickMin {
    __device__ float operator()(float a, float b) const { return a < b ? a : b; }
};

template <typename T, int BLOCK>
__global__ void reduce_min(const T *x, float *out, int64_t n) {
    using Reduce = cub::BlockReduce<float, BLOCK>;
    __shared__ typename Reduce::TempStorage storage;
    float v = 0.0f;
    for (int64_t i = threadIdx.x; i < n; i += BLOCK) v += to_float(x[blockIdx.x * n + i]);
    float total = Reduce(storage).Reduce(v, PickMin());
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}
template __global__ void reduce_min<float, 256>(const float *, float *, int64_t);
template __global__ void reduce_min<__half, 256>(const __half *, float *, int64_t);
template __global__ void reduce_min<__nv_bfloat16, 256>(const __nv_bfloat16 *, float *, int64_t);
