//! Link workloads: our `Linker` against nvJitLink's C API called directly.
//! The gap between the two is the wrapper's overhead.
//!
//! Run with `cargo xtask bench`, which provisions nvJitLink and NVRTC and
//! prints a table of medians. Every link passes `-no-cache`, so nvJitLink's
//! in-memory cache cannot serve repeats.

use std::ffi::{CString, c_char};
use std::hint::black_box;
use std::sync::Arc;

use std::time::Instant;

use criterion::{Criterion, criterion_group};
use cuda_link::{
    Arch, Isolation, LinkCache, Linker, LinkerOptions, ObjectCode, ObjectKind, OutputKind,
};
use cuda_link_tests::{fixtures, nvrtc, workloads};
use nvjitlink_sys::{
    NvJitLink,
    sys::{nvJitLinkInputType, nvJitLinkResult},
};

struct Workload {
    name: &'static str,
    inputs: Vec<ObjectCode>,
    lto: bool,
}

fn workloads() -> Option<Vec<Workload>> {
    let ptx = |source: &str, name: &str| {
        let compiled = nvrtc(source, name, &["-arch=compute_90", "-rdc=true"]).unwrap();
        ObjectCode::from_ptx(compiled.ptx.unwrap(), name).unwrap()
    };
    let ltoir = |source: &str, name: &str| {
        let compiled = nvrtc(source, name, &["-arch=sm_90", "-rdc=true", "-dlto"]).unwrap();
        ObjectCode::from_ltoir(compiled.ltoir.unwrap(), name).unwrap()
    };
    cuda_link_tests::redist("CUDA_LINK_NVRTC_PATH")?;
    let devrt = ObjectCode::from_archive(fixtures::cudadevrt_bytes()?, "libcudadevrt.a").unwrap();
    Some(vec![
        Workload {
            name: "small",
            inputs: vec![ptx(fixtures::SAXPY_CU, "saxpy.cu")],
            lto: false,
        },
        Workload {
            name: "big",
            inputs: vec![ptx(&workloads::many_kernels_cu(200), "big.cu")],
            lto: false,
        },
        Workload {
            name: "lto8",
            inputs: workloads::lto_modules_cu(8)
                .iter()
                .enumerate()
                .map(|(i, source)| ltoir(source, &format!("lto_{i}.cu")))
                .collect(),
            lto: true,
        },
        Workload {
            name: "archive",
            inputs: vec![ptx(fixtures::DEVRT_USER_CU, "devrt_user.cu"), devrt],
            lto: false,
        },
    ])
}

impl Workload {
    /// The nvJitLink flags the raw path passes: what the wrapper derives.
    fn raw_flags(&self) -> Vec<CString> {
        let mut flags = vec![c"-arch=sm_90".to_owned(), c"-no-cache".to_owned()];
        if self.lto {
            flags.push(c"-lto".to_owned());
        }
        flags
    }

    fn raw_inputs(&self) -> Vec<(nvJitLinkInputType, &[u8], CString)> {
        self.inputs
            .iter()
            .map(|i| {
                (
                    input_type(i.kind()),
                    i.as_bytes(),
                    CString::new(i.name()).unwrap(),
                )
            })
            .collect()
    }

    fn wrapper_link(&self, lib: &Arc<NvJitLink>, options: LinkerOptions) -> ObjectCode {
        let mut linker = Linker::with_nvjitlink(Arc::clone(lib), options).unwrap();
        linker.add_many(&self.inputs).unwrap();
        linker.link(OutputKind::Cubin).unwrap()
    }
}

/// The provisioned nvJitLink and the workloads, or `None` outside
/// `cargo xtask bench`.
fn setup() -> Option<(Arc<NvJitLink>, Vec<Workload>)> {
    let path = cuda_link_tests::redist("CUDA_LINK_NVJITLINK_PATH")?;
    let workloads = workloads()?;
    // SAFETY: the pinned nvJitLink wheel that `cargo xtask test` installed.
    let lib = unsafe { NvJitLink::open(path) }.unwrap();
    Some((Arc::new(lib), workloads))
}

