//! GPU tests: link, load and launch on a real device.
//!
//! Every test is `#[ignore = "needs a GPU"]`, so a machine without one never
//! reports them as passed; `cargo xtask test-gpu` runs them with
//! `--include-ignored`, and there a missing GPU fails them.

use std::ffi::c_void;

use cuda_link::{Arch, Backend, LinkError, Linker, LinkerOptions, ObjectCode, OutputKind};
use cuda_link_tests::{FatbinInput, fixtures, nvfatbin, nvrtc, ptxas};
use cuda_module::{
    Context, CurrentGuard, DeviceBuffer, Kernel, LaunchConfig, Library, LoadOptions, ModuleError,
};

/// Contexts: launches and guards restore the current one; a module's
/// kernel refuses other contexts.
mod contexts;

/// numba-cuda's NVVM IR through libNVVM and nvJitLink, launched and checked.
mod numba;

const N: usize = 1 << 20;

/// The primary context of device 0, current on this thread while the guard
/// lives.
fn gpu() -> (Context, CurrentGuard) {
    let context = Context::primary(0).expect("these tests need a GPU");
    let current = context.make_current().unwrap();
    (context, current)
}

fn arch() -> Arch {
    std::env::var("CUDA_LINK_GPU_ARCH").map_or(Arch::sm(90), |arch| arch.parse().unwrap())
}

fn ptx_of(source: &str, name: &str) -> ObjectCode {
    let compiled = nvrtc(source, name, &["-arch=compute_90", "-rdc=true"]).unwrap();
    ObjectCode::from_ptx(compiled.ptx.unwrap(), name).unwrap()
}

fn ltoir_of(source: &str, name: &str) -> ObjectCode {
    let arch = format!("-arch={}", arch());
    let compiled = nvrtc(source, name, &[&arch, "-rdc=true", "-dlto"]).unwrap();
    ObjectCode::from_ltoir(compiled.ltoir.unwrap(), name).unwrap()
}

fn link(inputs: &[ObjectCode], backend: Backend) -> Result<ObjectCode, LinkError> {
    let mut linker = Linker::new(LinkerOptions::for_arch(arch()).backend(backend))?;
    linker.add_many(inputs)?;
    let linked = linker.link(OutputKind::Cubin);
    eprintln!(
        "linked {} input(s) with {}",
        inputs.len(),
        linker.backend_name()
    );
    linked
}

#[test]
#[ignore = "needs a GPU"]
fn report_the_machine() {
    let _gpu = gpu();
    let driver = cuda_driver_sys::Driver::global().unwrap();
    eprintln!(
        "driver {:?} from {} ({:?}); devices: {}; nvJitLink: {:?}",
        driver.version(),
        driver.path().display(),
        driver.resolution(),
        cuda_module::device_count().unwrap(),
        cuda_link::NvJitLink::global().map(|l| format!(
            "{} from {}",
            l.version_string(),
            l.path().display()
        )),
    );
}

/// Launches `kernel(a, x, y, n)` over 1M random floats and checks y = a*x + y.
fn run_saxpy(context: &Context, library: &Library, kernel: &str) {
    let mut seed = 0x2545_F491u32;
    let mut random = || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        (seed % 10_000) as f32 / 100.0
    };
    let x: Vec<f32> = (0..N).map(|_| random()).collect();
    let y: Vec<f32> = (0..N).map(|_| random()).collect();
    let a = 2.5f32;
    let (dx, dy) = (
        DeviceBuffer::from_slice(context, &x).unwrap(),
        DeviceBuffer::from_slice(context, &y).unwrap(),
    );
    let (mut a_arg, mut x_arg, mut y_arg, mut n_arg) = (a, dx.pointer(), dy.pointer(), N as i32);
    let mut params: [*mut c_void; 4] = [
        (&raw mut a_arg).cast(),
        (&raw mut x_arg).cast(),
        (&raw mut y_arg).cast(),
        (&raw mut n_arg).cast(),
    ];
    let kernel = library.kernel(kernel).unwrap();
    // SAFETY: four parameters of saxpy's types; both buffers hold N floats.
    unsafe {
        kernel.launch(
            context,
            std::ptr::null_mut(),
            LaunchConfig::for_elements(N as u32, 256),
            &mut params,
        )
    }
    .unwrap();
    cuda_module::synchronize(context).unwrap();
    let result: Vec<f32> = dy.to_vec().unwrap();
    let wrong = (0..N)
        .filter(|&i| (result[i] - (a * x[i] + y[i])).abs() > 1e-3)
        .count();
    assert_eq!(
        wrong,
        0,
        "{kernel:?} of {}: {wrong} of {N} wrong",
        library.name(),
        kernel = kernel.name()
    );
}

