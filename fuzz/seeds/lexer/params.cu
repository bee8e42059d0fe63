// Kernels with many parameter layouts.
struct Pair { int first; double second; };
struct alignas(16) Aligned { float v[4]; };
struct Odd { char c; short s; char tail[3]; };

extern "C" __global__ void p_scalars(char c, short s, int i, long long l, float f, double d, long long *out)
{
    out[0] = c + s + i + l + (long long)f + (long long)d;
}

extern "C" __global__ void p_struct(Pair p, long long *out) { out[0] = p.first + (long long)p.second; }

extern "C" __global__ void p_aligned(char pad, Aligned a, float *out) { out[0] = pad + a.v[0] + a.v[1] + a.v[2] + a.v[3]; }

extern "C" __global__ void p_odd(Odd o, int *out) { out[0] = o.c + o.s + o.tail[0] + o.tail[1] + o.tail[2]; }

extern "C" __global__ void p_array(int n, const int *in, int *out) { for (int i = 0; i < n; ++i) out[i] = in[i] * 2; }

extern "C" __global__ void p_none() {}

template <typename T> __global__ void p_template(T *out, T v) { out[threadIdx.x] = v; }
template __global__ void p_template<float>(float *, float);
template __global__ void p_template<int>(int *, int);