/// The same link through nvJitLink's C API and nothing else.
fn raw_link(
    lib: &NvJitLink,
    flags: &[CString],
    inputs: &[(nvJitLinkInputType, &[u8], CString)],
) -> Vec<u8> {
    let mut ptrs: Vec<*const c_char> = flags.iter().map(|f| f.as_ptr()).collect();
    let mut handle = std::ptr::null_mut();
    let ok = nvJitLinkResult::NVJITLINK_SUCCESS;
    // SAFETY: the documented call sequence on valid buffers; the handle is
    // destroyed at the end.
    unsafe {
        assert_eq!(
            lib.nvJitLinkCreate(&mut handle, ptrs.len() as u32, ptrs.as_mut_ptr())
                .unwrap(),
            ok
        );
        for (kind, bytes, name) in inputs {
            assert_eq!(
                lib.nvJitLinkAddData(
                    handle,
                    *kind,
                    bytes.as_ptr().cast(),
                    bytes.len(),
                    name.as_ptr()
                )
                .unwrap(),
                ok
            );
        }
        assert_eq!(lib.nvJitLinkComplete(handle).unwrap(), ok);
        let mut size = 0;
        assert_eq!(
            lib.nvJitLinkGetLinkedCubinSize(handle, &mut size).unwrap(),
            ok
        );
        let mut cubin = vec![0u8; size];
        assert_eq!(
            lib.nvJitLinkGetLinkedCubin(handle, cubin.as_mut_ptr().cast())
                .unwrap(),
            ok
        );
        lib.nvJitLinkDestroy(&mut handle).unwrap();
        cubin
    }
}

fn input_type(kind: ObjectKind) -> nvJitLinkInputType {
    match kind {
        ObjectKind::Ptx => nvJitLinkInputType::NVJITLINK_INPUT_PTX,
        ObjectKind::Ltoir => nvJitLinkInputType::NVJITLINK_INPUT_LTOIR,
        ObjectKind::Archive => nvJitLinkInputType::NVJITLINK_INPUT_LIBRARY,
        _ => nvJitLinkInputType::NVJITLINK_INPUT_ANY,
    }
}

fn bench_links(c: &mut Criterion) {
    let Some((lib, workloads)) = setup() else {
        return;
    };
    for workload in &workloads {
        let mut group = c.benchmark_group(workload.name);
        group.sample_size(20);
        let (flags, raw_inputs) = (workload.raw_flags(), workload.raw_inputs());
        group.bench_function("raw", |b| {
            b.iter(|| black_box(raw_link(&lib, &flags, &raw_inputs)))
        });
        // In-process, as the raw calls are: the wrapper's own cost.
        let options = LinkerOptions::for_arch(Arch::sm(90))
            .no_cache(true)
            .isolation(Isolation::InProcess);
        group.bench_function("wrapper", |b| {
            b.iter(|| black_box(workload.wrapper_link(&lib, options.clone())))
        });
        group.finish();
    }
}

/// Times `first` and `second` alternately (ABBA order, so drift of the
/// machine cancels): their medians and the median of the per-pair ratios
/// `second / first`. Separate criterion runs drift by more than the
/// overheads measured here.
fn paired(rounds: usize, first: impl FnMut(), second: impl FnMut()) -> (f64, f64, f64) {
    paired_blocks(rounds, 1, first, second)
}

/// [`paired`] over blocks of `block` calls, each timed as its median:
/// a switch between the caller and a link worker evicts the other's
/// working set from the caches, which one call at a time would charge to
/// every call, and a program that isolates its links does not switch.
fn paired_blocks(
    rounds: usize,
    block: usize,
    mut first: impl FnMut(),
    mut second: impl FnMut(),
) -> (f64, f64, f64) {
    let time = |f: &mut dyn FnMut()| {
        let mut times: Vec<f64> = (0..block)
            .map(|_| {
                let start = Instant::now();
                f();
                start.elapsed().as_secs_f64()
            })
            .collect();
        median(&mut times)
    };
    let (mut firsts, mut seconds, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let (a, b) = if round % 2 == 0 {
            let a = time(&mut first);
            (a, time(&mut second))
        } else {
            let b = time(&mut second);
            (time(&mut first), b)
        };
        firsts.push(a);
        seconds.push(b);
        ratios.push(b / a);
    }
    (
        median(&mut firsts),
        median(&mut seconds),
        median(&mut ratios),
    )
}

