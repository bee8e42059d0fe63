#pragma once
#include <stdint.h>

#ifndef BLOCK
#error "BLOCK is defined by build.rs"
#endif

__device__ inline int64_t global_index() {
    return blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
}
