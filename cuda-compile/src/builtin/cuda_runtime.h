#pragma once
// cuda-compile: a device-side <cuda_runtime.h> for NVRTC, given where
// NVIDIA's header folders have none (NVRTC 13.3+'s bundled headers): what
// nvcc's implicit include of it makes visible to device code. NVRTC itself
// defines the vector types, dim3, the make_* functions and the built-in
// variables; the runtime's host API (cudaMalloc, launches) is not here,
// since NVRTC compiles no host code.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>
typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