#[test]
#[ignore = "needs a GPU"]
fn saxpy_from_every_input_kind() {
    let (context, _current) = gpu();
    let ptx = ptx_of(fixtures::SAXPY_CU, "saxpy.cu");
    let cubin = ptxas(ptx.as_bytes(), &arch().to_string(), true).unwrap();
    let cubin = ObjectCode::from_cubin(cubin, "saxpy.cubin").unwrap();
    let ltoir = ltoir_of(fixtures::SAXPY_CU, "saxpy.cu");
    let fatbin = nvfatbin(
        &[FatbinInput::Cubin(
            cubin.as_bytes(),
            &arch().to_string()[3..],
        )],
        &[],
    )
    .unwrap();
    let fatbin = ObjectCode::from_fatbin(fatbin, "saxpy.fatbin").unwrap();
    for input in [&ptx, &cubin, &ltoir, &fatbin] {
        let linked =
            link(std::slice::from_ref(input), Backend::NvJitLink).unwrap_or_else(|e| panic!("{e}"));
        let library =
            Library::load(&linked.renamed(format!("linked from {}", input.name()))).unwrap();
        run_saxpy(&context, &library, "saxpy");
    }
    // PTX and fatbins load without a link too.
    for input in [&ptx, &fatbin] {
        run_saxpy(&context, &Library::load(input).unwrap(), "saxpy");
    }
}

/// cuda-compile with the device's own NVRTC and toolkit headers: no arch
/// given, so a cubin for the current device; the kernel is found by its
/// name expression and launched, a global by `&ns::bias`; the PTX of the
/// same program JIT-compiles and runs, with no warning that the driver is
/// too old for it.
#[test]
#[ignore = "needs a GPU"]
fn compiled_programs_run_by_name_expression() {
    use cuda_compile::{Program, ProgramOptions, Target, Warning};
    let (context, _current) = gpu();
    let source = r#"
        #include <cstdint>
        #include <cuda_fp16.h>
        namespace ns { __device__ float bias = 1.5f; }
        template <typename T>
        __global__ void saxpy(T a, const T *x, T *y, int n) {
            int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
            if (i < n) y[i] = a * x[i] + y[i];
        }
    "#;
    let program = Program::new(source, "template_saxpy.cu")
        .name_expression("saxpy<float>")
        .name_expression("&ns::bias");
    let cubin = program
        .compile(Target::Cubin, &ProgramOptions::default())
        .unwrap_or_else(|e| panic!("{e:?}"));
    let device_arch = cuda_link::current_device_arch().unwrap();
    assert_eq!(cubin.code.inspect().unwrap().arches(), [device_arch]);
    let library = Library::load(&cubin.code).unwrap();
    run_saxpy(&context, &library, "saxpy<float>");
    let (_, size) = library.global(&context, "&ns::bias").unwrap();
    assert_eq!(size, 4);

    let ptx = program
        .compile(Target::Ptx, &ProgramOptions::default())
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert!(
        !ptx.warnings
            .iter()
            .any(|w| matches!(w, Warning::PtxNewerThanDriver { .. })),
        "{:?}",
        ptx.warnings
    );
    run_saxpy(&context, &Library::load(&ptx.code).unwrap(), "saxpy<float>");
}

