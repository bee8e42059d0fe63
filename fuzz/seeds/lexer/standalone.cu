// Self-contained kernels: compiled whole-program into executable cubins.
extern "C" __global__ void standalone_fill(int *out, int value, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value + i;
}
