//! Real compiles with NVRTC 12.9 and 13.5 on the CPU: every target, name
//! expressions, our libc headers, NVIDIA's headers without a toolkit, and
//! the compile cache against every change that must miss.

use std::path::PathBuf;
use std::sync::Arc;

use cuda_compile::{CompileError, Compiler, Program, ProgramOptions, Std, Target};
use cuda_link::inspect::Contents;
use cuda_link::{Arch, LinkCache, ObjectKind};
use nvrtc_sys::Nvrtc;

/// A compiler per provisioned NVRTC major; empty (a skip) outside
/// `cargo xtask test`, a failure there when one is missing.
pub(crate) fn compilers() -> Vec<(u32, Compiler)> {
    let mut found = Vec::new();
    for major in [12, 13] {
        let var = format!("CUDA_LINK_NVRTC{major}_PATH");
        let Some(path) = std::env::var_os(&var).map(PathBuf::from) else {
            if std::env::var_os("CUDA_LINK_REQUIRE_REDIST").is_some() {
                panic!("{var} is not set although CUDA_LINK_REQUIRE_REDIST is");
            }
            cuda_link_tests::skip(&format!("{var} is unset; run through `cargo xtask test`"));
            continue;
        };
        // SAFETY: the pinned NVRTC wheel that `cargo xtask test` installed.
        let nvrtc = unsafe { Nvrtc::open(&path) }.unwrap_or_else(|e| panic!("{e:?}"));
        found.push((major, Compiler::with_nvrtc(Arc::new(nvrtc))));
    }
    found
}

