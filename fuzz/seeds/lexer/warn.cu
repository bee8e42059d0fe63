// Compiles with a warning (a variable declared but never used).
extern "C" __global__ void warns(int *out)
{
    int unused_variable;
    out[threadIdx.x] = 1;
}
