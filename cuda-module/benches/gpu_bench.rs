//! Load and lookup timings on a GPU, for `cargo xtask bench-gpu`.
//!
//! Usage, on a GPU machine with a CUDA toolkit (for NVRTC and nvJitLink):
//!
//! * `gpu_bench prepare DATA_DIR` compiles and links the workloads once and
//!   writes their PTX and cubins into DATA_DIR, for both sides;
//! * `gpu_bench measure DATA_DIR` times them and prints one JSON object of
//!   medians, in seconds, to stdout.
//!
//! The bundle's `gpu_pairs.py` runs `measure` in pairs with the Python side
//! (`xtask/bench/cuda_core_bench.py`), which reads the same files.

use std::ffi::CString;
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use cuda_driver_sys::{Driver, sys::CUresult};
use cuda_link::{
    Arch, Isolation, LinkCache, Linker, LinkerOptions, NvJitLink, ObjectCode, OutputKind,
};
use cuda_link_tests::{fixtures, nvrtc, workloads};
use cuda_module::{Context, Library, LoadOptions};

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// Median seconds of `runs` calls of `f`, after two warm-up calls.
fn time(runs: usize, mut f: impl FnMut()) -> f64 {
    f();
    f();
    median(
        (0..runs)
            .map(|_| {
                let start = Instant::now();
                f();
                start.elapsed().as_secs_f64()
            })
            .collect(),
    )
}

/// Links `ptx` for sm_90 through the default (isolated) linker.
fn link(ptx: &ObjectCode) -> ObjectCode {
    link_with(ptx, Isolation::default())
}

fn link_with(ptx: &ObjectCode, isolation: Isolation) -> ObjectCode {
    let options = LinkerOptions::for_arch(Arch::sm(90))
        .no_cache(true)
        .isolation(isolation);
    let mut linker = Linker::new(options).unwrap();
    linker.add(ptx).unwrap();
    linker.link(OutputKind::Cubin).unwrap()
}

