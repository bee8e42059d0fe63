// Keeps many values live at once, so a register cap visibly changes the
// register count.
extern "C" __global__ void heavy(float *y)
{
    float v[48];
#pragma unroll
    for (int i = 0; i < 48; ++i) {
        v[i] = y[threadIdx.x + i * 1024];
    }
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < 48; ++i) {
#pragma unroll
        for (int j = 0; j < 48; ++j) {
            s += v[i] * v[j] + (float)(i ^ j);
        }
        y[threadIdx.x + i * 1024] = s;
    }
}
