//! Many threads linking mixed kinds at once: every result correct, and
//! resident memory flat once warm, which shows no handle or buffer leaks.
//!
//! CI runs a small size; `CUDA_LINK_STRESS_THREADS=16 CUDA_LINK_STRESS_LINKS=200`
//! is the full one (see docs/reliability.md).

use std::sync::Arc;

use cuda_link::{Arch, Linker, LinkerOptions, ObjectCode, ObjectKind, OutputKind};
use cuda_link_tests::{FatbinInput, fixtures, nvfatbin};
use nvjitlink_sys::NvJitLink;

fn env_or(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Resident set size in bytes, from /proc/self/statm.
fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

struct Job {
    inputs: Vec<ObjectCode>,
    kernel: &'static str,
}

fn jobs() -> Option<Vec<Job>> {
    let ptx = ObjectCode::from_ptx(fixtures::saxpy_ptx()?, "saxpy.ptx").unwrap();
    let cubin = fixtures::saxpy_relocatable_cubin()?;
    let fatbin = nvfatbin(&[FatbinInput::Cubin(&cubin, "90")], &["-compress-all"]).unwrap();
    let devrt = ObjectCode::from_archive(fixtures::cudadevrt_bytes()?, "libcudadevrt.a").unwrap();
    let devrt_user = ObjectCode::from_ptx(
        fixtures::ptx(fixtures::DEVRT_USER_CU, "devrt_user.cu")?,
        "devrt_user.ptx",
    )
    .unwrap();
    Some(vec![
        Job {
            inputs: vec![ptx],
            kernel: "saxpy",
        },
        Job {
            inputs: vec![ObjectCode::from_cubin(cubin, "saxpy.cubin").unwrap()],
            kernel: "saxpy",
        },
        Job {
            inputs: vec![ObjectCode::from_ltoir(fixtures::saxpy_ltoir()?, "saxpy.ltoir").unwrap()],
            kernel: "saxpy",
        },
        Job {
            inputs: vec![ObjectCode::from_fatbin(fatbin, "saxpy.fatbin").unwrap()],
            kernel: "saxpy",
        },
        Job {
            inputs: vec![devrt_user, devrt],
            kernel: "parent",
        },
    ])
}

fn run(lib: &Arc<NvJitLink>, jobs: &[Job], threads: usize, links: usize) {
    std::thread::scope(|scope| {
        for thread in 0..threads {
            scope.spawn(move || {
                for n in 0..links {
                    let job = &jobs[(thread + n) % jobs.len()];
                    let mut linker = Linker::with_nvjitlink(
                        Arc::clone(lib),
                        LinkerOptions::for_arch(Arch::sm(90)),
                    )
                    .unwrap();
                    linker.add_many(&job.inputs).unwrap();
                    let cubin = linker
                        .link(OutputKind::Cubin)
                        .unwrap_or_else(|e| panic!("{e}"));
                    let info = cubin.inspect().unwrap();
                    assert!(
                        info.kernels().contains(&job.kernel),
                        "thread {thread} link {n}"
                    );
                }
            });
        }
    });
}

#[test]
fn threads_link_mixed_kinds_without_leaking() {
    let Some(path) = cuda_link_tests::redist("CUDA_LINK_NVJITLINK_PATH") else {
        return;
    };
    let Some(jobs) = jobs() else { return };
    // SAFETY: the pinned nvJitLink wheel that `cargo xtask test` installed.
    let lib = Arc::new(unsafe { NvJitLink::open(path) }.unwrap());
    let threads = env_or("CUDA_LINK_STRESS_THREADS", 4);
    let links = env_or("CUDA_LINK_STRESS_LINKS", 10);

    // Every kind, LTO-IR included: all results right, no handle left open.
    run(&lib, &jobs, threads, links);
    assert_eq!(cuda_link::live_handles(), 0, "a backend handle leaked");

    // Resident memory, in four equal phases on the same number of threads.
    // The first warms nvJitLink's pools and malloc's per-thread arenas;
    // after it, memory must stop growing with the number of links. LTO-IR
    // links are left out here: nvJitLink 13.5 itself keeps about 20 KiB per
    // LTO link, with or without this crate (docs/reliability.md).
    let no_lto: Vec<Job> = jobs
        .into_iter()
        .filter(|j| j.inputs.iter().all(|i| i.kind() != ObjectKind::Ltoir))
        .collect();
    let phase = links.div_ceil(4);
    let mut rss = Vec::new();
    for _ in 0..4 {
        run(&lib, &no_lto, threads, phase);
        rss.push(rss_bytes());
    }
    let mib: Vec<u64> = rss.iter().map(|r| r >> 20).collect();
    eprintln!(
        "{threads} threads x {links} links, then 4 x {phase} without LTO: RSS after each phase {mib:?} MiB"
    );
    let growth = rss[3].saturating_sub(rss[1]);
    // A leaked handle holds megabytes; hundreds of them would show.
    assert!(
        growth < 32 << 20,
        "RSS grew by {} MiB over the last two phases: {mib:?}",
        growth >> 20
    );
    assert_eq!(cuda_link::live_handles(), 0);
}
