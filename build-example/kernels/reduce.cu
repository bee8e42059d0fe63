// The sum of n floats, per block, into partial[blockIdx.x].
#include "common.h"
#include <cstdint>

extern "C" __global__ void block_sum(const float *x, float *partial, int64_t n) {
    __shared__ float cache[BLOCK];
    int64_t i = global_index();
    cache[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) cache[threadIdx.x] += cache[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = cache[0];
}
