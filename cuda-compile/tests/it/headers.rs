//! Our device-side standard headers as real kernel files use them, with
//! NVRTC 12.9 and 13.5: they compile with an empty warning list, next to
//! CCCL in either include order, and all of them can be turned off.

use cuda_compile::{CompileError, Program, Target};

use crate::compile::{compilers, sm90};

/// `FLT_MAX`, `assert`, `std::min` / `std::max`, and `INFINITY` and `M_PI`
/// with no include (nvcc's implicit `cuda_runtime.h`), plus the rest of
/// the C headers kernels include: no warning, and the device assert is in
/// the code.
#[test]
fn what_kernels_include_compiles_without_warnings() {
    let source = r#"
        #include <float.h>
        #include <cassert>
        #include <algorithm>
        #include <stdbool.h>
        #include <cstdlib>
        #include <cstddef>
        #include <cfloat>
        #include <cuda.h>
        extern "C" __global__ void reduce_max(const float *x, float *out, CUdeviceptr raw,
                                              std::size_t n) {
            float best = -FLT_MAX;
            for (std::size_t i = 0; i < n; ++i) best = std::max(best, x[i]);
            assert(n > 0 && raw != 0);
            bool finite = best < INFINITY;
            out[0] = finite ? std::min(best, DBL_MAX > 0 ? 1.0f : 0.0f) : (float)M_PI;
        }
    "#;
    for (major, compiler) in compilers() {
        let program = Program::new(source, "reduce_max.cu");
        let compiled = compiler
            .compile(&program, Target::Ptx, &sm90())
            .unwrap_or_else(|e| panic!("NVRTC {major}: {e:?}"));
        assert_eq!(compiled.warnings, [], "NVRTC {major}");
        let ptx = String::from_utf8_lossy(compiled.code.as_bytes()).into_owned();
        assert!(
            ptx.contains("__assertfail"),
            "NVRTC {major}: no device assert"
        );
    }
}

/// A file written for nvcc: `#include <cuda_runtime.h>` (NVRTC 13.3+'s
/// bundled headers have none: ours stands in), `<mma.h>`, and `std::min`,
/// `std::max` and `std::is_same_v` with no include, as nvcc's implicit
/// `cuda_runtime.h` makes them visible; every such file compiles.
#[test]
fn files_written_for_nvcc_find_what_nvcc_gives_them() {
    let with_runtime = r#"
        #include <cuda_runtime.h>
        extern "C" __global__ void k(float *y, int n, cudaStream_t unused) {
            int i = threadIdx.x;
            float4 v = make_float4(1, 2, 3, 4);
            if (i < n) y[i] = std::min(y[i], v.x) + (std::is_same_v<float, float> ? 1 : 0);
        }
    "#;
    let implicit = r#"
        extern "C" __global__ void k(float *y) {
            y[0] = std::min(y[0], 1.0f) + std::max(1, 2) + (std::is_same_v<int, int> ? 1 : 0);
        }
    "#;
    let with_mma = r#"
        #include <mma.h>
        extern "C" __global__ void k(float *y) { y[0] = sizeof(nvcuda::wmma::fragment<
            nvcuda::wmma::accumulator, 16, 16, 16, float>); }
    "#;
    for (major, compiler) in compilers() {
        let mut sources = vec![("with_runtime.cu", with_runtime), ("implicit.cu", implicit)];
        // 12.x's `crt/mma.h` is in nvcc's wheel, which the 12.x set here
        // lacks; 13.3+ bundles it.
        if major >= 13 {
            sources.push(("with_mma.cu", with_mma));
        }
        for (name, source) in sources {
            let compiled = compiler
                .compile(&Program::new(source, name), Target::Ptx, &sm90())
                .unwrap_or_else(|e| panic!("NVRTC {major}, {name}: {e:?}"));
            let ptx = String::from_utf8_lossy(compiled.code.as_bytes()).into_owned();
            assert!(ptx.contains(".entry k"), "NVRTC {major}, {name}");
        }
    }
}

/// `<cstdint>` and a CUB header, in either order: CCCL's macros and ours
/// are one set, so there is no redefinition warning (there were 22).
#[test]
fn our_stdint_and_cub_in_either_order_do_not_warn() {
    let (ours, cub) = (
        "#include <cstdint>\n",
        "#include <cub/block/block_reduce.cuh>\n",
    );
    for order in [[ours, cub], [cub, ours]] {
        let source = format!(
            "{}{}extern \"C\" __global__ void k(int64_t *y) {{ y[0] = INT8_MIN + INT64_MAX; }}\n",
            order[0], order[1]
        );
        for (major, compiler) in compilers() {
            let program = Program::new(source.clone(), "stdint_cub.cu");
            let compiled = compiler
                .compile(&program, Target::Ptx, &sm90())
                .unwrap_or_else(|e| panic!("NVRTC {major}: {e:?}"));
            assert_eq!(compiled.warnings, [], "NVRTC {major}, {order:?}");
        }
    }
}

