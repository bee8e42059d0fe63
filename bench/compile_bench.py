"""cuda.core's side of `compile_bench.sh`: compile the same template
kernel to a cubin and load it, through cuda.core's program cache when this
cuda.core has one (`Program.compile(..., cache=...)`), else its plain
`Program.compile`; one JSON line of medians.

Usage: python3 compile_bench.py CACHE_DIR
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

    def once():
        start = time.perf_counter()
        program = Program(SOURCE, "c++", ProgramOptions(arch=arch))
        if cache is not None:
            # Name expressions are refused with a cache: the kernel is
            # looked up by its mangled name, which the Rust side does not need.
            code = program.compile("cubin", cache=cache)
            kernel = code.get_kernel("_Z5saxpyIfEvT_PKS0_PS0_i")
        else:
            code = program.compile("cubin", name_expressions=("saxpy<float>",))
            kernel = code.get_kernel("saxpy<float>")
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
                "first_s": first,
                "warm_s": statistics.median(warm),
            }
        )
    )


if __name__ == "__main__":
    main()
