//! Where loading time goes, per driver API, with raw driver calls only:
//! load alone, first lookup alone, unload alone, for the library API
//! (`cuLibraryLoadData`, `cuLibraryGetKernel` + `cuKernelGetFunction`,
//! `cuLibraryUnload`) and the module API (`cuModuleLoadData`,
//! `cuModuleGetFunction`, `cuModuleUnload`). `cargo xtask test-gpu`
//! bundles it; `load_gap.sh` runs it once per `CUDA_MODULE_LOADING` mode.
//! Prints one line per image and API with the medians in microseconds.

use std::ffi::CString;
use std::ptr::null_mut;
use std::time::Instant;

use cuda_driver_sys::{Driver, sys::CUresult};
use cuda_link::{Arch, Linker, LinkerOptions, ObjectCode, OutputKind};
use cuda_link_tests::{fixtures, nvrtc, workloads};
use cuda_module::Context;

const ROUNDS: usize = 40;

fn cubin(source: &str, name: &str) -> ObjectCode {
    let ptx = nvrtc(source, name, &["-arch=compute_90", "-rdc=true"])
        .unwrap()
        .ptx
        .expect("NVRTC produced no PTX");
    let mut linker = Linker::new(LinkerOptions::for_arch(Arch::sm(90))).unwrap();
    linker
        .add(&ObjectCode::from_ptx(ptx, name).unwrap())
        .unwrap();
    linker.link(OutputKind::Cubin).unwrap()
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2] * 1e6
}

/// Seconds `f` took, and its result.
fn timed<T>(f: impl FnOnce() -> T) -> (f64, T) {
    let start = Instant::now();
    let value = f();
    (start.elapsed().as_secs_f64(), value)
}

fn ok(status: Result<CUresult, cuda_driver_sys::SymbolUnavailable>) {
    assert_eq!(status.unwrap(), CUresult::CUDA_SUCCESS);
}

/// (load, lookup, unload) of one round through the library API.
fn library_round(driver: &Driver, image: &ObjectCode, kernel: &CString) -> [f64; 3] {
    let bytes = image.image().as_bytes();
    let mut library = null_mut();
    // SAFETY: a validated image, no options, an out-pointer.
    let (load, ()) = timed(|| unsafe {
        ok(driver.cuLibraryLoadData(
            &mut library,
            bytes.as_ptr().cast(),
            null_mut(),
            null_mut(),
            0,
            null_mut(),
            null_mut(),
            0,
        ))
    });
    // SAFETY: a live library, a C string, out-pointers; the primary
    // context is current.
    let (lookup, ()) = timed(|| unsafe {
        let (mut handle, mut function) = (null_mut(), null_mut());
        ok(driver.cuLibraryGetKernel(&mut handle, library, kernel.as_ptr()));
        ok(driver.cuKernelGetFunction(&mut function, handle));
    });
    // SAFETY: unloads what was loaded above, once.
    let (unload, ()) = timed(|| unsafe { ok(driver.cuLibraryUnload(library)) });
    [load, lookup, unload]
}

/// (load, lookup, unload) of one round through the module API.
fn module_round(driver: &Driver, image: &ObjectCode, kernel: &CString) -> [f64; 3] {
    let bytes = image.image().as_bytes();
    let mut module = null_mut();
    // SAFETY: a validated image and an out-pointer, in the current context.
    let (load, ()) =
        timed(|| unsafe { ok(driver.cuModuleLoadData(&mut module, bytes.as_ptr().cast())) });
    // SAFETY: a live module, a C string and an out-pointer.
    let (lookup, ()) = timed(|| unsafe {
        let mut function = null_mut();
        ok(driver.cuModuleGetFunction(&mut function, module, kernel.as_ptr()));
    });
    // SAFETY: unloads what was loaded above, once.
    let (unload, ()) = timed(|| unsafe { ok(driver.cuModuleUnload(module)) });
    [load, lookup, unload]
}

fn main() {
    let context = Context::primary(0).unwrap();
    // The module API below loads into the current context.
    let _current = context.make_current().unwrap();
    let driver = Driver::global().unwrap();
    let mode = cuda_module::loading_mode().unwrap();
    let images = [
        ("small", cubin(fixtures::SAXPY_CU, "saxpy.cu"), "saxpy"),
        (
            "big",
            cubin(&workloads::many_kernels_cu(200), "big.cu"),
            "kernel_0",
        ),
    ];
    println!("| mode | image | API | load µs | first lookup µs | unload µs | sum µs |");
    println!("|---|---|---|---|---|---|---|");
    for (name, image, kernel) in &images {
        let kernel = CString::new(*kernel).unwrap();
        type Round = fn(&Driver, &ObjectCode, &CString) -> [f64; 3];
        let apis: [(&str, Round); 2] = [("library", library_round), ("module", module_round)];
        for (api, round) in apis {
            for _ in 0..3 {
                round(driver, image, &kernel); // warm-up
            }
            let rounds: Vec<[f64; 3]> =
                (0..ROUNDS).map(|_| round(driver, image, &kernel)).collect();
            let phase = |i: usize| median(rounds.iter().map(|r| r[i]).collect());
            let (load, lookup, unload) = (phase(0), phase(1), phase(2));
            println!(
                "| {mode:?} | {name} ({} KiB) | {api} | {load:.1} | {lookup:.1} | {unload:.1} | {:.1} |",
                image.as_bytes().len() / 1024,
                load + lookup + unload
            );
        }
    }
}