/// Fatbins written by both backends (the pure-Rust writer, and nvFatbin
/// from the machine's toolkit), in each codec: sm_80, sm_90 and sm_100
/// cubins (the driver picks sm_90's), and an sm_80 cubin with compute_80
/// PTX (no cubin fits the H200, so the driver JIT-compiles the PTX).
#[test]
#[ignore = "needs a GPU"]
fn fatbins_written_by_both_backends_load_and_run() {
    use cuda_link::FatbinBuilder;
    use cuda_link::inspect::Compression;
    let (context, _current) = gpu();
    let nvfatbin = nvfatbin_sys::NvFatbin::global().expect("the toolkit's nvFatbin");
    let ptx_80 = nvrtc(fixtures::SAXPY_CU, "saxpy.cu", &["-arch=compute_80"])
        .unwrap()
        .ptx
        .unwrap();
    let cubin = |sm: &str| {
        let cubin = ptxas(&ptx_80, sm, false).unwrap();
        ObjectCode::from_cubin(cubin, format!("saxpy.{sm}.cubin")).unwrap()
    };
    let (sm80, sm90, sm100) = (cubin("sm_80"), cubin("sm_90"), cubin("sm_100"));
    let ptx = ObjectCode::from_ptx(ptx_80.clone(), "saxpy.compute_80.ptx").unwrap();
    for codec in [Compression::None, Compression::Lz4, Compression::Zstd] {
        let three = FatbinBuilder::new()
            .compression(codec)
            .add(&sm80, None)
            .and_then(|b| b.add(&sm90, None))
            .and_then(|b| b.add(&sm100, None))
            .unwrap();
        let jit = FatbinBuilder::new()
            .compression(codec)
            .add(&sm80, None)
            .and_then(|b| b.add(&ptx, None))
            .unwrap();
        for builder in [three, jit] {
            let ours = builder.build("ours.fatbin").unwrap();
            run_saxpy(&context, &Library::load(&ours).unwrap(), "saxpy");
            let theirs = builder.build_with(nvfatbin, "nvfatbin.fatbin").unwrap();
            run_saxpy(&context, &Library::load(&theirs).unwrap(), "saxpy");
        }
    }
}

#[test]
#[ignore = "needs a GPU"]
fn lto_of_several_modules() {
    let (context, _current) = gpu();
    let inputs = [
        ltoir_of(fixtures::LTO_MAIN_CU, "lto_main.cu"),
        ltoir_of(fixtures::LTO_SCALE_CU, "lto_scale.cu"),
        ltoir_of(fixtures::LTO_OFFSET_CU, "lto_offset.cu"),
    ];
    let linked = link(&inputs, Backend::NvJitLink).unwrap();
    run_saxpy(&context, &Library::load(&linked).unwrap(), "lto_saxpy");
}

#[test]
#[ignore = "needs a GPU"]
fn driver_backend_links_and_refuses_ltoir() {
    let (context, _current) = gpu();
    let linked = link(&[ptx_of(fixtures::SAXPY_CU, "saxpy.cu")], Backend::Driver)
        .unwrap_or_else(|e| panic!("{e}"));
    run_saxpy(&context, &Library::load(&linked).unwrap(), "saxpy");
    let err = link(&[ltoir_of(fixtures::SAXPY_CU, "saxpy.cu")], Backend::Driver).unwrap_err();
    assert!(
        matches!(err, LinkError::LtoirNeedsNvJitLink { .. }),
        "{err}"
    );
    // An option the driver cannot honour is refused by name, before the
    // linker is made.
    let refused = Linker::new(
        LinkerOptions::for_arch(arch())
            .backend(Backend::Driver)
            .split_compile(2),
    );
    assert!(matches!(
        refused,
        Err(LinkError::UnsupportedOption {
            option: "split_compile",
            ..
        })
    ));
}

