// A second strong definition of add_cabi: linking it with
// device_functions.cu must fail.
extern "C" __device__ int add_cabi(int a, int b) { return a - b; }