/// The C++ headers: libcu++'s, their names also in `std`.
#[test]
fn cxx_headers_come_from_libcudacxx() {
    let source = r#"
        #include <tuple>
        #include <type_traits>
        #include <limits>
        #include <utility>
        template <typename T> __global__ void k(T *y) {
            static_assert(std::is_same<T, float>::value, "float");
            auto pair = std::make_tuple(1, 2.0f);
            y[0] = std::get<1>(pair) + std::numeric_limits<T>::lowest() * 0.0f;
            T moved = std::move(y[1]);
            std::swap(moved, y[2]);
        }
        template __global__ void k<float>(float *);
    "#;
    for (major, compiler) in compilers() {
        let program = Program::new(source, "cxx.cu");
        let compiled = compiler
            .compile(&program, Target::Ptx, &sm90())
            .unwrap_or_else(|e| panic!("NVRTC {major}: {e:?}"));
        assert_eq!(compiled.warnings, [], "NVRTC {major}");
    }
}

/// A warning about the program's own code is kept; with our headers off,
/// a file that includes `<float.h>` or uses `INFINITY` bare does not
/// compile.
#[test]
fn own_warnings_stay_and_the_headers_turn_off() {
    let source = "#include <float.h>\n\
        extern \"C\" __global__ void k(float *y) { int unused; y[0] = FLT_MAX; }\n";
    for (major, compiler) in compilers() {
        let program = Program::new(source, "own.cu");
        let compiled = compiler
            .compile(&program, Target::Ptx, &sm90())
            .unwrap_or_else(|e| panic!("NVRTC {major}: {e:?}"));
        assert_eq!(
            compiled.warnings.len(),
            1,
            "NVRTC {major}: {:?}",
            compiled.warnings
        );
        assert!(
            compiled.warnings[0]
                .to_string()
                .starts_with("own.cu(2): warning")
        );

        let off = sm90().no_builtin_headers(true).no_bundled_headers(true);
        let refused = compiler.compile(&program, Target::Ptx, &off);
        assert!(
            matches!(refused, Err(CompileError::Compilation { .. })),
            "NVRTC {major}"
        );
        let bare = Program::new(
            "extern \"C\" __global__ void k(float *y) { y[0] = INFINITY; }\n",
            "bare.cu",
        );
        let refused = compiler.compile(&bare, Target::Ptx, &sm90().no_builtin_headers(true));
        assert!(
            matches!(refused, Err(CompileError::Compilation { .. })),
            "NVRTC {major}"
        );
    }
}

/// Precompiled headers: NVRTC makes one in the folder given (not a shared
/// `/tmp` one), the outputs are the same bytes as without, and the cache
/// key ignores them (a compile with PCH hits one stored without).
#[test]
fn precompiled_headers_change_speed_not_output() {
    let source = |n: u32| {
        format!(
            "#include <cuda_fp16.h>\n#include <cub/block/block_reduce.cuh>\n\
             __global__ void k{n}(const __half *x, float *out) {{\n\
               using R = cub::BlockReduce<float, 128>;\n\
               __shared__ typename R::TempStorage s;\n\
               float t = R(s).Sum(__half2float(x[threadIdx.x]));\n\
               if (threadIdx.x == 0) *out = t + {n};\n}}\n"
        )
    };
    for (major, compiler) in compilers() {
        let dir = tempfile::tempdir().unwrap();
        let cache = std::sync::Arc::new(cuda_link::LinkCache::new(dir.path().join("cache")));
        let plain = Program::new(source(0), "plain.cu");
        let (_, fresh) = compilers().into_iter().find(|(m, _)| *m == major).unwrap();
        let stored = fresh
            .compile(&plain, Target::Ptx, &sm90())
            .unwrap_or_else(|e| panic!("NVRTC {major}: {e:?}"));

        let pch_dir = dir.path().join("pch");
        let compiler = compiler
            .with_cache(std::sync::Arc::clone(&cache))
            .with_precompiled_headers(&pch_dir);
        for n in 1..=2 {
            let program = Program::new(source(n), format!("k{n}.cu"));
            compiler
                .compile(&program, Target::Ptx, &sm90())
                .unwrap_or_else(|e| panic!("NVRTC {major}: {e:?}"));
        }
        let made = std::fs::read_dir(&pch_dir).map_or(0, |entries| entries.count());
        assert!(made > 0, "NVRTC {major}: no PCH in {}", pch_dir.display());
        // The first compile is in this process's memory tier (the key
        // leaves the PCH out): dropped, so this one compiles.
        cuda_link::MemoryCache::clear();
        let with_pch = compiler.compile(&plain, Target::Ptx, &sm90()).unwrap();
        assert!(!with_pch.from_cache);
        assert_eq!(
            with_pch.code.as_bytes(),
            stored.code.as_bytes(),
            "NVRTC {major}"
        );
        assert_eq!(with_pch.warnings, [], "NVRTC {major}");
        let (_, without) = compilers().into_iter().find(|(m, _)| *m == major).unwrap();
        let without = without.with_cache(std::sync::Arc::clone(&cache));
        let again = without.compile(&plain, Target::Ptx, &sm90()).unwrap();
        assert!(
            again.from_cache,
            "NVRTC {major}: the key holds the PCH options"
        );
    }
}
