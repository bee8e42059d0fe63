// A global that the host writes and the kernel reads.
extern "C" __device__ float bias;

extern "C" __global__ void add_bias(float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] += bias;
    }
}

extern "C" __device__ float bias = 0.0f;
