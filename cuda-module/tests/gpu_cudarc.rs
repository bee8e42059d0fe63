//! GPU tests of the `cudarc` feature: contexts from cudarc, checked
//! launches with cudarc memory on cudarc streams, attributes, occupancy,
//! dynamic shared memory, lookup by demangled name.
//!
//! Every test is `#[ignore = "needs a GPU"]`; `cargo xtask test-gpu`
//! bundles this binary and runs it with `--include-ignored`.
#![allow(clippy::result_large_err)]

use std::sync::Arc;

use cuda_driver_sys::sys::{CUfunction_attribute, CUresult};
use cuda_link::{Arch, Linker, LinkerOptions, ObjectCode, OutputKind};
use cuda_link_tests::nvrtc;
use cuda_module::{Context, LaunchConfig, Library, ModuleError};
use cudarc::driver::CudaContext;

const KERNELS_CU: &str = r#"
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

// Spins for `cycles`, then fills: a slow producer for the two-stream test.
extern "C" __global__ void slow_fill(float *out, float value, long long cycles, int n)
{
    long long start = clock64();
    while (clock64() - start < cycles) {}
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value;
}

extern "C" __global__ void copy(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}

// Uses 64 KiB of dynamic shared memory.
extern "C" __global__ void big_shared(float *out)
{
    extern __shared__ float buffer[];
    const int n = 16384;
    for (int i = threadIdx.x; i < n; i += blockDim.x) buffer[i] = (float)i;
    __syncthreads();
    if (threadIdx.x == 0) out[0] = buffer[n - 1] + buffer[1];
}

template <typename T> __global__ void scale(T *data, T factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= factor;
}
template __global__ void scale<float>(float *, float, int);
template __global__ void scale<int>(int *, int, int);

// Two overloads: one demangled name, two kernels.
__global__ void twin(float *p) { p[0] = 1.0f; }
__global__ void twin(int *p) { p[0] = 1; }
"#;

const N: usize = 4096;

/// cudarc's context for device 0, ours over it, and the linked library.
fn setup() -> (Arc<CudaContext>, Context, Library) {
    let cudarc = CudaContext::new(0).expect("these tests need a GPU");
    let context = Context::from_cudarc(&cudarc);
    let library = Library::load(&kernels_cubin()).unwrap();
    (cudarc, context, library)
}

/// `KERNELS_CU` compiled and linked for sm_90.
fn kernels_cubin() -> ObjectCode {
    let ptx = nvrtc(KERNELS_CU, "kernels.cu", &["-arch=compute_90", "-rdc=true"])
        .unwrap()
        .ptx
        .unwrap();
    let mut linker = Linker::new(LinkerOptions::for_arch(Arch::sm(90))).unwrap();
    linker
        .add(&ObjectCode::from_ptx(ptx, "kernels.ptx").unwrap())
        .unwrap();
    linker.link(OutputKind::Cubin).unwrap()
}

#[test]
#[ignore = "needs a GPU"]
fn saxpy_with_cudarc_memory_on_a_cudarc_stream() {
    let (cudarc, context, library) = setup();
    let stream = cudarc.default_stream();
    let xs: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let x = stream.clone_htod(&xs).unwrap();
    let mut y = stream.clone_htod(&vec![1.0f32; N]).unwrap();
    let (a, n) = (2.0f32, N as i32);
    let saxpy = library.kernel("saxpy").unwrap();
    let mut launch = saxpy.launch_on(&context, &stream).unwrap();
    launch.arg(&a).slice(&x).slice_mut(&mut y).arg(&n);
    // SAFETY: saxpy reads x and writes y within their N elements.
    unsafe { launch.launch(LaunchConfig::for_elements(N as u32, 128)) }.unwrap();
    drop(launch);
    let result = stream.clone_dtoh(&y).unwrap();
    assert!((0..N).all(|i| result[i] == 2.0 * i as f32 + 1.0));
}

