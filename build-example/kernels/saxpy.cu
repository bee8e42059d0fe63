// y = a * x + y, and a templated scale: device code only, as NVRTC takes it.
#include "common.h"
#include <cmath>

extern "C" __global__ void saxpy(float a, const float *x, float *y, int64_t n) {
    int64_t i = global_index();
    if (i < n) y[i] = fmaf(a, x[i], y[i]);
}

template <typename T>
__global__ void scale(T *y, T factor, int64_t n) {
    int64_t i = global_index();
    if (i < n) y[i] *= factor;
}
template __global__ void scale<float>(float *, float, int64_t);
template __global__ void scale<double>(double *, double, int64_t);

#ifndef __CUDACC_RTC__
// Host code stays out of NVRTC's way behind this guard.
void launch_saxpy(float a, const float *x, float *y, int64_t n) {
    saxpy<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(a, x, y, n);
}
#endif
