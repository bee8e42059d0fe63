// Launches a child grid: needs libcudadevrt.a at link time.
extern "C" __global__ void child(int *out) { out[threadIdx.x] = threadIdx.x; }

extern "C" __global__ void parent(int *out)
{
    if (threadIdx.x == 0) {
        child<<<1, 32>>>(out);
    }
}
