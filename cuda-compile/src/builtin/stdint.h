#pragma once
// cuda-compile: CCCL's <cuda/std/cstdint> first, where it is on the include
// path and the dialect is C++17 (CCCL's minimum), so that a file that
// includes this and a CUB header sees each macro defined once, in either
// order; then what CCCL left undefined (CCCL 12 defines no float macros).
#if __cplusplus >= 201703L && __has_include(<cuda/std/cstdint>)
#include <cuda/std/cstdint>
#endif
#include <limits.h>
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef signed short int16_t;
typedef unsigned short uint16_t;
typedef signed int int32_t;
typedef unsigned int uint32_t;
typedef signed long long int64_t;
typedef unsigned long long uint64_t;
typedef int8_t int_fast8_t;
typedef uint8_t uint_fast8_t;
typedef int8_t int_least8_t;
typedef uint8_t uint_least8_t;
typedef int16_t int_fast16_t;
typedef uint16_t uint_fast16_t;
typedef int16_t int_least16_t;
typedef uint16_t uint_least16_t;
typedef int32_t int_fast32_t;
typedef uint32_t uint_fast32_t;
typedef int32_t int_least32_t;
typedef uint32_t uint_least32_t;
typedef int64_t int_fast64_t;
typedef uint64_t uint_fast64_t;
typedef int64_t int_least64_t;
typedef uint64_t uint_least64_t;
typedef int64_t intptr_t;
typedef uint64_t uintptr_t;
typedef int64_t intmax_t;
typedef uint64_t uintmax_t;
#ifndef INT8_MIN
#define INT8_MIN (-128)
#endif
#ifndef INT16_MIN
#define INT16_MIN (-32767 - 1)
#endif
#ifndef INT32_MIN
#define INT32_MIN (-2147483647 - 1)
#endif
#ifndef INT64_MIN
#define INT64_MIN (-9223372036854775807LL - 1)
#endif
#ifndef INT8_MAX
#define INT8_MAX 127
#endif
#ifndef INT16_MAX
#define INT16_MAX 32767
#endif
#ifndef INT32_MAX
#define INT32_MAX 2147483647
#endif
#ifndef INT64_MAX
#define INT64_MAX 9223372036854775807LL
#endif
#ifndef UINT8_MAX
#define UINT8_MAX 255
#endif
#ifndef UINT16_MAX
#define UINT16_MAX 65535
#endif
#ifndef UINT32_MAX
#define UINT32_MAX 4294967295U
#endif
#ifndef UINT64_MAX
#define UINT64_MAX 18446744073709551615ULL
#endif
#ifndef INTPTR_MIN
#define INTPTR_MIN INT64_MIN
#endif
#ifndef INTPTR_MAX
#define INTPTR_MAX INT64_MAX
#endif
#ifndef UINTPTR_MAX
#define UINTPTR_MAX UINT64_MAX
#endif
#ifndef INTMAX_MIN
#define INTMAX_MIN INT64_MIN
#endif
#ifndef INTMAX_MAX
#define INTMAX_MAX INT64_MAX
#endif
#ifndef UINTMAX_MAX
#define UINTMAX_MAX UINT64_MAX
#endif
#ifndef SIZE_MAX
#define SIZE_MAX UINT64_MAX
#endif
#ifndef PTRDIFF_MIN
#define PTRDIFF_MIN INT64_MIN
#endif
#ifndef PTRDIFF_MAX
#define PTRDIFF_MAX INT64_MAX
#endif
#ifndef INT8_C
#define INT8_C(c) c
#endif
#ifndef INT16_C
#define INT16_C(c) c
#endif
#ifndef INT32_C
#define INT32_C(c) c
#endif
#ifndef INT64_C
#define INT64_C(c) c##LL
#endif
#ifndef UINT8_C
#define UINT8_C(c) c
#endif
#ifndef UINT16_C
#define UINT16_C(c) c
#endif
#ifndef UINT32_C
#define UINT32_C(c) c##U
#endif
#ifndef UINT64_C
#define UINT64_C(c) c##ULL
#endif
#ifndef INTMAX_C
#define INTMAX_C(c) c##LL
#endif
#ifndef UINTMAX_C
#define UINTMAX_C(c) c##ULL
#endif
