// Calls device functions defined in other LTO-IR modules; the link resolves
// and inlines them.
extern "C" __device__ float scale(float v);
extern "C" __device__ float offset(float v);

extern "C" __global__ void lto_saxpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = offset(scale(a) * x[i]) + y[i];
    }
}
