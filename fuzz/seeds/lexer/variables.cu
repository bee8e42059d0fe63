// __device__, __constant__ and __managed__ variables.
__device__ int device_counter;
__constant__ float constant_coeffs[4];
__managed__ int managed_value;

extern "C" __global__ void use_variables(float *out)
{
    atomicAdd(&device_counter, 1);
    out[threadIdx.x] = constant_coeffs[threadIdx.x % 4] + managed_value;
}
