// cuda-compile: the device assert nvcc gives, reported by the driver as
// nvcc's is; off under NDEBUG. No include guard: NDEBUG may change
// between inclusions, as in C.
#undef assert
#ifdef NDEBUG
#define assert(expression) ((void)0)
#else
#define assert(expression) \
    ((expression) ? (void)0 \
                  : __assertfail(#expression, __FILE__, __LINE__, __func__, sizeof(char)))
#endif
