// A template instantiation is a weak definition: legitimate in several
// inputs. weak_use.cu instantiates the same one.
template <typename T> __device__ T twice(T v) { return v * 2; }
template __device__ int twice<int>(int);