#[test]
#[ignore = "needs a GPU"]
fn module_fallback_and_missing_kernel() {
    let (context, _current) = gpu();
    eprintln!("loading mode: {:?}", cuda_module::loading_mode().unwrap());
    let linked = link(
        &[ptx_of(fixtures::SAXPY_CU, "saxpy.cu")],
        Backend::NvJitLink,
    )
    .unwrap();
    let forced =
        Library::load_with(&linked, LoadOptions::default().force_module_api(true)).unwrap();
    assert!(forced.is_module());
    run_saxpy(&context, &forced, "saxpy");

    let library = Library::load(&linked).unwrap();
    assert!(!library.is_module());
    assert_eq!(library.kernels().unwrap(), ["saxpy"]);
    let err = library.kernel("no_such_kernel").map(drop).unwrap_err();
    assert!(
        matches!(&err, ModuleError::KernelNotFound { kernel, kernels, .. }
            if kernel == "no_such_kernel" && kernels == &["saxpy"]),
        "{err}"
    );
    // A near miss is offered the closest names.
    let err = library.kernel("saxpi").map(drop).unwrap_err();
    assert!(
        matches!(&err, ModuleError::KernelNotFound { closest, .. } if closest == &["saxpy"]),
        "{err}"
    );
    assert!(err.to_string().contains("did you mean `saxpy`?"), "{err}");
    // A second lookup is served from the cache: same kernel, same function.
    let first = library.kernel("saxpy").unwrap().function(&context).unwrap();
    let second = library.kernel("saxpy").unwrap().function(&context).unwrap();
    assert_eq!(first, second);
}

#[test]
#[ignore = "needs a GPU"]
fn attributes_and_param_info_match_the_signature() {
    let (context, _current) = gpu();
    let linked = link(
        &[ptx_of(fixtures::SAXPY_CU, "saxpy.cu")],
        Backend::NvJitLink,
    )
    .unwrap();
    let library = Library::load(&linked).unwrap();
    let saxpy = library.kernel("saxpy").unwrap();
    // saxpy(float a, const float *x, float *y, int n)
    let params: Vec<(usize, usize)> = saxpy
        .param_info()
        .unwrap()
        .iter()
        .map(|p| (p.offset, p.size))
        .collect();
    assert_eq!(params, [(0, 4), (8, 8), (16, 8), (24, 4)]);
    let attributes = saxpy.attributes(&context).unwrap();
    assert!(
        attributes.num_regs > 0 && attributes.num_regs <= 255,
        "{attributes:?}"
    );
    assert_eq!(attributes.shared_size_bytes, 0);
    assert_eq!(attributes.local_size_bytes, 0);
    assert_eq!(attributes.max_threads_per_block, 1024);
    // Linked without `--dlcm=ca` and without `__cluster_dims__`.
    assert!(!attributes.cache_mode_ca, "{attributes:?}");
    assert!(!attributes.cluster_size_must_be_set, "{attributes:?}");
    assert_eq!(attributes.required_cluster_width, 0);
}

#[test]
#[ignore = "needs a GPU"]
fn a_global_written_from_the_host_is_read_by_the_kernel() {
    let (context, _current) = gpu();
    let linked = link(
        &[ptx_of(fixtures::COUNTER_CU, "counter.cu")],
        Backend::NvJitLink,
    )
    .unwrap();
    let library = Library::load(&linked).unwrap();
    let (address, size) = library.global(&context, "bias").unwrap();
    assert_eq!(size, 4);
    // SAFETY: `bias` is a 4-byte global of the current context; no kernel runs.
    unsafe { cuda_module::copy_to_device(address, &[1.5f32]) }.unwrap();
    let kernel = library.kernel("add_bias").unwrap();
    // Adds the context's `bias` to 1000 ones, and returns them.
    let add_bias = |context: &Context| -> Vec<f32> {
        let y = DeviceBuffer::from_slice(context, &vec![1.0f32; 1000]).unwrap();
        let (mut y_arg, mut n_arg) = (y.pointer(), 1000i32);
        let mut params: [*mut c_void; 2] = [(&raw mut y_arg).cast(), (&raw mut n_arg).cast()];
        // SAFETY: add_bias(float *y, int n) over a 1000-float buffer.
        unsafe {
            kernel.launch(
                context,
                std::ptr::null_mut(),
                LaunchConfig::for_elements(4 * 256, 256),
                &mut params,
            )
        }
        .unwrap();
        cuda_module::synchronize(context).unwrap();
        y.to_vec().unwrap()
    };
    assert!(add_bias(&context).iter().all(|&v| v == 2.5));

    // Each context has a `bias` of its own, at its own address, found
    // while another context is current: 0 until written.
    let other = Context::create(0).unwrap();
    let _current = context.make_current().unwrap();
    let (other_address, size) = library.global(&other, "bias").unwrap();
    assert_eq!(size, 4);
    assert_ne!(other_address, address);
    assert!(add_bias(&other).iter().all(|&v| v == 1.0));
    {
        let _other = other.make_current().unwrap();
        // SAFETY: `bias` is a 4-byte global of the current context; no
        // kernel runs.
        unsafe { cuda_module::copy_to_device(other_address, &[4.0f32]) }.unwrap();
    }
    assert!(add_bias(&other).iter().all(|&v| v == 5.0));
    assert!(add_bias(&context).iter().all(|&v| v == 2.5));
}

