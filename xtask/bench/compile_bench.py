"""cuda.core's side of `compile_bench.sh`: compile the same template
kernel to a cubin and load it, through cuda.core's program cache when this
cuda.core has one (`Program.compile(..., cache=...)`), else its plain
`Program.compile`; one JSON line of medians.

Usage: python3 compile_bench.py CACHE_DIR [INCLUDE_DIR]

With INCLUDE_DIR the kernel includes `saxpy_op.h` from that folder.
cuda.core's cache refuses an include path without an `extra_digest`
(it cannot read the headers itself), so this side hashes the header's
bytes on every compile, as `make_program_cache_key`'s docs ask, and
goes through the cache by key.
"""

import json
import statistics
import sys
import time

from cuda.bindings import driver as cu
from cuda.core import Device, Program, ProgramOptions

SOURCE = r"""
template <typename T>
__global__ void saxpy(T a, const T *x, T *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
// Instantiated in the source: cuda.core's cache refuses name expressions.
template __global__ void saxpy<float>(float, const float *, float *, int);
"""

SOURCE_WITH_INCLUDE = r"""
#include "saxpy_op.h"
template <typename T>
__global__ void saxpy(T a, const T *x, T *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = saxpy_op(a, x[i], y[i]);
}
template __global__ void saxpy<float>(float, const float *, float *, int);
"""


def compile_with_include(cache, arch, include_dir):
    """The documented way to cache a program with an include path:
    fingerprint the headers, make the key, look it up, compile on a miss."""
    import hashlib
    import os

    from cuda.core import ObjectCode
    from cuda.core.utils import make_program_cache_key

    options = ProgramOptions(arch=arch, include_path=[include_dir])
    digest = hashlib.blake2b(digest_size=32)
    for name in sorted(os.listdir(include_dir)):
        with open(os.path.join(include_dir, name), "rb") as header:
            digest.update(name.encode() + b"\0" + header.read())
    key = make_program_cache_key(
        code=SOURCE_WITH_INCLUDE,
        code_type="c++",
        options=options,
        target_type="cubin",
        extra_digest=digest.digest(),
    )
    data = cache.get(key)
    if data is not None:
        return ObjectCode.from_cubin(data)
    code = Program(SOURCE_WITH_INCLUDE, "c++", options).compile("cubin")
    cache[key] = code
    return code


def main():
    device = Device(0)
    device.set_current()
    arch = f"sm_{device.arch}"
    cache = None
    try:
        from cuda.core.utils import FileStreamProgramCache  # newer cuda.core

        cache = FileStreamProgramCache(sys.argv[1])
    except Exception:
        cache = None

    include_dir = sys.argv[2] if len(sys.argv) > 2 else None

    def kernel_of_this_compile():
        if include_dir is not None:
            code = compile_with_include(cache, arch, include_dir)
            return code.get_kernel("_Z5saxpyIfEvT_PKS0_PS0_i")
        program = Program(SOURCE, "c++", ProgramOptions(arch=arch))
        if cache is not None:
            # Name expressions are refused with a cache: the kernel is
            # looked up by its mangled name, which the Rust side does not need.
            code = program.compile("cubin", cache=cache)
            return code.get_kernel("_Z5saxpyIfEvT_PKS0_PS0_i")
        code = program.compile("cubin", name_expressions=("saxpy<float>",))
        return code.get_kernel("saxpy<float>")

    def once():
        start = time.perf_counter()
        kernel = kernel_of_this_compile()
        # The same work as the Rust side's `kernel.function(&context)`:
        # `get_kernel` is `cuLibraryGetKernel` alone, and in LAZY mode the
        # module is loaded into the context by `cuKernelGetFunction`.
        handle = getattr(kernel, "handle", None) or kernel._handle
        err, _ = cu.cuKernelGetFunction(handle)
        assert err == cu.CUresult.CUDA_SUCCESS, err
        del kernel
        return time.perf_counter() - start

    first = once()
    warm = [once() for _ in range(50)]
    import cuda.core

    print(
        json.dumps(
            {
                "side": "python",
                "cuda_core": cuda.core.__version__,
                "program_cache": cache is not None,
                "includes": include_dir is not None,
                "first_s": first,
                "warm_s": statistics.median(warm),
            }
        )
    )


if __name__ == "__main__":
    main()
