//! Kernels as numba-cuda writes them (`tests/nvvm/numba`, made on the CPU
//! by `tests/nvvm/make_fixtures.py`): NVVM IR compiled by the machine's
//! libNVVM, linked by nvJitLink (LTO-IR) or loaded as PTX, launched with
//! numba's array arguments, and every number checked.

use std::ffi::c_void;

use cuda_link::nvvm::{self, Nvvm, NvvmRequest};
use cuda_link::{Isolation, Linker, LinkerOptions, ObjectCode, OutputKind};
use cuda_module::{Context, DeviceBuffer, LaunchConfig, Library};

use super::{arch, gpu};

/// Each kernel's modules, embedded: the bundle runs away from the tree.
const KERNELS: [(&str, &[&str]); 6] = [
    (
        "math_libdevice",
        &[include_str!(
            "../../../../tests/nvvm/numba/math_libdevice/module.0.ll"
        )],
    ),
    (
        "float64_int64",
        &[include_str!(
            "../../../../tests/nvvm/numba/float64_int64/module.0.ll"
        )],
    ),
    (
        "local_array",
        &[include_str!(
            "../../../../tests/nvvm/numba/local_array/module.0.ll"
        )],
    ),
    (
        "shared_atomics",
        &[include_str!(
            "../../../../tests/nvvm/numba/shared_atomics/module.0.ll"
        )],
    ),
    (
        "records",
        &[include_str!(
            "../../../../tests/nvvm/numba/records/module.0.ll"
        )],
    ),
    (
        "device_functions",
        &[
            include_str!("../../../../tests/nvvm/numba/device_functions/module.0.ll"),
            include_str!("../../../../tests/nvvm/numba/device_functions/module.1.ll"),
            include_str!("../../../../tests/nvvm/numba/device_functions/module.2.ll"),
            include_str!("../../../../tests/nvvm/numba/device_functions/module.3.ll"),
        ],
    ),
];

const N: usize = 10_000;

fn modules(kernel: &str) -> Vec<ObjectCode> {
    let (_, texts) = KERNELS.iter().find(|(name, _)| *name == kernel).unwrap();
    texts
        .iter()
        .enumerate()
        .map(|(i, text)| {
            ObjectCode::from_nvvm_ir(text.as_bytes().to_vec(), format!("{kernel}.{i}.ll")).unwrap()
        })
        .collect()
}

/// The kernel's module two ways: NVVM IR → LTO-IR → nvJitLink → cubin,
/// and NVVM IR → PTX, which the driver JIT-compiles.
fn libraries(kernel: &str) -> Vec<Library> {
    let modules = modules(kernel);
    let lib = Nvvm::global().unwrap_or_else(|e| panic!("{e}"));
    let libdevice = nvvm::read_libdevice(&nvvm::libdevice_beside(lib.path()).unwrap())
        .unwrap()
        .0;
    // One NVVM program of all modules, as numba compiles them.
    let options = [format!("-arch={}", arch().compute()), "-opt=3".to_owned()];
    let ptx = nvvm::compile(
        lib,
        &NvvmRequest {
            modules: &modules,
            libdevice: Some(&libdevice),
            options: &options,
            resolved_later: &[],
            check_unresolved: true,
            isolation: Isolation::process(),
        },
    )
    .unwrap_or_else(|e| panic!("{kernel}: {e}"));
    let ptx = ObjectCode::from_ptx(ptx.code, format!("{kernel}.ptx")).unwrap();
    // Each module an input of a link, lowered to LTO-IR by the linker.
    let mut linker = Linker::new(LinkerOptions::for_arch(arch())).unwrap();
    linker.add_many(&modules).unwrap();
    let cubin = linker
        .link(OutputKind::Cubin)
        .unwrap_or_else(|e| panic!("{kernel}: {e}"));
    vec![Library::load(&cubin).unwrap(), Library::load(&ptx).unwrap()]
}

/// numba's array arguments, flattened: meminfo, parent, item count, item
/// size, data, then each dimension's shape and stride.
fn array(buffer: &DeviceBuffer, items: usize, item_size: usize) -> [u64; 7] {
    [
        0,
        0,
        items as u64,
        item_size as u64,
        buffer.pointer(),
        items as u64,
        item_size as u64,
    ]
}

