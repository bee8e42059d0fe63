//! `cargo bench -p cuda-compile --bench nvvm`: an NVVM compile through
//! `NvvmCompiler` against the same libNVVM calls made raw (create, add,
//! verify, add libdevice lazily, compile, read, destroy), in ABBA pairs,
//! in this process and in the isolated worker; and a warm hit of an NVVM
//! compile beside a C++ compile's hit, both from the in-memory tier.
//!
//! libNVVM 13 from `CUDA_LINK_NVVM13_PATH`, NVRTC 13 from
//! `CUDA_LINK_NVRTC13_PATH` (`cargo xtask bench` and `cargo xtask test`
//! set both). The kernel is numba-cuda's `math_libdevice`, which calls
//! libdevice.

use std::ffi::{CString, c_char};
use std::sync::Arc;
use std::time::Instant;

use cuda_compile::{
    Compiler, NvvmCompiler, NvvmOptions, NvvmProgram, Program, ProgramOptions, Target,
};
use cuda_link::nvvm::Nvvm;
use cuda_link::nvvm::nvvm_sys::sys::nvvmResult;
use cuda_link::{Arch, Isolation, MemoryCache};

const IR: &[u8] = include_bytes!("../../tests/nvvm/numba/math_libdevice/module.0.ll");

const SAXPY: &str = r#"
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"#;

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn time(f: impl FnOnce()) -> f64 {
    let start = Instant::now();
    f();
    start.elapsed().as_secs_f64()
}

/// The compile `NvvmCompiler` makes, as raw calls.
fn raw_compile(lib: &Nvvm, ir: &[u8], libdevice: &[u8], args: &[CString]) -> Vec<u8> {
    let pointers: Vec<*const c_char> = args.iter().map(|a| a.as_ptr()).collect();
    let count = pointers.len() as i32;
    let ok = |result: Result<nvvmResult, _>| assert_eq!(result, Ok(nvvmResult::NVVM_SUCCESS));
    let mut program = std::ptr::null_mut();
    // SAFETY: out-pointers, buffers and C strings alive for each call; the
    // program is destroyed once; the output buffer has the size reported.
    unsafe {
        ok(lib.nvvmCreateProgram(&mut program));
        ok(lib.nvvmAddModuleToProgram(program, ir.as_ptr().cast(), ir.len(), c"m.ll".as_ptr()));
        ok(lib.nvvmVerifyProgram(program, count, pointers.as_ptr().cast_mut()));
        ok(lib.nvvmLazyAddModuleToProgram(
            program,
            libdevice.as_ptr().cast(),
            libdevice.len(),
            c"libdevice".as_ptr(),
        ));
        ok(lib.nvvmCompileProgram(program, count, pointers.as_ptr().cast_mut()));
        let mut size = 0;
        ok(lib.nvvmGetCompiledResultSize(program, &mut size));
        let mut ptx = vec![0u8; size];
        ok(lib.nvvmGetCompiledResult(program, ptx.as_mut_ptr().cast()));
        ok(lib.nvvmDestroyProgram(&mut program));
        ptx
    }
}

