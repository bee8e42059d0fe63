// Device functions the demo's LTO-IR calls, shipped as PTX.
extern "C" __device__ float scale(float v) { return v; }
extern "C" __device__ float offset(float v) { return v; }
