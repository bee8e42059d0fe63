// Calls twice<int>, instantiated (weak) here and in weak_add.cu.
template <typename T> __device__ T twice(T v) { return v * 2; }
template __device__ int twice<int>(int);

extern "C" __global__ void call_weak(int *out) { out[threadIdx.x] = twice<int>(threadIdx.x); }