#[test]
#[ignore = "needs a GPU"]
fn one_library_serves_two_contexts() {
    let (primary, _current) = gpu();
    let linked = link(
        &[ptx_of(fixtures::SAXPY_CU, "saxpy.cu")],
        Backend::NvJitLink,
    )
    .unwrap();
    let library = Library::load(&linked).unwrap();
    run_saxpy(&primary, &library, "saxpy");
    // A created context is current (pushed) until it is destroyed.
    let created = Context::create(0).unwrap();
    run_saxpy(&created, &library, "saxpy");
    let kernel = library.kernel("saxpy").unwrap();
    assert_ne!(
        kernel.function(&primary).unwrap(),
        kernel.function(&created).unwrap()
    );
    // A context dropped before the library is skipped at unload, and a new
    // context (possibly at the same address) gets a fresh function.
    drop(created);
    let again = Context::create(0).unwrap();
    run_saxpy(&again, &library, "saxpy");
    drop(again);
    drop(kernel);
    drop(library);
}

#[test]
#[ignore = "needs a GPU"]
fn eager_preserved_and_file_loads() {
    let (context, _current) = gpu();
    let linked = link(
        &[ptx_of(fixtures::SAXPY_CU, "saxpy.cu")],
        Backend::NvJitLink,
    )
    .unwrap();
    let options = LoadOptions::default().eager(true).binary_is_preserved(true);
    let library = Library::load_with(&linked, options).unwrap();
    run_saxpy(&context, &library, "saxpy");

    let dir = tempfile_dir();
    let path = dir.join("saxpy.cubin");
    std::fs::write(&path, linked.as_bytes()).unwrap();
    let from_file = Library::from_file(&path).unwrap();
    assert_eq!(from_file.name(), path.display().to_string());
    run_saxpy(&context, &from_file, "saxpy");
    std::fs::remove_dir_all(dir).unwrap();
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("cuda-module-gpu-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
#[ignore = "needs a GPU"]
fn a_jit_failure_carries_the_driver_log() {
    let (context, _current) = gpu();
    let broken = ObjectCode::from_ptx(
        b".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry broken()\n{\n bogus.instruction;\n}\n".to_vec(),
        "broken.ptx",
    )
    .unwrap();
    // The driver may compile at load time or, context-independently, at
    // the first lookup; either way the failure carries the JIT log.
    let err = Library::load(&broken)
        .and_then(|library| library.kernel("broken")?.function(&context))
        .map(drop)
        .unwrap_err();
    let ModuleError::Call {
        library,
        error,
        log,
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(library.as_deref(), Some("broken.ptx"));
    assert_eq!(
        error.result,
        cuda_driver_sys::sys::CUresult::CUDA_ERROR_INVALID_PTX,
        "{err}"
    );
    assert!(!error.description.is_empty(), "{err}");
    assert!(log.contains("bogus"), "{err}");
    eprintln!("{err}");
}

const SPIN_CU: &str = r#"
extern "C" __global__ void spin_then_write(int *out, long long cycles)
{
    long long start = clock64();
    while (clock64() - start < cycles) {
    }
    out[0] = 42;
}
"#;

/// Launches `spin_then_write` on `context`'s null stream: about 0.2 s of
/// spinning (400 M cycles), then 42 into `out`.
fn start_spin(spin: &Kernel, context: &Context, out: &DeviceBuffer) {
    let (mut out_arg, mut cycles) = (out.pointer(), 400_000_000i64);
    let mut params: [*mut c_void; 2] = [(&raw mut out_arg).cast(), (&raw mut cycles).cast()];
    // SAFETY: spin_then_write(int *out, long long cycles); `out` holds one
    // int, and each caller waits for the kernel before freeing it.
    unsafe {
        spin.launch(
            context,
            std::ptr::null_mut(),
            LaunchConfig::for_elements(1, 1),
            &mut params,
        )
    }
    .unwrap();
}

/// One Library, loaded once, runs saxpy on every device at once, one
/// thread per device (on a single-GPU machine: one device).
#[test]
#[ignore = "needs a GPU"]
fn one_library_serves_every_device() {
    let _gpu = gpu();
    let count = cuda_module::device_count().unwrap();
    let linked = link(
        &[ptx_of(fixtures::SAXPY_CU, "saxpy.cu")],
        Backend::NvJitLink,
    )
    .unwrap();
    let library = Library::load(&linked).unwrap();
    let kernel = library.kernel("saxpy").unwrap();
    let contexts: Vec<Context> = (0..count)
        .map(|ordinal| Context::primary(ordinal).unwrap())
        .collect();
    let functions: Vec<_> = contexts
        .iter()
        .map(|c| kernel.function(c).unwrap())
        .collect();
    for (context, attributes) in contexts.iter().map(|c| (c, kernel.attributes(c).unwrap())) {
        eprintln!("device {}: {attributes:?}", context.device());
        assert_eq!(attributes.max_threads_per_block, 1024);
    }
    if count > 1 {
        assert_ne!(
            functions[0], functions[1],
            "each device gets its own CUfunction"
        );
    }
    std::thread::scope(|scope| {
        for context in &contexts {
            let library = &library;
            scope.spawn(move || {
                let _current = context.make_current().unwrap();
                run_saxpy(context, library, "saxpy");
            });
        }
    });
    eprintln!("saxpy ran on {count} device(s) from one Library");
}

/// Dropping the last handle of a library while a kernel of it still runs
/// on another thread's device waits for that work, then unloads.
#[test]
#[ignore = "needs a GPU"]
fn unloading_waits_for_running_work() {
    let _gpu = gpu();
    let last = cuda_module::device_count().unwrap() - 1;
    let linked = link(&[ptx_of(SPIN_CU, "spin.cu")], Backend::NvJitLink).unwrap();
    let library = Library::load(&linked).unwrap();
    let kernel = library.kernel("spin_then_write").unwrap();
    let device_context = Context::primary(last).unwrap();
    let out = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let _current = device_context.make_current().unwrap();
                let out = DeviceBuffer::from_slice(&device_context, &[0i32]).unwrap();
                start_spin(&kernel, &device_context, &out);
                out
            })
            .join()
            .unwrap()
    });
    // The kernel spins for ~0.2 s; dropping both handles unloads, after it.
    let start = std::time::Instant::now();
    drop(kernel);
    drop(library);
    let waited = start.elapsed();
    assert_eq!(out.to_vec::<i32>().unwrap(), [42]);
    eprintln!("unload waited {waited:?} for the running kernel");
    assert!(waited >= std::time::Duration::from_millis(50), "{waited:?}");
}