/// A launch captured into a cudarc graph keeps its library loaded: the
/// graph is launched after every `Kernel` and `Library` of it is dropped
/// and three other libraries are loaded (unloaded code crashed here), 20
/// rounds, each checking the numbers; the context stays usable.
#[test]
#[ignore = "needs a GPU"]
fn a_captured_launch_keeps_its_library_for_the_graph() {
    use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
    let cudarc = CudaContext::new(0).expect("these tests need a GPU");
    let cubin = kernels_cubin();
    let stream = cudarc.new_stream().unwrap();
    let xs: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let x = stream.clone_htod(&xs).unwrap();
    let mut y = stream.clone_htod(&vec![1.0f32; N]).unwrap();
    let (a, n) = (2.0f32, N as i32);
    // SAFETY: as cudarc asks for capture; x and y outlive every graph.
    unsafe { cudarc.disable_event_tracking() };
    for round in 0..20 {
        stream.memcpy_htod(&vec![1.0f32; N], &mut y).unwrap();
        let library = Library::load(&cubin).unwrap();
        let saxpy = library.kernel("saxpy").unwrap();
        stream
            .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .unwrap();
        let mut launch = saxpy.launch_on_stream(&stream);
        launch.arg(&a).slice(&x).slice_mut(&mut y).arg(&n);
        // SAFETY: saxpy reads x and writes y within their N elements, and
        // both outlive the graph.
        unsafe { launch.launch(LaunchConfig::for_elements(N as u32, 128)) }.unwrap();
        drop(launch);
        let graph = stream
            .end_capture(CUgraphInstantiate_flags(0))
            .unwrap()
            .expect("a graph");
        drop((saxpy, library));
        let others: Vec<Library> = (0..3).map(|_| Library::load(&cubin).unwrap()).collect();
        for other in &others {
            other.kernel("copy").unwrap();
        }
        graph.launch().unwrap();
        stream.synchronize().unwrap();
        let result = stream.clone_dtoh(&y).unwrap();
        assert!(
            (0..N).all(|i| result[i] == 2.0 * i as f32 + 1.0),
            "round {round}: wrong numbers"
        );
        drop(graph);
        drop(others);
    }
    // SAFETY: no capture is under way any more.
    unsafe { cudarc.enable_event_tracking() };
    cudarc.synchronize().unwrap();
    cudarc.check_err().unwrap();
}

/// `launch_on_stream` needs no `Context`: it takes the stream's, for
/// streams of one cudarc context and of another alike, and launches with
/// cudarc's own `LaunchConfig`.
#[test]
#[ignore = "needs a GPU"]
fn a_launch_on_a_stream_alone() {
    let (cudarc, _context, library) = setup();
    let other = CudaContext::new(0).unwrap();
    let saxpy = library.kernel("saxpy").unwrap();
    let streams = [
        cudarc.default_stream(),
        cudarc.new_stream().unwrap(),
        other.default_stream(),
        cudarc.default_stream(),
    ];
    let xs: Vec<f32> = (0..N).map(|i| i as f32).collect();
    for (round, stream) in streams.iter().enumerate() {
        let x = stream.clone_htod(&xs).unwrap();
        let mut y = stream.clone_htod(&vec![round as f32; N]).unwrap();
        let (a, n) = (3.0f32, N as i32);
        let mut launch = saxpy.launch_on_stream(stream);
        launch.arg(&a).slice(&x).slice_mut(&mut y).arg(&n);
        let config = cudarc::driver::LaunchConfig::for_num_elems(N as u32);
        // SAFETY: saxpy reads x and writes y within their N elements.
        unsafe { launch.launch(config) }.unwrap();
        drop(launch);
        let result = stream.clone_dtoh(&y).unwrap();
        assert!(
            (0..N).all(|i| result[i] == 3.0 * i as f32 + round as f32),
            "stream {round}"
        );
    }
    // Its arguments are checked as `launch_on`'s are.
    let stream = other.default_stream();
    let x = stream.clone_htod(&xs).unwrap();
    let mut launch = saxpy.launch_on_stream(&stream);
    launch.arg(&2.0f64).slice(&x);
    // SAFETY: refused before launching.
    let error = unsafe { launch.launch(LaunchConfig::for_elements(N as u32, 128)) }.unwrap_err();
    assert!(
        matches!(
            error,
            ModuleError::ArgumentCount {
                expected: 4,
                given: 2,
                ..
            }
        ),
        "{error}"
    );
}