/// ABBA pairs of ours against raw; each of ours compiles a program with
/// a new comment, so that no tier answers it.
fn cold(lib: &Arc<Nvvm>, isolation: Isolation) {
    let compiler = NvvmCompiler::with_nvvm(Arc::clone(lib));
    let options = NvvmOptions::for_arch(Arch::sm(90))
        .opt_level(3)
        .isolation(isolation);
    let libdevice_path = cuda_link::nvvm::libdevice_beside(lib.path()).unwrap();
    let libdevice = cuda_link::nvvm::read_libdevice(&libdevice_path).unwrap().0;
    let args = [c"-arch=compute_90".to_owned(), c"-opt=3".to_owned()];
    let mut round = 0;
    let mut ours = || {
        round += 1;
        let mut ir = IR.to_vec();
        ir.extend_from_slice(format!("; {round}\n").as_bytes());
        let program = NvvmProgram::new("m").module(ir, "m.ll").unwrap();
        compiler.compile(&program, Target::Ptx, &options).unwrap();
    };
    let raw = || {
        raw_compile(lib, IR, &libdevice, &args);
    };
    ours();
    raw();
    let (mut ratios, mut ours_times, mut raw_times) = (Vec::new(), Vec::new(), Vec::new());
    for pair in 0..20 {
        let (a, b) = if pair % 2 == 0 {
            let a = time(&mut ours);
            (a, time(raw))
        } else {
            let b = time(raw);
            (time(&mut ours), b)
        };
        ratios.push(a / b);
        ours_times.push(a);
        raw_times.push(b);
    }
    let overhead = (median(&mut ratios) - 1.0) * 100.0;
    println!(
        "cold NVVM compile ({isolation:?}): ours {:.2} ms, raw libNVVM {:.2} ms, overhead {overhead:+.2} % \
         (median of 20 ABBA pairs; spread {:+.1} % to {:+.1} %)",
        median(&mut ours_times) * 1e3,
        median(&mut raw_times) * 1e3,
        (ratios[0] - 1.0) * 100.0,
        (ratios[ratios.len() - 1] - 1.0) * 100.0,
    );
}

/// Hits of the in-memory tier: the NVVM program's, and a C++ program's
/// (saxpy, without headers), median of 200 each, interleaved.
fn warm_hit(lib: &Arc<Nvvm>) {
    let nvvm = NvvmCompiler::with_nvvm(Arc::clone(lib));
    let options = NvvmOptions::for_arch(Arch::sm(90));
    let program = NvvmProgram::new("m").module(IR, "m.ll").unwrap();
    nvvm.compile(&program, Target::Ptx, &options).unwrap();
    let cpp = std::env::var_os("CUDA_LINK_NVRTC13_PATH").map(|path| {
        // SAFETY: the pinned NVRTC wheel.
        let nvrtc = Arc::new(unsafe { nvrtc_sys::Nvrtc::open(path) }.unwrap());
        let compiler = Compiler::with_nvrtc(nvrtc);
        let options = ProgramOptions::for_arch(Arch::sm(90));
        let program = Program::new(SAXPY, "saxpy.cu");
        compiler.compile(&program, Target::Ptx, &options).unwrap();
        (compiler, program, options)
    });
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..200 {
        ours.push(time(|| {
            assert!(
                nvvm.compile(&program, Target::Ptx, &options)
                    .unwrap()
                    .from_cache
            )
        }));
        if let Some((compiler, program, options)) = &cpp {
            theirs.push(time(|| {
                assert!(
                    compiler
                        .compile(program, Target::Ptx, options)
                        .unwrap()
                        .from_cache
                )
            }));
        }
    }
    let cpp = match theirs.is_empty() {
        true => "no NVRTC".to_owned(),
        false => format!("{:.1} µs", median(&mut theirs) * 1e6),
    };
    println!(
        "in-memory hit: NVVM program {:.1} µs, C++ program {cpp} (median of 200 each, interleaved)",
        median(&mut ours) * 1e6
    );
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let Some(path) = std::env::var_os("CUDA_LINK_NVVM13_PATH") else {
        eprintln!("SKIPPED: CUDA_LINK_NVVM13_PATH is unset; run through `cargo xtask bench`");
        return;
    };
    // SAFETY: the pinned libNVVM wheel that `cargo xtask` provisions.
    let lib = Arc::new(unsafe { Nvvm::open(path) }.expect("libNVVM loads"));
    println!(
        "libNVVM {} ({})",
        lib.version_string(),
        lib.path().display()
    );
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wanted = |name: &str| only.is_empty() || only.iter().any(|o| name.contains(o.as_str()));
    if wanted("cold") {
        // Every compile compiles: the in-memory tier would answer repeats.
        MemoryCache::set_capacity(0);
        cold(&lib, Isolation::InProcess);
        cold(&lib, Isolation::process());
        MemoryCache::set_capacity(MemoryCache::DEFAULT_BYTES);
    }
    if wanted("warm_hit") {
        warm_hit(&lib);
    }
}