/// A library whose kernels were looked up but never launched unloads at
/// once, without waiting for the context's other work; one that was
/// launched in the context waits for it.
#[test]
#[ignore = "needs a GPU"]
fn unloading_waits_only_after_a_launch() {
    let (context, _current) = gpu();
    let spin = link(&[ptx_of(SPIN_CU, "spin.cu")], Backend::NvJitLink).unwrap();
    let saxpy = link(
        &[ptx_of(fixtures::SAXPY_CU, "saxpy.cu")],
        Backend::NvJitLink,
    )
    .unwrap();
    let spinning = Library::load(&spin).unwrap();
    let out = DeviceBuffer::from_slice(&context, &[0i32]).unwrap();
    let spin = spinning.kernel("spin_then_write").unwrap();

    start_spin(&spin, &context, &out);
    let looked_up = Library::load(&saxpy).unwrap();
    looked_up
        .kernel("saxpy")
        .unwrap()
        .function(&context)
        .unwrap();
    let start = std::time::Instant::now();
    drop(looked_up);
    let unload = start.elapsed();
    assert_eq!(
        out.to_vec::<i32>().unwrap(),
        [42],
        "the spin ran to its end"
    );
    eprintln!("a library never launched unloaded in {unload:?} while the context was busy");
    assert!(unload < std::time::Duration::from_millis(50), "{unload:?}");

    // Launched once (saxpy, quick), then unloaded behind the spin: waits.
    let launched = Library::load(&saxpy).unwrap();
    run_saxpy(&context, &launched, "saxpy");
    start_spin(&spin, &context, &out);
    let start = std::time::Instant::now();
    drop(launched);
    let waited = start.elapsed();
    eprintln!("a launched library's unload waited {waited:?} for the context's work");
    assert!(waited >= std::time::Duration::from_millis(50), "{waited:?}");
}