/// The calling thread's current context.
fn current() -> cuda_driver_sys::sys::CUcontext {
    let driver = cuda_driver_sys::Driver::global().unwrap();
    let mut context = std::ptr::null_mut();
    // SAFETY: an out-pointer.
    let status = unsafe { driver.cuCtxGetCurrent(&mut context) }.unwrap();
    driver.check(status).unwrap();
    context
}

/// A checked launch makes the stream's context current for the launch
/// only: the thread's current context is as it was after it, whether the
/// driver runs the launch or refuses it.
#[test]
#[ignore = "needs a GPU"]
fn a_checked_launch_restores_the_current_context() {
    let (cudarc, context, library) = setup();
    let stream = cudarc.default_stream();
    let x = stream.clone_htod(&vec![1.0f32; N]).unwrap();
    let mut y = stream.clone_htod(&vec![2.0f32; N]).unwrap();
    let (a, n) = (3.0f32, N as i32);
    let saxpy = library.kernel("saxpy").unwrap();
    let other = Context::create(0).unwrap();
    let mut launch = saxpy.launch_on(&context, &stream).unwrap();
    launch.arg(&a).slice(&x).slice_mut(&mut y).arg(&n);
    let _current = other.make_current().unwrap();
    let config = LaunchConfig::for_elements(N as u32, 128);
    // SAFETY: saxpy reads x and writes y within their N elements.
    unsafe { launch.launch(config) }.unwrap();
    assert_eq!(current(), other.as_raw(), "after a launch");
    // More threads per block than any device has: refused by the driver.
    let refused = LaunchConfig {
        block_dim: (4096, 1, 1),
        ..config
    };
    // SAFETY: as above; the driver refuses the configuration.
    let error = unsafe { launch.launch(refused) }.unwrap_err();
    assert!(
        matches!(
            error,
            ModuleError::Call {
                call: "cuLaunchKernel",
                ..
            }
        ),
        "{error}"
    );
    assert_eq!(current(), other.as_raw(), "after a refused launch");
    drop(launch);
    assert!(stream.clone_dtoh(&y).unwrap().iter().all(|&v| v == 5.0));
}

#[test]
#[ignore = "needs a GPU"]
fn wrong_arguments_are_typed_errors_and_launch_nothing() {
    let (cudarc, context, library) = setup();
    let stream = cudarc.default_stream();
    let x = stream.clone_htod(&vec![1.0f32; N]).unwrap();
    let mut y = stream.clone_htod(&vec![7.0f32; N]).unwrap();
    let saxpy = library.kernel("saxpy").unwrap();
    let config = LaunchConfig::for_elements(N as u32, 128);

    // Three arguments for four parameters.
    let a = 2.0f32;
    let mut launch = saxpy.launch_on(&context, &stream).unwrap();
    launch.arg(&a).slice(&x).slice_mut(&mut y);
    // SAFETY: refused before launching.
    let error = unsafe { launch.launch(config) }.unwrap_err();
    drop(launch);
    assert!(
        matches!(error, ModuleError::ArgumentCount { expected: 4, given: 3, ref kernel } if kernel == "saxpy"),
        "{error}"
    );

    // An i64 where the kernel takes an int.
    let wide_n = N as i64;
    let mut launch = saxpy.launch_on(&context, &stream).unwrap();
    launch.arg(&a).slice(&x).slice_mut(&mut y).arg(&wide_n);
    // SAFETY: refused before launching.
    let error = unsafe { launch.launch(config) }.unwrap_err();
    drop(launch);
    assert!(
        matches!(
            error,
            ModuleError::ArgumentSize {
                index: 3,
                expected: 4,
                given: 8,
                ..
            }
        ),
        "{error}"
    );
    assert!(
        error.to_string().contains("argument 3 is 8 bytes"),
        "{error}"
    );

    // A double where the kernel takes a float.
    let wide_a = 2.0f64;
    let n = N as i32;
    let mut launch = saxpy.launch_on(&context, &stream).unwrap();
    launch.arg(&wide_a).slice(&x).slice_mut(&mut y).arg(&n);
    // SAFETY: refused before launching.
    let error = unsafe { launch.launch(config) }.unwrap_err();
    drop(launch);
    assert!(
        matches!(
            error,
            ModuleError::ArgumentSize {
                index: 0,
                expected: 4,
                given: 8,
                ..
            }
        ),
        "{error}"
    );

    // Nothing ran: y is as it was.
    assert!(stream.clone_dtoh(&y).unwrap().iter().all(|&v| v == 7.0));

    // A stream of another context is refused.
    let other = CudaContext::new(0).unwrap();
    let foreign = other.default_stream();
    assert!(matches!(
        saxpy.launch_on(&context, &foreign).map(drop),
        Err(ModuleError::ForeignStream { .. })
    ));
}

