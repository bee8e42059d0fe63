"""Writes the NVVM IR that numba-cuda hands libNVVM, one folder per kernel.

Run on any machine, no GPU: numba-cuda compiles to PTX on the CPU, and this
script keeps what it passed to `nvvmAddModuleToProgram` (after numba's own
rewrites) and the options it compiled with:

    python3 -m venv /tmp/numba && /tmp/numba/bin/pip install numba-cuda==0.30.4 \
        nvidia-nvvm==13.0.88 nvidia-cuda-nvcc==13.0.88 nvidia-cuda-nvrtc==13.0.88
    /tmp/numba/bin/python tests/nvvm/make_fixtures.py tests/nvvm/numba

Each kernel's folder holds `module.N.ll` (numba's modules, in the order it
added them), `options.txt` (one option a line) and `numba.ptx` (what numba
made of them, for comparison). libdevice is not kept: numba lazily adds the
one beside libNVVM, as cuda-compile does.

`records/module.0.bc` is the same module as bitcode, as cuda.core's
`Program(code_type="nvvm")` takes it, written by LLVM 14's `llvm-as` when
one is on `PATH` (both libNVVM majors read it).
"""

import math
import os
import shutil
import subprocess
import sys

import numpy as np
from numba import cuda, float32, float64, int64, int32, from_dtype
from numba.cuda import dispatcher as cuda_dispatcher
from numba.cuda.cudadrv import nvvm

captured = []
_add_module = nvvm.CompilationUnit.add_module
_compile = nvvm.CompilationUnit.compile


def add_module(self, buffer):
    captured.append(("module", bytes(buffer)))
    return _add_module(self, buffer)


def compile_(self):
    captured.append(("options", list(self._options_str)))
    return _compile(self)


nvvm.CompilationUnit.add_module = add_module
nvvm.CompilationUnit.compile = compile_


class _Device:
    """What numba asks of the current device to compile a device function
    called from a kernel: on a machine without one, compute_90's."""

    compute_capability = (9, 0)


cuda_dispatcher.get_current_device = lambda: _Device()


def math_libdevice(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = math.sin(x[i]) * math.exp(x[i]) + math.sqrt(abs(x[i])) + math.pow(x[i], 3.0)


def shared_atomics(counts, values):
    tile = cuda.shared.array(128, int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[t] = values[i] if i < values.size else 0
    cuda.syncthreads()
    if t == 0:
        total = 0
        for k in range(cuda.blockDim.x):
            total += tile[k]
        cuda.atomic.add(counts, 0, total)
    cuda.atomic.max(counts, 1, tile[t])


def float64_int64(out, a, b):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] * 3 + (b[i] // 7) - (b[i] % 5)


def local_array(out, x):
    i = cuda.grid(1)
    if i < out.size:
        window = cuda.local.array(8, float32)
        for k in range(8):
            window[k] = x[i] * (k + 1)
        acc = float32(0)
        for k in range(8):
            acc += window[7 - k] / (k + 1)
        out[i] = acc


@cuda.jit(device=True)
def clamp(v, lo, hi):
    return min(max(v, lo), hi)


@cuda.jit(device=True)
def smooth(v):
    return clamp(v * v * (3.0 - 2.0 * v), 0.0, 1.0)


def device_functions(out, x):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = smooth(clamp(x[i], 0.0, 1.0))


def array_arguments(out, matrix):
    row, col = cuda.grid(2)
    if row < matrix.shape[0] and col < matrix.shape[1]:
        out[col, row] = matrix[row, col] + row * matrix.strides[0] // 8


PARTICLE = np.dtype([("x", np.float64), ("mass", np.float32), ("id", np.int64)], align=True)
particle = from_dtype(PARTICLE)


def records(out, particles):
    i = cuda.grid(1)
    if i < particles.size:
        p = particles[i]
        out[i] = p.x * p.mass + p.id
        particles[i].x = p.x + 1.0


KERNELS = {
    "math_libdevice": (math_libdevice, (float64[:], float64[:])),
    "shared_atomics": (shared_atomics, (int32[:], int32[:])),
    "float64_int64": (float64_int64, (float64[:], float64[:], int64[:])),
    "local_array": (local_array, (float32[:], float32[:])),
    "device_functions": (device_functions, (float64[:], float64[:])),
    "array_arguments": (array_arguments, (float64[:, :], float64[:, :])),
    "records": (records, (float64[:], particle[:])),
}


def main(out_dir):
    for name, (function, signature) in KERNELS.items():
        captured.clear()
        ptx, _ = cuda.compile_ptx(function, signature, cc=(9, 0))
        folder = os.path.join(out_dir, name)
        os.makedirs(folder, exist_ok=True)
        modules = [body for kind, body in captured if kind == "module"]
        options = [body for kind, body in captured if kind == "options"][-1]
        for index, body in enumerate(modules):
            with open(os.path.join(folder, f"module.{index}.ll"), "wb") as f:
                f.write(body)
        with open(os.path.join(folder, "options.txt"), "w") as f:
            f.write("\n".join(options) + "\n")
        with open(os.path.join(folder, "numba.ptx"), "w") as f:
            f.write(ptx)
        print(name, len(modules), "modules", options)
    llvm_as = shutil.which("llvm-as-14") or shutil.which("llvm-as")
    if llvm_as:
        records = os.path.join(out_dir, "records", "module.0")
        subprocess.run([llvm_as, records + ".ll", "-o", records + ".bc"], check=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "numba"))
