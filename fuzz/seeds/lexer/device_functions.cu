// Device functions other files call: C ABI, C++ mangled, and fp16.
// After numba-cuda's and pynvjitlink's test_device_functions.cu.
#include <cuda_fp16.h>

extern "C" __device__ int add_cabi(int a, int b) { return a + b; }

__device__ float mul_cpp(float a, float b) { return a * b; }

__device__ __half hadd_fp16(__half a, __half b) { return __hadd(a, b); }