const SAXPY: &str = r#"
template <typename T>
__global__ void saxpy(T a, const T *x, T *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
namespace ns { __device__ float bias = 1.5f; }
extern "C" __global__ void plain(float *x) { x[threadIdx.x] += ns::bias; }
"#;

pub(crate) fn sm90() -> ProgramOptions {
    ProgramOptions::for_arch(Arch::sm(90))
}

fn kernels(code: &cuda_link::ObjectCode) -> Vec<String> {
    code.inspect()
        .unwrap()
        .kernels()
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// PTX, LTO-IR and a cubin, with name expressions: the lowered names are
/// the kernels' and globals' real symbols, kept on the output.
#[test]
fn every_target_with_name_expressions() {
    for (major, compiler) in compilers() {
        let program = Program::new(SAXPY, "saxpy.cu")
            .name_expression("saxpy<float>")
            .name_expression("&ns::bias");
        for target in [Target::Ptx, Target::Ltoir, Target::Cubin] {
            let compiled = compiler
                .compile(&program, target, &sm90())
                .unwrap_or_else(|e| panic!("NVRTC {major}, {target:?}: {e:?}"));
            let code = &compiled.code;
            let lowered = code.lowered_name("saxpy<float>").unwrap();
            assert!(lowered.starts_with("_Z5saxpyIfEvT_PKS0_PS0_i"), "{lowered}");
            assert_eq!(code.lowered_name("&ns::bias"), Some("_ZN2ns4biasE"));
            let info = code.inspect().unwrap();
            match (target, &info.contents) {
                (Target::Ptx, Contents::Ptx(ptx)) => {
                    assert_eq!(ptx.target, ["sm_90"]);
                    assert!(kernels(code).contains(&lowered.to_owned()));
                }
                (Target::Cubin, Contents::Cubin(cubin)) => {
                    assert_eq!(cubin.arch, Arch::sm(90));
                    let found = kernels(code);
                    assert!(found.contains(&lowered.to_owned()), "{found:?}");
                    assert!(found.contains(&"plain".to_owned()), "{found:?}");
                }
                (Target::Ltoir, Contents::Ltoir(ltoir)) => assert_eq!(ltoir.arch, Arch::sm(90)),
                (_, other) => panic!("NVRTC {major}, {target:?}: {other:?}"),
            }
            assert!(!compiled.from_cache);
        }
    }
}

/// A compile error is typed and carries NVRTC's log with the line.
#[test]
fn a_compile_error_carries_the_log() {
    for (major, compiler) in compilers() {
        let program = Program::new("__global__ void k() { undeclared = 1; }\n", "broken.cu");
        match compiler.compile(&program, Target::Ptx, &sm90()) {
            Err(CompileError::Compilation { program, log }) => {
                assert_eq!(program, "broken.cu");
                assert!(log.contains("broken.cu(1)"), "NVRTC {major}: {log}");
                assert!(log.contains("undeclared"), "NVRTC {major}: {log}");
            }
            other => panic!("NVRTC {major}: {other:?}"),
        }
    }
}

/// An option newer than the loaded NVRTC is refused before NVRTC runs.
#[test]
fn options_newer_than_nvrtc_are_typed_errors() {
    for (major, compiler) in compilers() {
        let program = Program::new("__global__ void k() {}", "k.cu");
        let result = compiler.compile(&program, Target::Ptx, &sm90().enable_tile(true));
        match (major, result) {
            (
                12,
                Err(CompileError::Unsupported {
                    option,
                    since,
                    nvrtc,
                }),
            ) => {
                assert_eq!((option, since, nvrtc.0), ("enable_tile", (13, 3), 12));
            }
            (13, Ok(_)) => {}
            (_, other) => panic!("NVRTC {major}: {other:?}"),
        }
        let wconversion = compiler.compile(&program, Target::Ptx, &sm90().wconversion(true));
        assert_eq!(major == 12, wconversion.is_err(), "NVRTC {major}");
    }
}

/// Kernel files that include the C library compile unmodified; without
/// our headers they do not.
#[test]
fn libc_headers_compile_unmodified() {
    let source = r#"
        #include <stdint.h>
        #include <cstdint>
        #include <climits>
        #include <cmath>
        #include <math.h>
        #include <cstdio>
        __global__ void k(uint64_t *out, std::int32_t n) {
            out[0] = INT_MAX + (uint64_t)n + UINT64_C(1);
            float x = sqrtf((float)M_PI) + INFINITY + std::sqrt(2.0f) + std::fmax(x, 1.0f);
            x += (float)std::abs(n) + (float)std::pow(2.0, 0.5);
            if (x < 0) printf("never\n");
        }
    "#;
    for (major, compiler) in compilers() {
        let program = Program::new(source, "libc.cu");
        let compiled = compiler.compile(&program, Target::Cubin, &sm90());
        let code = compiled
            .unwrap_or_else(|e| panic!("NVRTC {major}: {e:?}"))
            .code;
        assert_eq!(kernels(&code).len(), 1);
        let bare = sm90().no_builtin_headers(true).no_bundled_headers(true);
        let without = compiler.compile(&program, Target::Cubin, &bare);
        assert!(
            matches!(without, Err(CompileError::Compilation { .. })),
            "NVRTC {major}: {without:?}"
        );
    }
}

/// Our `<stdint.h>` and CCCL's `<cuda/std/...>` in one file, in either
/// order, as candle's `reduce.cu` has them: their fixed-width types agree.
#[test]
fn our_libc_headers_and_cccl_agree() {
    for order in [
        "#include <stdint.h>\n#include <cuda/std/limits>\n#include <cuda/std/cstdint>\n",
        "#include <cuda/std/cstdint>\n#include <cstdint>\n#include <climits>\n#include <cuda/std/limits>\n",
    ] {
        let source = format!(
            "{order}__global__ void k(int64_t *out, uint64_t n) {{\n\
             out[0] = cuda::std::numeric_limits<int64_t>::max() - (int64_t)n + INT64_C(1);\n}}\n"
        );
        for (major, compiler) in compilers() {
            let program = Program::new(source.clone(), "mixed.cu");
            let compiled = compiler.compile(&program, Target::Cubin, &sm90());
            let code = compiled
                .unwrap_or_else(|e| panic!("NVRTC {major}, {order}: {e:?}"))
                .code;
            assert_eq!(kernels(&code), ["_Z1kPxy"], "NVRTC {major}");
        }
    }
}

/// fp16, CCCL and cub (next to our `<cmath>`), for sm_90, as LTO-IR and
/// as a cubin, with only the pinned wheels: NVRTC 13.5 installs its
/// bundled headers, NVRTC 12.9 takes the runtime and CCCL wheels' folders.
#[test]
fn fp16_cccl_and_cub_compile_without_a_toolkit() {
    let source = r#"
        #include <cmath>
        #include <cuda_fp16.h>
        #include <cuda/std/cstdint>
        #include <cub/block/block_reduce.cuh>
        __global__ void sum(const __half *x, float *out) {
            using Reduce = cub::BlockReduce<float, 128>;
            __shared__ typename Reduce::TempStorage storage;
            float v = std::sqrt(__half2float(x[threadIdx.x]));
            float total = Reduce(storage).Sum(v);
            if (threadIdx.x == 0) *out = total + (float)cuda::std::int32_t{0};
        }
    "#;
    let cache_dir = tempfile::tempdir().unwrap();
    for (major, compiler) in compilers() {
        let compiler = compiler.with_cache(Arc::new(LinkCache::new(cache_dir.path())));
        let program = Program::new(source, "reduce.cu");
        let options = sm90().std(Std::Cxx17);
        for target in [Target::Ltoir, Target::Cubin] {
            let compiled = compiler
                .compile(&program, target, &options)
                .unwrap_or_else(|e| panic!("NVRTC {major}, {target:?}: {e:?}"));
            let kind = compiled.code.kind();
            assert_eq!(kind == ObjectKind::Ltoir, target == Target::Ltoir);
        }
    }
}

/// Without an arch and without a current context (no GPU here), the
/// error says to set one.
#[test]
fn no_arch_and_no_context_is_a_typed_error() {
    for (major, compiler) in compilers() {
        if cuda_link::current_device_arch().is_some() {
            return;
        }
        let program = Program::new("__global__ void k() {}", "k.cu");
        let result = compiler.compile(&program, Target::Cubin, &ProgramOptions::default());
        assert!(
            matches!(result, Err(CompileError::MissingArch)),
            "NVRTC {major}: {result:?}"
        );
    }
}

/// `extra_options` reach NVRTC as written (`-default-device` makes an
/// unannotated function a device function); an option NVRTC does not
/// know is a typed error naming it, with either major.
#[test]
fn raw_options_pass_through_and_unknown_ones_are_named() {
    let source = "constexpr float twice(float x) { return 2 * x; }\n\
                  __global__ void k(float *y) { y[0] = twice(y[0]); }\n";
    for (major, compiler) in compilers() {
        let program = Program::new(source, "twice.cu");
        let refused = compiler.compile(&program, Target::Ptx, &sm90());
        assert!(
            matches!(refused, Err(CompileError::Compilation { .. })),
            "NVRTC {major}: an unannotated function is host code under NVRTC"
        );
        let raw = sm90().extra_options(["-default-device"]);
        compiler
            .compile(&program, Target::Ptx, &raw)
            .unwrap_or_else(|e| panic!("NVRTC {major}: {e:?}"));
        let unknown = sm90().extra_options(["--expt-relaxed-constexpr"]);
        match compiler.compile(&program, Target::Ptx, &unknown) {
            Err(CompileError::UnknownOption { option, nvrtc, .. }) => {
                assert_eq!(option, "--expt-relaxed-constexpr");
                assert_eq!(nvrtc.0, major);
            }
            other => panic!("NVRTC {major}: {other:?}"),
        }
    }
}