const MANAGED_CU: &str = r#"
__managed__ int hits;

extern "C" __global__ void count_hits()
{
    atomicAdd(&hits, 1);
}
"#;

/// A `__managed__` variable is read and written from the host at the
/// address `cuLibraryGetManaged` gives.
#[test]
#[ignore = "needs a GPU"]
fn a_managed_variable_is_shared_with_the_host() {
    let (context, _current) = gpu();
    let linked = link(&[ptx_of(MANAGED_CU, "managed.cu")], Backend::NvJitLink).unwrap();
    let library = Library::load(&linked).unwrap();
    let (address, size) = library.managed("hits").unwrap();
    assert_eq!(size, 4);
    let host = address as usize as *mut i32;
    // SAFETY: managed memory of 4 bytes, host-accessible while no kernel runs.
    unsafe { host.write_volatile(0) };
    let kernel = library.kernel("count_hits").unwrap();
    // SAFETY: count_hits takes no parameters.
    unsafe {
        kernel.launch(
            &context,
            std::ptr::null_mut(),
            LaunchConfig::for_elements(4 * 256, 256),
            &mut [],
        )
    }
    .unwrap();
    cuda_module::synchronize(&context).unwrap();
    // SAFETY: as above, after synchronising.
    assert_eq!(unsafe { host.read_volatile() }, 1024);
}

/// Without an arch, the linker takes the current context's device's.
#[test]
#[ignore = "needs a GPU"]
fn the_arch_defaults_to_the_current_device() {
    let _gpu = gpu();
    let mut linker = Linker::new(LinkerOptions::default()).unwrap();
    linker.add(&ptx_of(fixtures::SAXPY_CU, "saxpy.cu")).unwrap();
    let cubin = linker.link(OutputKind::Cubin).unwrap();
    let arches = cubin.inspect().unwrap().arches();
    assert_eq!(arches.len(), 1);
    assert_eq!(arches[0], arch(), "{arches:?}");
}

