//! Our small device-side C library headers. NVRTC has none, and real
//! kernel files include these for fixed-width types, limits and math
//! constants. Kept small on purpose: pre-including CCCL's type traits
//! costs about 1.2 s a file. The fixed-width types are CCCL's under
//! NVRTC (`int64_t` is `long long`, `int_fast16_t` is `int16_t`), so that
//! a file including both ours and `<cuda/std/...>` compiles; a kernel
//! taking `int64_t` mangles it `x`, where nvcc on Linux (`long`) has `l`.

/// `(include name, contents)`.
pub(crate) const HEADERS: &[(&str, &str)] = &[
    ("stdint.h", STDINT_H),
    ("cstdint", CSTDINT),
    ("limits.h", LIMITS_H),
    ("climits", CLIMITS),
    ("math.h", MATH_H),
    ("cmath", CMATH),
    ("stdio.h", STDIO_H),
    ("cstdio", CSTDIO),
];

const STDINT_H: &str = r#"#pragma once
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
#define INT8_MIN (-128)
#define INT16_MIN (-32767 - 1)
#define INT32_MIN (-2147483647 - 1)
#define INT64_MIN (-9223372036854775807LL - 1)
#define INT8_MAX 127
#define INT16_MAX 32767
#define INT32_MAX 2147483647
#define INT64_MAX 9223372036854775807LL
#define UINT8_MAX 255
#define UINT16_MAX 65535
#define UINT32_MAX 4294967295U
#define UINT64_MAX 18446744073709551615ULL
#define INTPTR_MIN INT64_MIN
#define INTPTR_MAX INT64_MAX
#define UINTPTR_MAX UINT64_MAX
#define INTMAX_MIN INT64_MIN
#define INTMAX_MAX INT64_MAX
#define UINTMAX_MAX UINT64_MAX
#define SIZE_MAX UINT64_MAX
#define PTRDIFF_MIN INT64_MIN
#define PTRDIFF_MAX INT64_MAX
#define INT8_C(c) c
#define INT16_C(c) c
#define INT32_C(c) c
#define INT64_C(c) c##LL
#define UINT8_C(c) c
#define UINT16_C(c) c
#define UINT32_C(c) c##U
#define UINT64_C(c) c##ULL
#define INTMAX_C(c) c##LL
#define UINTMAX_C(c) c##ULL
"#;

const CSTDINT: &str = r#"#pragma once
#include <stdint.h>
namespace std {
using ::int8_t; using ::int16_t; using ::int32_t; using ::int64_t;
using ::uint8_t; using ::uint16_t; using ::uint32_t; using ::uint64_t;
using ::int_least8_t; using ::int_least16_t; using ::int_least32_t; using ::int_least64_t;
using ::uint_least8_t; using ::uint_least16_t; using ::uint_least32_t; using ::uint_least64_t;
using ::int_fast8_t; using ::int_fast16_t; using ::int_fast32_t; using ::int_fast64_t;
using ::uint_fast8_t; using ::uint_fast16_t; using ::uint_fast32_t; using ::uint_fast64_t;
using ::intptr_t; using ::uintptr_t; using ::intmax_t; using ::uintmax_t;
}
"#;

const LIMITS_H: &str = r#"#pragma once
#define CHAR_BIT 8
#define SCHAR_MIN (-128)
#define SCHAR_MAX 127
#define UCHAR_MAX 255
#define CHAR_MIN SCHAR_MIN
#define CHAR_MAX SCHAR_MAX
#define SHRT_MIN (-32767 - 1)
#define SHRT_MAX 32767
#define USHRT_MAX 65535
#define INT_MIN (-2147483647 - 1)
#define INT_MAX 2147483647
#define UINT_MAX 4294967295U
#define LONG_MIN (-9223372036854775807L - 1)
#define LONG_MAX 9223372036854775807L
#define ULONG_MAX 18446744073709551615UL
#define LLONG_MIN (-9223372036854775807LL - 1)
#define LLONG_MAX 9223372036854775807LL
#define ULLONG_MAX 18446744073709551615ULL
"#;

const CLIMITS: &str = "#pragma once\n#include <limits.h>\n";

const MATH_H: &str = r#"#pragma once
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
#ifndef HUGE_VALF
#define HUGE_VALF INFINITY
#endif
#ifndef HUGE_VAL
#define HUGE_VAL __longlong_as_double(0x7ff0000000000000LL)
#endif
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
"#;

/// `<math.h>` and the device math functions NVRTC declares, also in `std`
/// (kernel code writes `std::sqrt`, `std::fmax`, `std::abs`).
const CMATH: &str = r#"#pragma once
#include <math.h>
namespace std {
    using ::sqrt; using ::fabs; using ::abs; using ::exp; using ::log;
    using ::pow; using ::sin; using ::cos; using ::tan; using ::tanh;
    using ::floor; using ::ceil; using ::fmin; using ::fmax; using ::fmod;
    using ::round; using ::isnan; using ::isinf; using ::isfinite;
    using ::erf; using ::exp2; using ::log2; using ::log10; using ::trunc;
    using ::cbrt; using ::hypot; using ::atan2; using ::atan; using ::asin;
    using ::acos; using ::sinh; using ::cosh; using ::expm1; using ::log1p;
    using ::copysign; using ::signbit; using ::lround;
}
"#;

const STDIO_H: &str =
    "#pragma once\n// printf is built into device code; nothing else of stdio is.\n";

const CSTDIO: &str = "#pragma once\n#include <stdio.h>\n";
