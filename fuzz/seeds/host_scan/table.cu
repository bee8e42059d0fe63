#include <cuda_runtime.h>
template <typename T> __global__ void fill(T *x, T v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v;
}
#define LAUNCH(T, B) fill<T><<<(n + B - 1) / B, B, 0, s>>>(x, v, n)
#define DISPATCH(T) \
  switch (n % 2) { \
  case 0: LAUNCH(T, 128); break; \
  default: LAUNCH(T, 256); }
#define DEFINE_FILL(T, name)                                        \
  extern "C" void fill_##name(T *x, T v, int n, cudaStream_t s) {   \
    cudaMemsetAsync(x, 0, n * sizeof(T), s);                         \
    DISPATCH(T);                                                     \
  }
DEFINE_FILL(float, f32)
#ifndef __CUDACC_RTC__
extern "C" void stub(float *x) { /* { */ assert(false); }
#endif
extern "C" { __global__ void k(const char *s) { if (s[0] == '{') return; } }
