// Uses a function nobody defines: linking must report it.
extern "C" __device__ float missing_function(float v);

extern "C" __global__ void uses_missing(float *y)
{
    y[0] = missing_function(y[0]);
}
