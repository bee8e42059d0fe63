"""cuda.core's side of the repeated-compile figure (issue 53, item 1): the
fp16 + CUB program of `cargo bench -p cuda-compile --bench compile`,
compiled once, then served 200 times from cuda.core's in-memory program
cache (`cuda.core.utils.InMemoryProgramCache`) as its docs show for a
program with an include path: `make_program_cache_key` with an
`extra_digest`, a lookup, `ObjectCode.from_cubin`. The digest is a
constant here: cuda.core reads no header, and fingerprinting them would
be the caller's cost, left out in cuda.core's favour.

Usage: python3 memory_hit.py INCLUDE_DIR... ; prints one line.
"""

import statistics
import sys
import time

from cuda.core import Device, ObjectCode, Program, ProgramOptions

SOURCE = r"""
#include <cuda_fp16.h>
#include <cub/block/block_reduce.cuh>
__global__ void sum(const __half *x, float *out) {
    using Reduce = cub::BlockReduce<float, 128>;
    __shared__ typename Reduce::TempStorage storage;
    float total = Reduce(storage).Sum(__half2float(x[threadIdx.x]));
    if (threadIdx.x == 0) *out = total;
}
"""


def main():
    try:
        from cuda.core.utils import InMemoryProgramCache, make_program_cache_key
    except ImportError as error:
        print(f"cuda.core in-memory hit: not measured ({error})")
        return
    Device().set_current()
    options = ProgramOptions(arch="sm_90", include_path=sys.argv[1:])
    cache = InMemoryProgramCache()
    digest = b"headers fingerprinted by the caller"

    def hit():
        key = make_program_cache_key(
            code=SOURCE,
            code_type="c++",
            options=options,
            target_type="cubin",
            extra_digest=digest,
        )
        data = cache.get(key)
        if data is None:
            code = Program(SOURCE, "c++", options).compile("cubin")
            cache[key] = code
            return code
        return ObjectCode.from_cubin(data)

    hit()
    times = []
    for _ in range(200):
        start = time.perf_counter()
        hit()
        times.append(time.perf_counter() - start)
    print(f"cuda.core in-memory hit: {statistics.median(times) * 1e6:.1f} µs (median of 200)")


main()
