#pragma once
// cuda-compile: C++ has bool, true and false; this is C's header for it.
#define __bool_true_false_are_defined 1
