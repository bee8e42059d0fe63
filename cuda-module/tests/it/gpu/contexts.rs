//! GPU tests of contexts, part of the `gpu` test binary: a launch,
//! `cuda_link::DeviceContext` guards and `Context::make_current` guards
//! leave the thread's current context as they found it, and a module's
//! kernel refuses other contexts.

use std::ffi::c_void;

use cuda_driver_sys::sys::CUcontext;
use cuda_link::{Backend, DeviceContext, ObjectCode};
use cuda_link_tests::fixtures;
use cuda_module::{Context, DeviceBuffer, LaunchConfig, Library, LoadOptions, ModuleError};

use super::{gpu, link, ptx_of, run_saxpy};

/// The calling thread's current context.
fn current() -> CUcontext {
    let driver = cuda_driver_sys::Driver::global().unwrap();
    let mut context = std::ptr::null_mut();
    // SAFETY: an out-pointer.
    let status = unsafe { driver.cuCtxGetCurrent(&mut context) }.unwrap();
    driver.check(status).unwrap();
    context
}

fn saxpy_cubin() -> ObjectCode {
    link(
        &[ptx_of(fixtures::SAXPY_CU, "saxpy.cu")],
        Backend::NvJitLink,
    )
    .unwrap()
}

/// After a fallback to the module API, the kernel's function exists in the
/// context the module was loaded into alone; another context gets
/// `ModuleError::ForeignContext`, not that context's function.
#[test]
#[ignore = "needs a GPU"]
fn a_module_kernel_in_another_context_is_a_typed_error() {
    let (home, _current) = gpu();
    let options = LoadOptions::default().force_module_api(true);
    let forced = Library::load_with(&saxpy_cubin(), options).unwrap();
    assert!(forced.is_module());
    let kernel = forced.kernel("saxpy").unwrap();
    let function = kernel.function(&home).unwrap();

    let other = Context::create(0).unwrap();
    let error = kernel.function(&other).map(drop).unwrap_err();
    assert!(
        matches!(&error, ModuleError::ForeignContext { kernel, library }
            if kernel == "saxpy" && library == forced.name()),
        "{error}"
    );
    for result in [
        kernel.attributes(&other).map(drop),
        kernel
            .max_active_blocks_per_multiprocessor(&other, 256, 0)
            .map(drop),
        kernel.set_max_dynamic_shared_size_bytes(&other, 1024),
    ] {
        assert!(
            matches!(result, Err(ModuleError::ForeignContext { .. })),
            "{result:?}"
        );
    }
    // The home context, through another `Context` of it, still has it.
    let again = Context::primary(0).unwrap();
    assert_eq!(kernel.function(&again).unwrap(), function);
    // Destroying `other`, current since its creation, makes `home` current
    // again.
    drop(other);
    run_saxpy(&home, &forced, "saxpy");
}

/// `Kernel::launch` pushes the launch's context and pops it after the
/// launch, whether the driver runs it or refuses it.
#[test]
#[ignore = "needs a GPU"]
fn a_launch_restores_the_current_context() {
    let (primary, _current) = gpu();
    let library = Library::load(&saxpy_cubin()).unwrap();
    let kernel = library.kernel("saxpy").unwrap();
    const N: usize = 1024;
    let x = DeviceBuffer::from_slice(&primary, &[1.0f32; N]).unwrap();
    let y = DeviceBuffer::from_slice(&primary, &[2.0f32; N]).unwrap();
    let created = Context::create(0).unwrap();
    let before = current();
    assert_eq!(before, created.as_raw());

    let (mut a, mut x_arg, mut y_arg, mut n) = (3.0f32, x.pointer(), y.pointer(), N as i32);
    let mut params: [*mut c_void; 4] = [
        (&raw mut a).cast(),
        (&raw mut x_arg).cast(),
        (&raw mut y_arg).cast(),
        (&raw mut n).cast(),
    ];
    let config = LaunchConfig::for_elements(N as u32, 256);
    // SAFETY: saxpy's four parameters, of its types; both buffers hold N
    // floats of the primary context.
    unsafe { kernel.launch(&primary, std::ptr::null_mut(), config, &mut params) }.unwrap();
    assert_eq!(current(), before, "after a launch");

    // More threads per block than any device has: refused by the driver.
    let refused = LaunchConfig {
        block_dim: (4096, 1, 1),
        ..config
    };
    // SAFETY: as above; the driver refuses the configuration.
    let error =
        unsafe { kernel.launch(&primary, std::ptr::null_mut(), refused, &mut params) }.unwrap_err();
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
    assert_eq!(current(), before, "after a refused launch");

    cuda_module::synchronize(&primary).unwrap();
    assert!(y.to_vec::<f32>().unwrap().iter().all(|&v| v == 5.0));
    assert_eq!(current(), before);
    drop(created);
}

/// `DeviceContext` guards restore what was current before the first of
/// them, whichever drops first; the newest live guard's context stays
/// current meanwhile. On a machine with several GPUs the two guards are on
/// different devices.
#[test]
#[ignore = "needs a GPU"]
fn device_context_guards_restore_in_any_drop_order() {
    let _gpu = gpu();
    let last = cuda_module::device_count().unwrap() - 1;
    let (first, second) = (
        Context::primary(0).unwrap(),
        Context::primary(last).unwrap(),
    );
    let outer = Context::create(0).unwrap();
    assert_eq!(current(), outer.as_raw());

    let a = DeviceContext::make_current(0).unwrap();
    assert_eq!(current(), first.as_raw());
    let b = DeviceContext::make_current(last).unwrap();
    assert_eq!(current(), second.as_raw());
    drop(b);
    assert_eq!(current(), first.as_raw(), "in order: A's context");
    drop(a);
    assert_eq!(current(), outer.as_raw(), "in order: before A");

    let a = DeviceContext::make_current(0).unwrap();
    let b = DeviceContext::make_current(last).unwrap();
    drop(a);
    assert_eq!(current(), second.as_raw(), "B lives: its context");
    drop(b);
    assert_eq!(current(), outer.as_raw(), "out of order: before A");
    drop(outer);
}

/// `Context::make_current` guards restore as `DeviceContext` guards do,
/// on the real driver: what was current before the first of them,
/// whichever drops first, the newest live guard's context meanwhile. On a
/// machine with several GPUs the two guards are on different devices.
#[test]
#[ignore = "needs a GPU"]
fn current_guards_restore_in_any_drop_order() {
    let _gpu = gpu();
    let last = cuda_module::device_count().unwrap() - 1;
    let (first, second) = (
        Context::primary(0).unwrap(),
        Context::primary(last).unwrap(),
    );
    let outer = Context::create(0).unwrap();
    assert_eq!(current(), outer.as_raw());

    let a = first.make_current().unwrap();
    assert_eq!(current(), first.as_raw());
    let b = second.make_current().unwrap();
    assert_eq!(current(), second.as_raw());
    drop(b);
    assert_eq!(current(), first.as_raw(), "in order: A's context");
    drop(a);
    assert_eq!(current(), outer.as_raw(), "in order: before A");

    let a = first.make_current().unwrap();
    let b = second.make_current().unwrap();
    drop(a);
    assert_eq!(current(), second.as_raw(), "B lives: its context");
    drop(b);
    assert_eq!(current(), outer.as_raw(), "out of order: before A");
    drop(outer);
}
