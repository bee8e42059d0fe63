extern "C" __device__ float offset(float v) { return v; }
