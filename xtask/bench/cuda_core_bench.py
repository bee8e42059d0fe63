"""Times cuda.core and raw cuda.bindings on the workloads gpu_bench wrote.

Usage:
    python3 cuda_core_bench.py measure DATA_DIR OUT.json
    python3 cuda_core_bench.py phases DATA_DIR OUT.json

`phases` times each step of cuda.core's small link + load + first
lookup (the same work as gpu_phases) and writes their medians.
`measure` writes medians in seconds; `gpu_pairs.py` (the bundle's
`bench.sh`) pairs them with the Rust side's and writes the report. Part
of `cargo xtask bench-gpu`.
"""

import json
import os
import statistics
import sys
import time


def median_time(runs, fn):
    fn()
    fn()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def import_core():
    try:
        import cuda.core as core
        core.Linker  # noqa: B018 - fails on releases that only have .experimental
    except (ImportError, AttributeError):
        import cuda.core.experimental as core
    return core


def make_linker(core, codes, options):
    try:
        return core.Linker(*codes, options=options)
    except TypeError:
        return core.Linker(options, *codes)


def measure(data_dir, out_path):
    core = import_core()
    from cuda.bindings import driver as cu

    core.Device(0).set_current()
    read = lambda name: open(os.path.join(data_dir, name), "rb").read()  # noqa: E731
    results = {"cuda_core_version": getattr(core, "__version__", "?")}

    # Raw calls first: cuda.core never unloads what ObjectCode loads, so
    # measuring it first would leave every later load with its leftovers.
    for name, kernel in (("small", "saxpy"), ("big", "kernel_0")):
        cubin = read(f"{name}.cubin")

        def raw_load_lookup():
            err, lib = cu.cuLibraryLoadData(cubin, None, None, 0, None, None, 0)
            assert err == cu.CUresult.CUDA_SUCCESS, err
            err, handle = cu.cuLibraryGetKernel(lib, kernel.encode())
            assert err == cu.CUresult.CUDA_SUCCESS, err
            err, function = cu.cuKernelGetFunction(handle)
            assert err == cu.CUresult.CUDA_SUCCESS, err
            (err,) = cu.cuLibraryUnload(lib)
            assert err == cu.CUresult.CUDA_SUCCESS, err

        results[f"{name}/bindings_raw_load_lookup"] = median_time(50, raw_load_lookup)

    for name, kernel in (("small", "saxpy"), ("big", "kernel_0")):
        cubin = read(f"{name}.cubin")

        def core_load_lookup():
            code = core.ObjectCode.from_cubin(cubin)
            code.get_kernel(kernel)

        results[f"{name}/cuda_core_load_lookup"] = median_time(50, core_load_lookup)

        # The same work as ours and the raw calls: `get_kernel` is
        # `cuLibraryGetKernel` alone, and in LAZY mode the module is
        # loaded into the context by `cuKernelGetFunction`, which cuda.core
        # calls only at a launch. (cuda.core never unloads; we and the raw
        # calls do.)
        def core_load_lookup_function():
            code = core.ObjectCode.from_cubin(cubin)
            k = code.get_kernel(kernel)
            handle = getattr(k, "handle", None) or k._handle
            err, _ = cu.cuKernelGetFunction(handle)
            assert err == cu.CUresult.CUDA_SUCCESS, err

        results[f"{name}/cuda_core_load_lookup_function"] = median_time(
            50, core_load_lookup_function
        )

    ptx = read("small.ptx")
    options = core.LinkerOptions(arch="sm_90", no_cache=True)

    def core_e2e():
        linker = make_linker(core, [core.ObjectCode.from_ptx(ptx)], options)
        linker.link("cubin").get_kernel("saxpy")

    results["small/cuda_core_e2e_link_load_lookup"] = median_time(30, core_e2e)

    # The same work as ours (and the raw floor's): in LAZY mode the module
    # is loaded into the context by `cuKernelGetFunction`.
    def core_e2e_function():
        linker = make_linker(core, [core.ObjectCode.from_ptx(ptx)], options)
        k = linker.link("cubin").get_kernel("saxpy")
        handle = getattr(k, "handle", None) or k._handle
        err, _ = cu.cuKernelGetFunction(handle)
        assert err == cu.CUresult.CUDA_SUCCESS, err

    results["small/cuda_core_e2e_link_load_lookup_function"] = median_time(
        30, core_e2e_function)

    code = core.ObjectCode.from_cubin(read("small.cubin"))
    code.get_kernel("saxpy")
    lookups = 100_000
    per = median_time(5, lambda: [code.get_kernel("saxpy") for _ in range(lookups)]) / lookups
    results["cuda_core_cached_lookup"] = per

    with open(out_path, "w") as out:
        json.dump(results, out, indent=1)
    for key, value in results.items():
        if isinstance(value, float):
            print(f"{key:<40} {value * 1e6:>10.1f} µs", file=sys.stderr)


def phases(data_dir, out_path, runs=40):
    """cuda.core's small link + load + lookup, step by step: the medians
    per step over `runs` iterations, after three warm-up iterations."""
    core = import_core()
    from cuda.bindings import driver as cu

    core.Device(0).set_current()
    ptx = open(os.path.join(data_dir, "small.ptx"), "rb").read()
    options = core.LinkerOptions(arch="sm_90", no_cache=True)
    steps = (
        # (name, what cuda.core calls in it)
        ("ObjectCode.from_ptx", "stores the bytes"),
        ("Linker(...)", "nvJitLinkCreate, options rendered, nvJitLinkAddData"),
        ("Linker.link", "nvJitLinkComplete, nvJitLinkGetLinkedCubin, logs"),
        ("get_kernel", "cuLibraryLoadData, cuLibraryGetKernel"),
        ("cuKernelGetFunction", "the module's load in LAZY mode"),
        ("e2e", "the sum"),
    )
    samples = {name: [] for name, _ in steps}
    for run in range(runs + 3):
        t0 = time.perf_counter()
        code = core.ObjectCode.from_ptx(ptx)
        t1 = time.perf_counter()
        linker = make_linker(core, [code], options)
        t2 = time.perf_counter()
        cubin = linker.link("cubin")
        t3 = time.perf_counter()
        kernel = cubin.get_kernel("saxpy")
        t4 = time.perf_counter()
        handle = getattr(kernel, "handle", None) or kernel._handle
        err, _ = cu.cuKernelGetFunction(handle)
        assert err == cu.CUresult.CUDA_SUCCESS, err
        t5 = time.perf_counter()
        if run < 3:
            continue
        for (name, _), seconds in zip(steps, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t5 - t0)):
            samples[name].append(seconds)
    results = {name: statistics.median(values) for name, values in samples.items()}
    with open(out_path, "w") as out:
        json.dump(results, out, indent=1)
    print(f"== cuda.core {getattr(core, '__version__', '?')}: median per iteration of {runs}",
          file=sys.stderr)
    for name, calls in steps:
        print(f"{name:<24} {results[name] * 1e6:>9.1f} µs  ({calls})", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "measure":
        measure(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "phases":
        phases(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
