//! GPU tests on the nvcc 13 corpus (`cargo xtask test-gpu` bundles it):
//! kernels calling device functions from every container kind, linked by
//! nvJitLink and by the driver (library and CLI), launched, results checked.
//!
//! Every test is `#[ignore = "needs a GPU"]`; the bundle runs them with
//! `--include-ignored`.

use std::ffi::c_void;
use std::path::{Path, PathBuf};

use cuda_link::{Arch, Backend, LinkError, Linker, LinkerOptions, ObjectCode, OutputKind};
use cuda_link_tests::corpus;
use cuda_module::{Context, CurrentGuard, DeviceBuffer, LaunchConfig, Library};

const N: usize = 4096;

/// The primary context of device 0, current on this thread while the guard
/// lives.
fn gpu() -> (Context, CurrentGuard) {
    let context = Context::primary(0).expect("these tests need a GPU");
    let current = context.make_current().unwrap();
    (context, current)
}

fn dir() -> PathBuf {
    corpus::dir().expect("the bundle sets CUDA_LINK_CORPUS")
}

fn load(dir: &Path, name: &str) -> ObjectCode {
    ObjectCode::from_bytes(corpus::read(dir, name), name).unwrap_or_else(|e| panic!("{e}"))
}

fn link(dir: &Path, names: &[&str], backend: Backend) -> Result<ObjectCode, LinkError> {
    let mut linker = Linker::new(LinkerOptions::for_arch(Arch::sm(90)).backend(backend))?;
    for name in names {
        linker.add(&load(dir, name))?;
    }
    linker.link(OutputKind::Cubin)
}

/// A device buffer of `values` and its pointer, as a kernel argument.
fn buffer<T: bytemuck::NoUninit>(context: &Context, values: &[T]) -> DeviceBuffer {
    DeviceBuffer::from_slice(context, values).unwrap()
}

/// Launches `kernel(out, a, b, n)` over N elements and returns `out`.
fn launch_binary<T: bytemuck::NoUninit + bytemuck::AnyBitPattern + Default + Copy>(
    context: &Context,
    library: &Library,
    kernel: &str,
    a: &[T],
    b: &[T],
) -> Vec<T> {
    let (da, db, out) = (
        buffer(context, a),
        buffer(context, b),
        buffer(context, &[T::default(); N]),
    );
    let (mut out_arg, mut a_arg, mut b_arg, mut n_arg) =
        (out.pointer(), da.pointer(), db.pointer(), N as i32);
    let mut params: [*mut c_void; 4] = [
        (&raw mut out_arg).cast(),
        (&raw mut a_arg).cast(),
        (&raw mut b_arg).cast(),
        (&raw mut n_arg).cast(),
    ];
    let function = library.kernel(kernel).unwrap();
    // SAFETY: the call_* kernels take (T *out, const T *a, const T *b, int
    // n); each buffer holds N values of T.
    unsafe {
        function.launch(
            context,
            std::ptr::null_mut(),
            LaunchConfig::for_elements(N as u32, 128),
            &mut params,
        )
    }
    .unwrap();
    cuda_module::synchronize(context).unwrap();
    out.to_vec().unwrap()
}

/// Launches `kernel(T *out)` with one block of 32 threads over 32 values
/// of `T` (each kernel this is used for writes at most those), returns them.
fn launch_on_32<T: bytemuck::NoUninit + bytemuck::AnyBitPattern + Default + Copy>(
    context: &Context,
    library: &Library,
    kernel: &str,
) -> Vec<T> {
    let out = buffer(context, &[T::default(); 32]);
    let mut out_arg = out.pointer();
    let mut params: [*mut c_void; 1] = [(&raw mut out_arg).cast()];
    let function = library.kernel(kernel).unwrap();
    // SAFETY: the kernel takes one pointer to 32 values of T and runs with
    // 32 threads, each writing its own element.
    unsafe {
        function.launch(
            context,
            std::ptr::null_mut(),
            LaunchConfig::for_elements(32, 32),
            &mut params,
        )
    }
    .unwrap();
    cuda_module::synchronize(context).unwrap();
    out.to_vec().unwrap()
}

/// Launches the three caller kernels and checks every element.
fn check_callers(context: &Context, library: &Library, what: &str) {
    let ints_a: Vec<i32> = (0..N as i32).collect();
    let ints_b: Vec<i32> = (0..N as i32).map(|i| 7 * i - 3).collect();
    let sums = launch_binary(context, library, "call_add_cabi", &ints_a, &ints_b);
    assert!(
        (0..N).all(|i| sums[i] == ints_a[i] + ints_b[i]),
        "{what}: call_add_cabi"
    );
    // Small integers: exact in f32 and in fp16 sums.
    let floats_a: Vec<f32> = (0..N).map(|i| (i % 64) as f32).collect();
    let floats_b: Vec<f32> = (0..N).map(|i| (i % 13) as f32 - 6.0).collect();
    let products = launch_binary(context, library, "call_mul_cpp", &floats_a, &floats_b);
    assert!(
        (0..N).all(|i| products[i] == floats_a[i] * floats_b[i]),
        "{what}: call_mul_cpp"
    );
    let halves = launch_binary(context, library, "call_hadd_fp16", &floats_a, &floats_b);
    assert!(
        (0..N).all(|i| halves[i] == floats_a[i] + floats_b[i]),
        "{what}: call_hadd_fp16"
    );
}

