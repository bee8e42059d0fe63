#pragma once
// cuda-compile: CCCL's <cuda/std/cfloat> first, where it is on the include
// path and the dialect is C++17 (CCCL's minimum), so that a file that
// includes this and a CUB header sees each macro defined once, in either
// order; then what CCCL left undefined (CCCL 12 defines no float macros).
#if __cplusplus >= 201703L && __has_include(<cuda/std/cfloat>)
#include <cuda/std/cfloat>
#endif
#ifndef FLT_RADIX
#define FLT_RADIX 2
#endif
#ifndef DECIMAL_DIG
#define DECIMAL_DIG DBL_DECIMAL_DIG
#endif
#ifndef FLT_ROUNDS
#define FLT_ROUNDS 1
#endif
#ifndef FLT_EVAL_METHOD
#define FLT_EVAL_METHOD 0
#endif
#ifndef FLT_DECIMAL_DIG
#define FLT_DECIMAL_DIG 9
#endif
#ifndef FLT_MIN
#define FLT_MIN 1.17549435082228750796873653722224568e-38f
#endif
#ifndef FLT_TRUE_MIN
#define FLT_TRUE_MIN 1.40129846432481707092372958328991613e-45f
#endif
#ifndef FLT_MAX
#define FLT_MAX 3.40282346638528859811704183484516925e+38f
#endif
#ifndef FLT_EPSILON
#define FLT_EPSILON 1.19209289550781250000000000000000000e-7f
#endif
#ifndef FLT_DIG
#define FLT_DIG 6
#endif
#ifndef FLT_MANT_DIG
#define FLT_MANT_DIG 24
#endif
#ifndef FLT_MIN_EXP
#define FLT_MIN_EXP (-125)
#endif
#ifndef FLT_MIN_10_EXP
#define FLT_MIN_10_EXP (-37)
#endif
#ifndef FLT_MAX_EXP
#define FLT_MAX_EXP 128
#endif
#ifndef FLT_MAX_10_EXP
#define FLT_MAX_10_EXP 38
#endif
#ifndef FLT_HAS_SUBNORM
#define FLT_HAS_SUBNORM 1
#endif
#ifndef DBL_DECIMAL_DIG
#define DBL_DECIMAL_DIG 17
#endif
#ifndef DBL_MIN
#define DBL_MIN 2.22507385850720138309023271733240406e-308
#endif
#ifndef DBL_TRUE_MIN
#define DBL_TRUE_MIN 4.94065645841246544176568792868221372e-324
#endif
#ifndef DBL_MAX
#define DBL_MAX 1.79769313486231570814527423731704357e+308
#endif
#ifndef DBL_EPSILON
#define DBL_EPSILON 2.22044604925031308084726333618164062e-16
#endif
#ifndef DBL_DIG
#define DBL_DIG 15
#endif
#ifndef DBL_MANT_DIG
#define DBL_MANT_DIG 53
#endif
#ifndef DBL_MIN_EXP
#define DBL_MIN_EXP (-1021)
#endif
#ifndef DBL_MIN_10_EXP
#define DBL_MIN_10_EXP (-307)
#endif
#ifndef DBL_MAX_EXP
#define DBL_MAX_EXP 1024
#endif
#ifndef DBL_MAX_10_EXP
#define DBL_MAX_10_EXP 308
#endif
#ifndef DBL_HAS_SUBNORM
#define DBL_HAS_SUBNORM 1
#endif
