#pragma once
// cuda-compile: the device side of <stdlib.h>: malloc, free and abs are
// built into NVRTC's device code; nothing else of stdlib is.
#include <stddef.h>
#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
