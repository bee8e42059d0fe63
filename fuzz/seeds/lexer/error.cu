// Does not compile: nvcc must fail on it.
extern "C" __global__ void broken(int *out) { out[0] = undeclared_name; }