#[test]
#[ignore = "needs a GPU"]
fn sixty_four_kib_of_dynamic_shared_memory_needs_the_setter() {
    let (cudarc, context, library) = setup();
    let stream = cudarc.default_stream();
    let kernel = library.kernel("big_shared").unwrap();
    let config = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 64 * 1024,
    };
    let mut out = stream.alloc_zeros::<f32>(1).unwrap();
    let mut launch = kernel.launch_on(&context, &stream).unwrap();
    launch.slice_mut(&mut out);
    // SAFETY: big_shared writes out[0] and its own shared memory.
    let error = unsafe { launch.launch(config) }.unwrap_err();
    drop(launch);
    assert!(
        matches!(
            &error,
            ModuleError::Call {
                call: "cuLaunchKernel",
                ..
            }
        ),
        "{error}"
    );
    eprintln!("without the setter: {error}");

    kernel
        .set_max_dynamic_shared_size_bytes(&context, 64 * 1024)
        .unwrap();
    let attributes = kernel.attributes(&context).unwrap();
    assert_eq!(attributes.max_dynamic_shared_size_bytes, 64 * 1024);
    let mut launch = kernel.launch_on(&context, &stream).unwrap();
    launch.slice_mut(&mut out);
    // SAFETY: as above, now allowed its 64 KiB.
    unsafe { launch.launch(config) }.unwrap();
    drop(launch);
    assert_eq!(stream.clone_dtoh(&out).unwrap(), [16383.0 + 1.0]);
}

#[test]
#[ignore = "needs a GPU"]
fn attributes_and_occupancy_equal_the_raw_driver_calls() {
    let (_cudarc, context, library) = setup();
    let driver = cuda_driver_sys::Driver::global().unwrap();
    for name in ["saxpy", "slow_fill", "big_shared", "copy"] {
        let kernel = library.kernel(name).unwrap();
        let function = kernel.function(&context).unwrap();
        let raw = |attribute: CUfunction_attribute| {
            let mut value = 0;
            // SAFETY: a live function of the context and an out-pointer.
            let status = unsafe { driver.cuFuncGetAttribute(&mut value, attribute, function) };
            assert_eq!(status.unwrap(), CUresult::CUDA_SUCCESS);
            value
        };
        use CUfunction_attribute as A;
        let ours = kernel.attributes(&context).unwrap();
        let expected = [
            (
                ours.max_threads_per_block,
                A::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
            ),
            (
                ours.shared_size_bytes,
                A::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
            ),
            (ours.const_size_bytes, A::CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES),
            (ours.local_size_bytes, A::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES),
            (ours.num_regs, A::CU_FUNC_ATTRIBUTE_NUM_REGS),
            (ours.ptx_version, A::CU_FUNC_ATTRIBUTE_PTX_VERSION),
            (ours.binary_version, A::CU_FUNC_ATTRIBUTE_BINARY_VERSION),
            (
                i32::from(ours.cache_mode_ca),
                A::CU_FUNC_ATTRIBUTE_CACHE_MODE_CA,
            ),
            (
                ours.max_dynamic_shared_size_bytes,
                A::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            ),
            (
                ours.preferred_shared_memory_carveout,
                A::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
            ),
            (
                i32::from(ours.cluster_size_must_be_set),
                A::CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET,
            ),
            (
                ours.required_cluster_width,
                A::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH,
            ),
            (
                ours.required_cluster_height,
                A::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT,
            ),
            (
                ours.required_cluster_depth,
                A::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH,
            ),
            (
                i32::from(ours.non_portable_cluster_size_allowed),
                A::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
            ),
            (
                ours.cluster_scheduling_policy_preference,
                A::CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE,
            ),
        ];
        for (value, attribute) in expected {
            assert_eq!(value, raw(attribute), "{name}: {attribute:?}");
        }
        eprintln!("{name}: {ours:?}");

        for (block, shared) in [(128, 0), (256, 0), (1024, 0), (256, 4096)] {
            let mut raw_blocks = 0;
            // SAFETY: a live function and an out-pointer.
            let status = unsafe {
                driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                    &mut raw_blocks,
                    function,
                    block,
                    shared,
                )
            };
            assert_eq!(status.unwrap(), CUresult::CUDA_SUCCESS);
            let ours = kernel
                .max_active_blocks_per_multiprocessor(&context, block, shared)
                .unwrap();
            assert_eq!(ours, raw_blocks, "{name}, block {block}, shared {shared}");
        }
        let (mut min_grid, mut block) = (0, 0);
        // SAFETY: a live function, out-pointers, no callback.
        let status = unsafe {
            driver.cuOccupancyMaxPotentialBlockSize(&mut min_grid, &mut block, function, None, 0, 0)
        };
        assert_eq!(status.unwrap(), CUresult::CUDA_SUCCESS);
        assert_eq!(
            kernel.max_potential_block_size(&context, 0, 0).unwrap(),
            (min_grid, block),
            "{name}"
        );
    }
}

