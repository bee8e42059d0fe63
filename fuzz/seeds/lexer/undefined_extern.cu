// Calls a function nobody defines: the link must name it.
extern "C" __device__ int undefined_extern(int);

extern "C" __global__ void call_undefined(int *out) { out[0] = undefined_extern(out[0]); }