/// Launches the kernel whose name holds `kernel` with `arguments`, each
/// 8 bytes, over `N` threads in blocks of 128.
fn launch(context: &Context, library: &Library, kernel: &str, arguments: &[u64]) {
    let name = library
        .kernels()
        .unwrap()
        .into_iter()
        .find(|name| name.contains(kernel))
        .unwrap_or_else(|| panic!("no {kernel} in {}", library.name()));
    let mut values = arguments.to_vec();
    let mut params: Vec<*mut c_void> = values.iter_mut().map(|v| (v as *mut u64).cast()).collect();
    let function = library.kernel(&name).unwrap();
    // SAFETY: numba's flattened arguments, each 8 bytes, for buffers of
    // the sizes the kernel indexes (N items, or the counts).
    unsafe {
        function.launch(
            context,
            std::ptr::null_mut(),
            LaunchConfig::for_elements(N as u32, 128),
            &mut params,
        )
    }
    .unwrap_or_else(|e| panic!("{kernel}: {e}"));
    cuda_module::synchronize(context).unwrap();
}

fn inputs() -> Vec<f64> {
    (0..N).map(|i| (i as f64 - 5000.0) / 1234.5).collect()
}

fn close(got: f64, want: f64, tolerance: f64) -> bool {
    (got - want).abs() <= tolerance * want.abs().max(1.0)
}

#[test]
#[ignore = "needs a GPU"]
fn numba_kernels_compute_what_numba_means() {
    let (context, _current) = gpu();
    let x = inputs();
    let b: Vec<i64> = (0..N as i64).map(|i| i * 37 - 150_000).collect();
    let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    for kernel in [
        "math_libdevice",
        "float64_int64",
        "local_array",
        "device_functions",
    ] {
        for library in libraries(kernel) {
            let dx = DeviceBuffer::from_slice(&context, &x).unwrap();
            let dx32 = DeviceBuffer::from_slice(&context, &x32).unwrap();
            let db = DeviceBuffer::from_slice(&context, &b).unwrap();
            let out = DeviceBuffer::from_slice(&context, &vec![0f64; N]).unwrap();
            let out32 = DeviceBuffer::from_slice(&context, &vec![0f32; N]).unwrap();
            let mut arguments = Vec::new();
            match kernel {
                "float64_int64" => {
                    arguments.extend(array(&out, N, 8));
                    arguments.extend(array(&dx, N, 8));
                    arguments.extend(array(&db, N, 8));
                }
                "local_array" => {
                    arguments.extend(array(&out32, N, 4));
                    arguments.extend(array(&dx32, N, 4));
                }
                _ => {
                    arguments.extend(array(&out, N, 8));
                    arguments.extend(array(&dx, N, 8));
                }
            }
            launch(&context, &library, kernel, &arguments);
            let got: Vec<f64> = match kernel {
                "local_array" => out32
                    .to_vec::<f32>()
                    .unwrap()
                    .into_iter()
                    .map(f64::from)
                    .collect(),
                _ => out.to_vec().unwrap(),
            };
            let wrong: Vec<usize> = (0..N)
                .filter(|&i| {
                    let v = x[i];
                    let (want, tolerance) = match kernel {
                        "math_libdevice" => {
                            (v.sin() * v.exp() + v.abs().sqrt() + v.powf(3.0), 1e-12)
                        }
                        // Python's floor division and modulo.
                        "float64_int64" => (
                            v * 3.0 + b[i].div_euclid(7) as f64 - b[i].rem_euclid(5) as f64,
                            1e-12,
                        ),
                        "local_array" => {
                            let v = x32[i];
                            let acc = (0..8)
                                .fold(0f32, |acc, k| acc + v * (8 - k) as f32 / (k + 1) as f32);
                            (f64::from(acc), 1e-5)
                        }
                        _ => {
                            let c = v.clamp(0.0, 1.0);
                            ((c * c * (3.0 - 2.0 * c)).clamp(0.0, 1.0), 1e-12)
                        }
                    };
                    !close(got[i], want, tolerance)
                })
                .collect();
            assert!(
                wrong.is_empty(),
                "{kernel} from {}: {} of {N} wrong, first at {}: {} (x = {})",
                library.name(),
                wrong.len(),
                wrong[0],
                got[wrong[0]],
                x[wrong[0]]
            );
        }
    }
}