/// `cuLibraryLoadData` + `cuLibraryGetKernel` + `cuKernelGetFunction` +
/// `cuLibraryUnload`, straight through the driver table; with `log`, the
/// load is given a JIT error log buffer of that many bytes, as
/// `Library::load` gives one; with `synchronize`, `cuCtxSynchronize` comes
/// before the unload, as cuda-module's unload did after any lookup before
/// it waited only where a kernel was launched.
fn raw_load_and_lookup(
    driver: &Driver,
    image: &[u8],
    kernel: &CString,
    log: usize,
    synchronize: bool,
) {
    use cuda_driver_sys::sys::CUjit_option;
    use std::ffi::c_void;
    use std::ptr::null_mut;
    let ok = CUresult::CUDA_SUCCESS;
    let mut buffer = vec![0u8; log];
    let mut keys = [
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    let mut values = [
        buffer.as_mut_ptr().cast::<c_void>(),
        std::ptr::without_provenance_mut(log),
    ];
    let count = if log == 0 { 0 } else { keys.len() as u32 };
    // SAFETY: a valid image and out-pointers; the option arrays hold
    // `count` entries and the log buffer outlives the library, which is
    // unloaded here.
    unsafe {
        let mut library = null_mut();
        let loaded = driver.cuLibraryLoadData(
            &mut library,
            image.as_ptr().cast(),
            keys.as_mut_ptr(),
            values.as_mut_ptr(),
            count,
            null_mut(),
            null_mut(),
            0,
        );
        assert_eq!(loaded.unwrap(), ok);
        let mut handle = null_mut();
        assert_eq!(
            driver
                .cuLibraryGetKernel(&mut handle, library, kernel.as_ptr())
                .unwrap(),
            ok
        );
        let mut function = null_mut();
        assert_eq!(
            driver.cuKernelGetFunction(&mut function, handle).unwrap(),
            ok
        );
        black_box(function);
        if synchronize {
            assert_eq!(driver.cuCtxSynchronize().unwrap(), ok);
        }
        assert_eq!(driver.cuLibraryUnload(library).unwrap(), ok);
    }
}

/// The floor of a small link + load + first lookup: nvJitLink's calls
/// (create, add the PTX, complete, copy the cubin out, destroy) with the
/// options cuda-link gives them, then [`raw_load_and_lookup`]. What
/// cuda-link adds to it is its own; the rest is NVIDIA's.
fn raw_link_load_and_lookup(lib: &NvJitLink, driver: &Driver, ptx: &[u8], kernel: &CString) {
    use nvjitlink_sys::sys::{nvJitLinkInputType, nvJitLinkResult};
    let ok = Ok(nvJitLinkResult::NVJITLINK_SUCCESS);
    let options = [c"-arch=sm_90", c"-no-cache"];
    let mut options: Vec<*const std::ffi::c_char> = options.iter().map(|o| o.as_ptr()).collect();
    assert_eq!(ptx.last(), Some(&0), "PTX for nvJitLink ends in a NUL");
    // SAFETY: out-pointers, two C-string options, and a NUL-terminated PTX
    // of the given size that outlives the handle, destroyed here.
    let cubin = unsafe {
        let mut handle = std::ptr::null_mut();
        assert_eq!(
            lib.nvJitLinkCreate(&mut handle, 2, options.as_mut_ptr()),
            ok
        );
        assert_eq!(
            lib.nvJitLinkAddData(
                handle,
                nvJitLinkInputType::NVJITLINK_INPUT_PTX,
                ptx.as_ptr().cast(),
                ptx.len(),
                c"saxpy.ptx".as_ptr(),
            ),
            ok
        );
        assert_eq!(lib.nvJitLinkComplete(handle), ok);
        let mut size = 0;
        assert_eq!(lib.nvJitLinkGetLinkedCubinSize(handle, &mut size), ok);
        let mut cubin = vec![0u8; size];
        assert_eq!(
            lib.nvJitLinkGetLinkedCubin(handle, cubin.as_mut_ptr().cast()),
            ok
        );
        assert_eq!(lib.nvJitLinkDestroy(&mut handle), ok);
        cubin
    };
    raw_load_and_lookup(driver, &cubin, kernel, 0, false);
}

const USAGE: &str = "usage: gpu_bench prepare|measure DATA_DIR";

fn main() {
    let mut args = std::env::args().skip(1);
    let (command, data_dir) = (args.next().expect(USAGE), args.next().expect(USAGE));
    let data_dir = std::path::PathBuf::from(data_dir);
    match command.as_str() {
        "prepare" => prepare(&data_dir),
        "measure" => measure(&data_dir),
        _ => panic!("{USAGE}"),
    }
}

/// Compiles the workloads with NVRTC, links them, and writes the PTX and
/// cubins that both sides measure.
fn prepare(data_dir: &Path) {
    std::fs::create_dir_all(data_dir).unwrap();
    let compile = |source: &str, name: &str| {
        let compiled = nvrtc(source, name, &["-arch=compute_90", "-rdc=true"]).unwrap();
        ObjectCode::from_ptx(compiled.ptx.unwrap(), name).unwrap()
    };
    let small_ptx = compile(fixtures::SAXPY_CU, "saxpy.cu");
    let big_ptx = compile(&workloads::many_kernels_cu(200), "big.cu");
    let small = link(&small_ptx);
    let big = link(&big_ptx);
    for (file, code) in [
        ("small.ptx", &small_ptx),
        ("big.ptx", &big_ptx),
        ("small.cubin", &small),
        ("big.cubin", &big),
    ] {
        std::fs::write(data_dir.join(file), code.as_bytes()).unwrap();
    }
}

fn measure(data_dir: &Path) {
    let read = |file: &str| {
        std::fs::read(data_dir.join(file))
            .unwrap_or_else(|e| panic!("{file}: {e} (run `gpu_bench prepare` first)"))
    };
    let small_ptx = ObjectCode::from_ptx(read("small.ptx"), "saxpy.cu").unwrap();
    let small = ObjectCode::from_cubin(read("small.cubin"), "small.cubin").unwrap();
    let big = ObjectCode::from_cubin(read("big.cubin"), "big.cubin").unwrap();
    let context = Context::primary(0).unwrap();
    // The raw calls and cuda-link's links use the current context.
    let _current = context.make_current().unwrap();
    let driver = Driver::global().unwrap();

    let mut results = serde_json::Map::new();
    let mut record = |key: &str, seconds: f64| {
        eprintln!("{key:<40} {:>10.1} µs", seconds * 1e6);
        results.insert(key.to_owned(), seconds.into());
    };

    for (name, cubin, kernel) in [("small", &small, "saxpy"), ("big", &big, "kernel_0")] {
        // Ours again for the raw calls, after the previous round's cudarc.
        let _again = context.make_current().unwrap();
        let c_kernel = CString::new(kernel).unwrap();
        let image = cubin.as_bytes().to_vec();
        record(
            &format!("{name}/raw_load_lookup"),
            time(50, || {
                raw_load_and_lookup(driver, &image, &c_kernel, 0, false)
            }),
        );
        record(
            &format!("{name}/raw_load_lookup_with_log"),
            time(50, || {
                raw_load_and_lookup(driver, &image, &c_kernel, 16 * 1024, false)
            }),
        );
        record(
            &format!("{name}/raw_load_lookup_synchronized"),
            time(50, || {
                raw_load_and_lookup(driver, &image, &c_kernel, 0, true)
            }),
        );
        record(
            &format!("{name}/load_lookup"),
            time(50, || {
                let library = Library::load(cubin).unwrap();
                black_box(library.kernel(kernel).unwrap().function(&context).unwrap());
            }),
        );
        let preserved = LoadOptions::default().binary_is_preserved(true);
        record(
            &format!("{name}/load_lookup_preserved"),
            time(50, || {
                let library = Library::load_with(cubin, preserved).unwrap();
                black_box(library.kernel(kernel).unwrap().function(&context).unwrap());
            }),
        );
        let eager = LoadOptions::default().eager(true);
        record(
            &format!("{name}/load_eager_all_kernels"),
            time(20, || {
                black_box(Library::load_with(cubin, eager).unwrap());
            }),
        );
        // cudarc goes through cuModuleLoadData in the current context.
        let cudarc_context = cudarc::driver::CudaContext::new(0).unwrap();
        record(
            &format!("{name}/cudarc_module_load_lookup"),
            time(50, || {
                let module = cudarc_context
                    .load_module(cudarc::nvrtc::Ptx::from_binary(image.clone()))
                    .unwrap();
                black_box(module.load_function(kernel).unwrap());
            }),
        );
    }

    // The cached lookup: a second Library::kernel + Kernel::function.
    let library = Library::load(&small).unwrap();
    library.kernel("saxpy").unwrap().function(&context).unwrap();
    const LOOKUPS: usize = 1_000_000;
    let per_lookup = time(5, || {
        for _ in 0..LOOKUPS {
            black_box(
                library
                    .kernel(black_box("saxpy"))
                    .unwrap()
                    .function(&context)
                    .unwrap(),
            );
        }
    }) / LOOKUPS as f64;
    record("cached_lookup", per_lookup);

    // End to end on small: link PTX, load, first lookup; first the raw
    // calls' floor.
    let nvjitlink = NvJitLink::global().unwrap();
    let saxpy = CString::new("saxpy").unwrap();
    let ptx_text = [small_ptx.as_bytes(), &[0]].concat();
    record(
        "small/raw_e2e_link_load_lookup",
        time(30, || {
            raw_link_load_and_lookup(nvjitlink, driver, &ptx_text, &saxpy);
        }),
    );
    let ptx = Arc::new(small_ptx);
    record(
        "small/e2e_link_load_lookup",
        time(30, || {
            let cubin = link(&ptx);
            let library = Library::load(&cubin).unwrap();
            black_box(library.kernel("saxpy").unwrap().function(&context).unwrap());
        }),
    );
    // The same in the caller's process: the opt-in for trusted inputs.
    record(
        "small/e2e_link_load_lookup_in_process",
        time(30, || {
            let cubin = link_with(&ptx, Isolation::InProcess);
            let library = Library::load(&cubin).unwrap();
            black_box(library.kernel("saxpy").unwrap().function(&context).unwrap());
        }),
    );
    // The same with the persistent link cache, warm: the link is a file read.
    let cache_dir = data_dir.join("link-cache");
    let cache = Arc::new(LinkCache::new(&cache_dir));
    record(
        "small/e2e_link_load_lookup_cached",
        time(30, || {
            let mut linker = Linker::new(LinkerOptions::for_arch(Arch::sm(90)).no_cache(true))
                .unwrap()
                .with_cache(Arc::clone(&cache));
            linker.add(&ptx).unwrap();
            let library = Library::load(&linker.link(OutputKind::Cubin).unwrap()).unwrap();
            black_box(library.kernel("saxpy").unwrap().function(&context).unwrap());
        }),
    );
    let _ = std::fs::remove_dir_all(&cache_dir);
    let mode = cuda_module::loading_mode()
        .map(|m| format!("{m:?}"))
        .unwrap_or_default();
    results.insert("loading_mode".into(), mode.into());
    // Which nvJitLink the links above used, for the report's header.
    if let Ok(nvjitlink) = NvJitLink::global() {
        let which = format!(
            "{} ({})",
            nvjitlink.version_string(),
            nvjitlink.path().display()
        );
        results.insert("nvjitlink".into(), which.into());
    }
    println!("{}", serde_json::Value::Object(results));
}
