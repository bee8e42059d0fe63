// A device-side launch: needs libcudadevrt.a at link time.
extern "C" __global__ void dl_child(int *out) { out[threadIdx.x] = threadIdx.x * 2; }

extern "C" __global__ void dl_parent(int *out)
{
    if (threadIdx.x == 0) dl_child<<<1, 32>>>(out);
}