#[test]
#[ignore = "needs a GPU"]
fn two_cudarc_streams_are_ordered_by_cudarcs_events() {
    let (cudarc, context, library) = setup();
    let producer_stream = cudarc.new_stream().unwrap();
    let consumer_stream = cudarc.new_stream().unwrap();
    let (fill, copy) = (
        library.kernel("slow_fill").unwrap(),
        library.kernel("copy").unwrap(),
    );
    let mut shared = producer_stream.alloc_zeros::<f32>(N).unwrap();
    let mut out = consumer_stream.alloc_zeros::<f32>(N).unwrap();
    let config = LaunchConfig::for_elements(N as u32, 128);
    // ~50 ms of spinning: without ordering the copy would read zeros.
    let (value, cycles, n) = (42.0f32, 100_000_000i64, N as i32);
    let mut launch = fill.launch_on(&context, &producer_stream).unwrap();
    launch
        .slice_mut(&mut shared)
        .arg(&value)
        .arg(&cycles)
        .arg(&n);
    // SAFETY: slow_fill writes its N floats.
    unsafe { launch.launch(config) }.unwrap();
    drop(launch);
    let mut launch = copy.launch_on(&context, &consumer_stream).unwrap();
    launch.slice(&shared).slice_mut(&mut out).arg(&n);
    // SAFETY: copy reads shared and writes out, N floats each.
    unsafe { launch.launch(config) }.unwrap();
    drop(launch);
    let result = consumer_stream.clone_dtoh(&out).unwrap();
    assert!(
        result.iter().all(|&v| v == value),
        "the copy ran before the fill"
    );
}

#[test]
#[ignore = "needs a GPU"]
fn kernels_are_found_by_their_demangled_names() {
    let (cudarc, context, library) = setup();
    let stream = cudarc.default_stream();
    let scale = library.kernel("scale<float>").unwrap();
    let mut data = stream.clone_htod(&vec![1.5f32; N]).unwrap();
    let (factor, n) = (4.0f32, N as i32);
    let mut launch = scale.launch_on(&context, &stream).unwrap();
    launch.slice_mut(&mut data).arg(&factor).arg(&n);
    // SAFETY: scale<float> writes its N floats.
    unsafe { launch.launch(LaunchConfig::for_elements(N as u32, 128)) }.unwrap();
    drop(launch);
    assert!(stream.clone_dtoh(&data).unwrap().iter().all(|&v| v == 6.0));
    assert!(library.kernel("scale<int>").is_ok());

    let error = library.kernel("twin").map(drop).unwrap_err();
    let ModuleError::AmbiguousKernel { candidates, .. } = &error else {
        panic!("{error}")
    };
    let mut candidates = candidates.clone();
    candidates.sort();
    assert_eq!(candidates, ["_Z4twinPf", "_Z4twinPi"]);
    let error = library.kernel("scale<floot>").map(drop).unwrap_err();
    assert!(
        matches!(&error, ModuleError::KernelNotFound { closest, .. } if closest.first().map(String::as_str) == Some("scale<float>")),
        "{error}"
    );
}
