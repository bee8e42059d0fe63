#pragma once
// cuda-compile: the device side of <stddef.h>.
typedef decltype(sizeof(0)) size_t;
typedef decltype((char *)0 - (char *)0) ptrdiff_t;
#if __cplusplus >= 201103L
typedef decltype(nullptr) nullptr_t;
#endif
typedef struct { long long __a; long double __b; } max_align_t;
#ifndef NULL
#define NULL 0
#endif
#ifndef offsetof
#define offsetof(type, member) __builtin_offsetof(type, member)
#endif
