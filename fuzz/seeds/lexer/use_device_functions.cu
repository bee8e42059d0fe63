// Kernels that call device functions defined in device_functions.cu.
#include <cuda_fp16.h>

extern "C" __device__ int add_cabi(int a, int b);
__device__ float mul_cpp(float a, float b);
__device__ __half hadd_fp16(__half a, __half b);

extern "C" __global__ void call_add_cabi(int *out, const int *a, const int *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = add_cabi(a[i], b[i]);
}

extern "C" __global__ void call_mul_cpp(float *out, const float *a, const float *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = mul_cpp(a[i], b[i]);
}

extern "C" __global__ void call_hadd_fp16(float *out, const float *a, const float *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __half2float(hadd_fp16(__float2half(a[i]), __float2half(b[i])));
}
