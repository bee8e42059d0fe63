#pragma once
#include <__cuda_compile/math_constants.h>