/// The wrapper in-process against raw nvJitLink, and the default
/// (isolated, with its limits) against an in-process link, side by side.
fn paired_overhead() {
    let Some((lib, workloads)) = setup() else {
        return;
    };
    let mut report = serde_json::Map::new();
    for workload in &workloads {
        let rounds = if workload.name == "big" { 30 } else { 60 };
        let (flags, raw_inputs) = (workload.raw_flags(), workload.raw_inputs());
        let options = LinkerOptions::for_arch(Arch::sm(90))
            .no_cache(true)
            .isolation(Isolation::InProcess);
        let (raw, wrapper, ratio) = paired(
            rounds,
            || drop(black_box(raw_link(&lib, &flags, &raw_inputs))),
            || drop(black_box(workload.wrapper_link(&lib, options.clone()))),
        );
        println!(
            "paired {:<8} raw {:>9.3} ms  wrapper {:>9.3} ms  overhead {:+.2}% ({rounds} pairs)",
            workload.name,
            raw * 1e3,
            wrapper * 1e3,
            (ratio - 1.0) * 100.0
        );
        let isolated_options = options.clone().isolation(Isolation::default());
        let block = if workload.name == "big" { 1 } else { 5 };
        let (in_process, isolated, isolation_ratio) = paired_blocks(
            rounds / block.max(2) * 2,
            block,
            || drop(black_box(workload.wrapper_link(&lib, options.clone()))),
            || {
                drop(black_box(
                    workload.wrapper_link(&lib, isolated_options.clone()),
                ))
            },
        );
        println!(
            "paired {:<8} in-process {:>9.3} ms  isolated {:>9.3} ms  overhead {:+.2}% ({rounds} pairs, blocks of {block})",
            workload.name,
            in_process * 1e3,
            isolated * 1e3,
            (isolation_ratio - 1.0) * 100.0
        );
        report.insert(
            workload.name.to_owned(),
            serde_json::json!({
                "raw_s": raw, "wrapper_s": wrapper, "median_ratio": ratio,
                "in_process_s": in_process, "isolated_s": isolated,
                "isolation_median_ratio": isolation_ratio, "pairs": rounds,
            }),
        );
    }
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/criterion/paired-overhead.json");
    let _ = std::fs::create_dir_all(out.parent().unwrap());
    std::fs::write(out, serde_json::to_string_pretty(&report).unwrap()).unwrap();
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The persistent cache on **big**: a cold `-no-cache` link against a warm
/// hit, which hashes the inputs and reads one file.
fn bench_cache(c: &mut Criterion) {
    let Some((lib, workloads)) = setup() else {
        return;
    };
    let big = workloads.iter().find(|w| w.name == "big").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(LinkCache::new(dir.path()));
    let options = LinkerOptions::for_arch(Arch::sm(90)).no_cache(true);
    let link = |cache: Option<&Arc<LinkCache>>| {
        let mut linker = Linker::with_nvjitlink(Arc::clone(&lib), options.clone()).unwrap();
        if let Some(cache) = cache {
            linker = linker.with_cache(Arc::clone(cache));
        }
        linker.add_many(&big.inputs).unwrap();
        linker.link(OutputKind::Cubin).unwrap()
    };
    link(Some(&cache));
    link(Some(&cache));
    assert!(cache.stats().hits > 0, "the warm link must be a hit");
    let mut group = c.benchmark_group("big_cache");
    group.sample_size(10);
    group.bench_function("cold_no_cache", |b| b.iter(|| black_box(link(None))));
    group.bench_function("warm_hit", |b| b.iter(|| black_box(link(Some(&cache)))));
    group.finish();
}

/// Full structural validation, as every `ObjectCode` construction does it,
/// on the biggest images of the workloads: **big**'s linked cubin and the
/// real `libcudadevrt.a`. Side by side with **big**'s link, whose output
/// validation is part of.
fn bench_validation(c: &mut Criterion) {
    let Some((lib, workloads)) = setup() else {
        return;
    };
    let big = workloads.iter().find(|w| w.name == "big").unwrap();
    let options = LinkerOptions::for_arch(Arch::sm(90)).no_cache(true);
    let cubin = big.wrapper_link(&lib, options.clone()).as_bytes().to_vec();
    let archive = fixtures::cudadevrt_bytes().unwrap();
    let mut group = c.benchmark_group("validation");
    group.sample_size(20);
    group.bench_function("big_linked_cubin", |b| {
        b.iter(|| black_box(ObjectCode::from_cubin(cubin.clone(), "big.cubin").unwrap()))
    });
    group.bench_function("libcudadevrt", |b| {
        b.iter(|| black_box(ObjectCode::from_archive(archive.clone(), "devrt.a").unwrap()))
    });
    // What a link or `cuda-link inspect` needs of an input: construction,
    // inspection and the linker's facts. Validation's pass yields the
    // other two, so this stays close to construction alone.
    let everything = |bytes: &Vec<u8>, name: &str| {
        let code = ObjectCode::from_bytes(bytes.clone(), name).unwrap();
        let kernels = code.inspect().unwrap().kernels().len();
        // A linked cubin is executable: refused, after reading its facts.
        (kernels, code.check_linkable().is_ok())
    };
    group.bench_function("big_linked_cubin_inspected_and_checked", |b| {
        b.iter(|| black_box(everything(&cubin, "big.cubin")))
    });
    group.bench_function("libcudadevrt_inspected_and_checked", |b| {
        b.iter(|| black_box(everything(&archive, "devrt.a")))
    });
    group.bench_function("big_link", |b| {
        b.iter(|| black_box(big.wrapper_link(&lib, options.clone())))
    });
    group.finish();
}

criterion_group!(benches, bench_links, bench_cache, bench_validation);

/// A repeated link in one process (**small**), side by side: the
/// in-memory tier under the default linker (isolated), a warm hit of the
/// persistent cache without it, and nvJitLink's own memory cache (raw
/// calls without `-no-cache`; 13.0 has one, 13.5 shows none). Each the
/// median of 200 after one warm-up.
fn repeated_link() {
    let Some((lib, workloads)) = setup() else {
        return;
    };
    let small = workloads.iter().find(|w| w.name == "small").unwrap();
    let median_of = |mut f: Box<dyn FnMut() + '_>| {
        f();
        let mut times: Vec<f64> = (0..200)
            .map(|_| {
                let start = Instant::now();
                f();
                start.elapsed().as_secs_f64()
            })
            .collect();
        median(&mut times)
    };
    let options = LinkerOptions::for_arch(Arch::sm(90));
    let memory = median_of(Box::new(|| {
        drop(black_box(small.wrapper_link(&lib, options.clone())));
    }));
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(LinkCache::new(dir.path()).with_memory_tier(false));
    let persistent = median_of(Box::new(|| {
        let mut linker = Linker::with_nvjitlink(Arc::clone(&lib), options.clone())
            .unwrap()
            .with_cache(Arc::clone(&cache));
        linker.add_many(&small.inputs).unwrap();
        drop(black_box(linker.link(OutputKind::Cubin).unwrap()));
    }));
    let flags = vec![c"-arch=sm_90".to_owned()];
    let raw_inputs = small.raw_inputs();
    let nvjitlink = median_of(Box::new(|| {
        drop(black_box(raw_link(&lib, &flags, &raw_inputs)));
    }));
    println!(
        "repeated small link: memory tier {:.1} µs, persistent hit {:.1} µs, nvJitLink {} own \
         cache {:.1} µs (medians of 200)",
        memory * 1e6,
        persistent * 1e6,
        lib.version_string(),
        nvjitlink * 1e6
    );
}

fn main() {
    // `cargo bench --bench link -- repeated_link`: that table alone.
    if std::env::args().any(|a| a == "repeated_link") {
        repeated_link();
        return;
    }
    benches();
    if std::env::args().all(|a| a != "--list") {
        paired_overhead();
        repeated_link();
    }
    Criterion::default().configure_from_args().final_summary();
}