/// Every hostile image, bare and in every container, and one image of each
/// class of structural lie, is refused by both
/// `Library::load`'s only input (`ObjectCode`) and `Library::from_file`,
/// before the driver sees a byte. `run.sh` runs this in both loading modes.
#[test]
#[ignore = "needs a GPU"]
fn hostile_images_are_refused_before_the_driver() {
    let _gpu = gpu();
    let ptx = ptx_of(fixtures::SAXPY_CU, "saxpy.cu");
    for relocatable in [false, true] {
        let cubin = ptxas(ptx.as_bytes(), &arch().to_string(), relocatable).unwrap();
        let mut images = cuda_link_tests::hostile::images(&cubin);
        // One image of each class of issue 24, each refused before the
        // driver in both loading modes.
        images.extend(cuda_link_tests::hostile::classes(&cubin));
        for image in images {
            let from_bytes = ObjectCode::from_bytes(image.bytes.clone(), image.name.as_str());
            assert!(from_bytes.is_err(), "{} was accepted", image.name);
            let (_dir, path) = cuda_link_tests::temp_file("hostile.cubin", &image.bytes);
            match Library::from_file(&path) {
                Err(ModuleError::Object(err)) => assert_eq!(err.name, path.display().to_string()),
                Err(other) => panic!("{}: not a validation error: {other}", image.name),
                Ok(_) => panic!("{} was loaded", image.name),
            }
        }
    }
    // The real cubin itself still loads from a file.
    let cubin = ptxas(ptx.as_bytes(), &arch().to_string(), false).unwrap();
    let (_dir, path) = cuda_link_tests::temp_file("saxpy.cubin", &cubin);
    let library = Library::from_file(&path).unwrap();
    assert_eq!(library.kernel("saxpy").unwrap().name(), "saxpy");
}

/// Every entry point has the ABI its declaration in the pinned header
/// has: versioned names are the exported symbols of that name, and plain
/// names, asked of `cuGetProcAddress` at their declared ABI's version, are
/// the exported plain symbols (whose ABI NVIDIA never changes). The sample
/// holds the functions whose signature 13.0 changed, and `cuCtxSynchronize`,
/// which `cuGetProcAddress` at 13000 would hand out with a context argument.
#[test]
#[ignore = "needs a GPU"]
fn entry_points_have_the_declared_abi() {
    use cuda_driver_sys::{DriverFns, sys::CUDA_VERSION};
    let _gpu = gpu();
    let driver = cuda_driver_sys::Driver::global().unwrap();
    assert_eq!(
        driver.resolution(),
        cuda_driver_sys::Resolution::ProcAddress
    );
    macro_rules! entry {
        ($field:ident) => {
            (stringify!($field), driver.$field.map(|f| f as *const ()))
        };
    }
    #[cfg(not(feature = "cuda-13000"))]
    let sample = [
        entry!(cuCtxCreate_v2),
        entry!(cuMemAdvise),
        entry!(cuMemPrefetchAsync),
        entry!(cuStreamGetCaptureInfo_v2),
        entry!(cuEventElapsedTime),
        entry!(cuDeviceGetUuid),
        entry!(cuGraphAddDependencies),
        entry!(cuCtxSynchronize),
    ];
    #[cfg(feature = "cuda-13000")]
    let sample = [
        entry!(cuCtxCreate_v4),
        entry!(cuMemAdvise_v2),
        entry!(cuMemPrefetchAsync_v2),
        entry!(cuStreamGetCaptureInfo_v3),
        entry!(cuEventElapsedTime_v2),
        entry!(cuDeviceGetUuid_v2),
        entry!(cuGraphAddDependencies_v2),
        entry!(cuCtxSynchronize),
    ];
    // SAFETY: the driver is loaded already; opening it again runs nothing.
    let libcuda = unsafe { libloading::Library::new("libcuda.so.1") }.unwrap();
    eprintln!("bindings of cuda.h {CUDA_VERSION}");
    for (name, table) in sample {
        let c_name = std::ffi::CString::new(name).unwrap();
        // SAFETY: the address is only compared, never called.
        let exported = unsafe { libcuda.get::<*const ()>(c_name.as_bytes_with_nul()) }
            .map(|symbol| *symbol)
            .ok();
        eprintln!(
            "{name}: proc version {:?}",
            DriverFns::proc_version(&c_name)
        );
        assert_eq!(
            table, exported,
            "{name}: not the exported symbol of that name"
        );
    }
}
