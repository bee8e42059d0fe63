// The bundled example for `cargo xtask demo`: compiled to LTO-IR by NVRTC,
// linked with PTX (demo_helpers.cu) and libcudadevrt.a (for the child
// launch) into one cubin.
extern "C" __device__ float scale(float v);
extern "C" __device__ float offset(float v);

extern "C" __global__ void demo_saxpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = offset(scale(a) * x[i]) + y[i];
    }
}

extern "C" __global__ void demo_launcher(float a, const float *x, float *y, int n)
{
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        demo_saxpy<<<(n + 255) / 256, 256>>>(a, x, y, n);
    }
}