#[test]
#[ignore = "needs a GPU"]
fn device_functions_from_every_container_launch() {
    let (context, _current) = gpu();
    let dir = dir();
    let callers = corpus::containers("use_device_functions");
    let callees = corpus::containers("device_functions");
    for ((caller, lto), (callee, _)) in callers.iter().zip(&callees) {
        let backends: &[Backend] = if *lto {
            &[Backend::NvJitLink]
        } else {
            &[Backend::NvJitLink, Backend::Driver]
        };
        for &backend in backends {
            let what = format!("{caller} + {callee} by {}", backend.name());
            let linked =
                link(&dir, &[caller, callee], backend).unwrap_or_else(|e| panic!("{what}: {e}"));
            check_callers(&context, &Library::load(&linked).unwrap(), &what);
        }
    }
}

#[test]
#[ignore = "needs a GPU"]
fn multi_file_lto_device_launch_and_variables() {
    let (context, _current) = gpu();
    let dir = dir();
    // lto_apply: data[i] = data[i] * 3 + 1, with lto_scale from another file.
    let kernels = corpus::containers("lto_kernel");
    for ((kernel, _), (scale, _)) in kernels.iter().zip(&corpus::containers("lto_scale")) {
        let linked = link(&dir, &[kernel, scale], Backend::NvJitLink)
            .unwrap_or_else(|e| panic!("{kernel}: {e}"));
        let library = Library::load(&linked).unwrap();
        let input: Vec<f32> = (0..N).map(|i| (i % 100) as f32).collect();
        let data = buffer(&context, &input);
        let (mut data_arg, mut n_arg) = (data.pointer(), N as i32);
        let mut params: [*mut c_void; 2] = [(&raw mut data_arg).cast(), (&raw mut n_arg).cast()];
        let function = library.kernel("lto_apply").unwrap();
        // SAFETY: lto_apply(float *data, int n) over N floats.
        unsafe {
            function.launch(
                &context,
                std::ptr::null_mut(),
                LaunchConfig::for_elements(N as u32, 128),
                &mut params,
            )
        }
        .unwrap();
        cuda_module::synchronize(&context).unwrap();
        let output: Vec<f32> = data.to_vec().unwrap();
        assert!(
            (0..N).all(|i| output[i] == input[i] * 3.0 + 1.0),
            "{kernel} + {scale}"
        );
    }

    // dl_parent launches dl_child from the device: out[i] = 2 i.
    for (file, _) in corpus::containers("device_launch") {
        let linked = link(&dir, &[&file, "libcudadevrt.a"], Backend::NvJitLink)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        let library = Library::load(&linked).unwrap();
        // dl_parent's child writes 32 ints.
        let values: Vec<i32> = launch_on_32(&context, &library, "dl_parent");
        assert!(
            (0..32).all(|i| values[i] == 2 * i as i32),
            "{file}: {values:?}"
        );
    }

    // use_variables: out[i] = constant_coeffs[i % 4] + managed_value.
    for (file, _) in corpus::containers("variables") {
        let linked =
            link(&dir, &[&file], Backend::NvJitLink).unwrap_or_else(|e| panic!("{file}: {e}"));
        let library = Library::load(&linked).unwrap();
        let (coeffs, size) = library.global(&context, "constant_coeffs").unwrap();
        assert_eq!(size, 16, "{file}");
        let (managed, size) = library.managed("managed_value").unwrap();
        assert_eq!(size, 4, "{file}");
        // SAFETY: a 16-byte and a 4-byte variable of the current context's
        // library; no kernel runs.
        unsafe {
            cuda_module::copy_to_device(coeffs, &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
            cuda_module::copy_to_device(managed, &[10i32]).unwrap();
        }
        let values: Vec<f32> = launch_on_32(&context, &library, "use_variables");
        let expected: Vec<f32> = (0..32).map(|i| (i % 4 + 1) as f32 + 10.0).collect();
        assert_eq!(values, expected, "{file}");
    }
}

/// `cuda-link link --backend driver --device 0`: the CLI makes the primary
/// context current itself; the output launches.
#[test]
#[ignore = "needs a GPU"]
fn the_cli_links_with_the_driver_on_a_device() {
    let (context, _current) = gpu();
    let dir = dir();
    let cli = std::env::var_os("CUDA_LINK_CLI").expect("the bundle sets CUDA_LINK_CLI");
    let output = std::env::temp_dir().join(format!("cuda-link-cli-{}.cubin", std::process::id()));
    let run = std::process::Command::new(cli)
        .args([
            "link",
            "--verbose",
            "-arch=sm_90",
            "--backend",
            "driver",
            "--device",
            "0",
            "-o",
        ])
        .arg(&output)
        .arg(dir.join("use_device_functions.o"))
        .arg(dir.join("libdevice_functions.a"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(stderr.contains("driver"), "{stderr}");
    let library = Library::from_file(&output).unwrap();
    check_callers(&context, &library, "CLI, driver backend");
    let _ = std::fs::remove_file(output);
}