#[test]
#[ignore = "needs a GPU"]
fn numba_shared_memory_atomics_and_records() {
    let (context, _current) = gpu();
    let values: Vec<i32> = (0..N as i32).map(|i| (i * 7919) % 1000 - 300).collect();
    for library in libraries("shared_atomics") {
        let counts = DeviceBuffer::from_slice(&context, &[0i32, 0]).unwrap();
        let dv = DeviceBuffer::from_slice(&context, &values).unwrap();
        let mut arguments = Vec::new();
        arguments.extend(array(&counts, 2, 4));
        arguments.extend(array(&dv, N, 4));
        launch(&context, &library, "shared_atomics", &arguments);
        let got: Vec<i32> = counts.to_vec().unwrap();
        let max = values.iter().copied().max().unwrap().max(0);
        assert_eq!(got, [values.iter().sum::<i32>(), max], "{}", library.name());
    }
    // Records: {x: f64, mass: f32, id: i64}, aligned: 24 bytes each.
    let mut records = vec![0u8; N * 24];
    for i in 0..N {
        let record = &mut records[i * 24..(i + 1) * 24];
        record[0..8].copy_from_slice(&(i as f64 * 0.5).to_le_bytes());
        record[8..12].copy_from_slice(&(1.0f32 + i as f32 / 100.0).to_le_bytes());
        record[16..24].copy_from_slice(&(i as i64 * 3).to_le_bytes());
    }
    for library in libraries("records") {
        let particles = DeviceBuffer::from_slice(&context, &records).unwrap();
        let out = DeviceBuffer::from_slice(&context, &vec![0f64; N]).unwrap();
        let mut arguments = Vec::new();
        arguments.extend(array(&out, N, 8));
        arguments.extend(array(&particles, N, 24));
        launch(&context, &library, "records", &arguments);
        let got: Vec<f64> = out.to_vec().unwrap();
        let after: Vec<u8> = particles.to_vec().unwrap();
        for i in 0..N {
            let (x, mass, id) = (
                i as f64 * 0.5,
                f64::from(1.0f32 + i as f32 / 100.0),
                i as f64 * 3.0,
            );
            assert!(
                close(got[i], x * mass + id, 1e-12),
                "records {i}: {} from {}",
                got[i],
                library.name()
            );
            let new_x = f64::from_le_bytes(after[i * 24..i * 24 + 8].try_into().unwrap());
            assert_eq!(new_x, x + 1.0, "records {i} from {}", library.name());
        }
    }
}

/// NVVM IR as a person writes it (`tests/nvvm/written/saxpy.ll`: a kernel
/// annotation, no `@llvm.used`), linked through LTO by the machine's
/// libNVVM and nvJitLink: the link keeps the kernel, which once vanished
/// from the cubin, and it computes y = a·x + y on every element.
#[test]
#[ignore = "needs a GPU"]
fn hand_written_nvvm_ir_keeps_its_kernel_through_lto() {
    let (context, _current) = gpu();
    let text = include_str!("../../../../tests/nvvm/written/saxpy.ll");
    let input = ObjectCode::from_nvvm_ir(text.as_bytes().to_vec(), "saxpy.ll").unwrap();
    let mut linker = Linker::new(LinkerOptions::for_arch(arch())).unwrap();
    linker.add(&input).unwrap();
    let cubin = linker
        .link(OutputKind::Cubin)
        .unwrap_or_else(|e| panic!("{e}"));
    let library = Library::load(&cubin).unwrap();
    let n = N;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let y: Vec<f32> = (0..n).map(|i| 1000.0 - i as f32).collect();
    let dx = DeviceBuffer::from_slice(&context, &x).unwrap();
    let dy = DeviceBuffer::from_slice(&context, &y).unwrap();
    let mut a = 3.0f32;
    let (mut px, mut py, mut count) = (dx.pointer(), dy.pointer(), n as i32);
    let mut params: Vec<*mut c_void> = vec![
        (&mut a as *mut f32).cast(),
        (&mut px as *mut u64).cast(),
        (&mut py as *mut u64).cast(),
        (&mut count as *mut i32).cast(),
    ];
    // The kernel indexes by threadIdx.x alone: one block of up to 1024.
    let threads = n.min(1024);
    let function = library.kernel("saxpy").unwrap();
    // SAFETY: saxpy(float, float*, float*, int) with buffers of n floats;
    // each of its threads writes y[threadIdx.x] < n.
    unsafe {
        function.launch(
            &context,
            std::ptr::null_mut(),
            LaunchConfig {
                grid_dim: (1, 1, 1),
                block_dim: (threads as u32, 1, 1),
                shared_mem_bytes: 0,
            },
            &mut params,
        )
    }
    .unwrap_or_else(|e| panic!("{e}"));
    cuda_module::synchronize(&context).unwrap();
    let got: Vec<f32> = dy.to_vec().unwrap();
    let wrong = (0..threads)
        .filter(|&i| got[i] != 3.0 * x[i] + y[i])
        .count();
    assert_eq!(wrong, 0, "of {threads}");
}
