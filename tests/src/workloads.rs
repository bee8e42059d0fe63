//! The benchmark workloads, generated so that their size is a parameter.

use std::fmt::Write as _;

/// CUDA C++ with `count` distinct kernels, about 1 KB of PTX each.
pub fn many_kernels_cu(count: usize) -> String {
    let mut source = String::new();
    for k in 0..count {
        let _ = write!(
            source,
            "extern \"C\" __global__ void kernel_{k}(float *y, const float *x, int n)\n{{\n\
             \x20   int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
             \x20   if (i < n) {{\n\
             \x20       float v = x[i] * {k}.5f + y[i];\n\
             \x20       for (int r = 0; r < {rounds}; ++r) v = v * 1.0001f + (float)(r ^ {k});\n\
             \x20       y[i] = v > 0.f ? sqrtf(v) : v * 0.5f;\n\
             \x20   }}\n}}\n",
            rounds = 3 + k % 5,
        );
    }
    source
}

/// `count` CUDA C++ modules for an LTO link: module 0 holds the kernel and
/// calls one device function defined in each of the others.
pub fn lto_modules_cu(count: usize) -> Vec<String> {
    let mut modules = Vec::with_capacity(count);
    let mut main = String::new();
    for m in 1..count {
        let _ = writeln!(main, "extern \"C\" __device__ float step_{m}(float v);");
        modules.push(format!(
            "extern \"C\" __device__ float step_{m}(float v) {{ return v * {m}.25f + {m}.0f; }}\n"
        ));
    }
    main.push_str("extern \"C\" __global__ void lto_chain(float *y, int n)\n{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i >= n) return;\n    float v = y[i];\n");
    for m in 1..count {
        let _ = writeln!(main, "    v = step_{m}(v);");
    }
    main.push_str("    y[i] = v;\n}\n");
    modules.insert(0, main);
    modules
}
