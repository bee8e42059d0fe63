//! Differential fuzzing of the validator against nvJitLink itself: mutants
//! of real device code (cubin, LTO-IR, PTX, fatbin, host object) go through
//! `ObjectCode::from_bytes`, and each accepted one is linked by every
//! provisioned nvJitLink major through the default linker (the kept
//! worker with its memory limit), with a 10 s deadline instead of 300 s.
//!
//! Run by `cargo xtask fuzz-link SECONDS [--seed N] [--count N]`, which
//! provisions the libraries; one seed and count give the same mutants.
//! Prints accepted, refused, linked, failed, crashed and hung counts per
//! major, and saves crashing and hanging inputs under `--save DIR`. This
//! process surviving is the point: it exits 0 whatever nvJitLink does.
#![allow(clippy::result_large_err)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cuda_link::{
    Arch, Isolation, LinkError, Linker, LinkerOptions, NvJitLink, ObjectCode, OutputKind,
};
use cuda_link_tests::{FatbinInput, Rng, fixtures, host_object, nvfatbin, nvjitlink_libraries};

/// What became of the mutants, per nvJitLink major.
#[derive(Default)]
struct Counts {
    linked: u64,
    failed: u64,
    crashed: u64,
    hung: u64,
}

/// Sets 1 to 4 bytes to random values; half the time in the first 4 KiB,
/// where the headers and tables of small images are.
fn mutate(seed: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for _ in 0..=rng.below(4) {
        let span = if rng.below(2) == 0 {
            bytes.len().min(4096)
        } else {
            bytes.len()
        };
        let at = rng.below(span);
        bytes[at] = rng.next() as u8;
    }
    bytes
}

fn seeds() -> Vec<(&'static str, Vec<u8>)> {
    let ptx = fixtures::saxpy_ptx().expect("NVRTC is needed: run through cargo xtask fuzz-link");
    let cubin = fixtures::saxpy_relocatable_cubin().expect("ptxas is needed");
    let ltoir = fixtures::saxpy_ltoir().expect("NVRTC is needed");
    let fatbin = nvfatbin(
        &[
            FatbinInput::Ptx(&ptx, "90"),
            FatbinInput::Cubin(&cubin, "90"),
        ],
        &["-compress=false"],
    )
    .expect("nvFatbin is needed");
    let object = host_object(&fatbin, "__nv_relfatbin");
    vec![
        ("cubin", cubin),
        ("ltoir", ltoir),
        ("ptx", ptx),
        ("fatbin", fatbin),
        ("object", object),
    ]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut seconds = 60u64;
    let mut save = PathBuf::from("target/fuzz-link");
    let mut limit = u64::MAX;
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
        ^ u64::from(std::process::id());
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--save" => save = args.next().expect("--save DIR").into(),
            "--seed" => seed = args.next().and_then(|s| s.parse().ok()).expect("--seed N"),
            // A fixed number of mutants: with one seed, two runs see the same ones.
            "--count" => limit = args.next().and_then(|s| s.parse().ok()).expect("--count N"),
            other => {
                seconds = other
                    .parse()
                    .expect("SECONDS, --save DIR, --seed N or --count N")
            }
        }
    }
    let libraries: Vec<(u32, Arc<NvJitLink>)> = nvjitlink_libraries()
        .into_iter()
        .map(|(major, path)| {
            // SAFETY: the pinned nvJitLink wheels that `cargo xtask` installed.
            let lib = unsafe { NvJitLink::open(path) }.expect("nvJitLink loads");
            (major, Arc::new(lib))
        })
        .collect();
    assert!(
        !libraries.is_empty(),
        "no nvJitLink: run through cargo xtask fuzz-link"
    );
    let seeds = seeds();
    std::fs::create_dir_all(&save).expect("create the save folder");
    let options = LinkerOptions::for_arch(Arch::sm(90)).isolation(Isolation::Process {
        timeout: Some(Duration::from_secs(10)),
        memory_limit: Some(Isolation::default_memory_limit()),
    });

    println!(
        "fuzz-link: {seconds} s, seed {seed}, saving to {}",
        save.display()
    );
    let mut rng = Rng(seed | 1);
    let (mut mutants, mut refused) = (0u64, 0u64);
    let mut counts: BTreeMap<u32, Counts> = BTreeMap::new();
    let deadline = Instant::now() + Duration::from_secs(seconds);
    while Instant::now() < deadline && mutants < limit {
        let (kind, seed_bytes) = &seeds[mutants as usize % seeds.len()];
        mutants += 1;
        let bytes = mutate(seed_bytes, &mut rng);
        let Ok(code) = ObjectCode::from_bytes(bytes.clone(), *kind) else {
            refused += 1;
            continue;
        };
        for (major, lib) in &libraries {
            let count = counts.entry(*major).or_default();
            let mut linker =
                Linker::with_nvjitlink(Arc::clone(lib), options.clone()).expect("a linker");
            let outcome = linker.add(&code).and_then(|l| l.link(OutputKind::Cubin));
            let saved = match outcome {
                Ok(_) => {
                    count.linked += 1;
                    None
                }
                Err(LinkError::Crashed { .. }) => {
                    count.crashed += 1;
                    Some("crash")
                }
                Err(LinkError::TimedOut { .. }) => {
                    count.hung += 1;
                    Some("hang")
                }
                Err(_) => {
                    count.failed += 1;
                    None
                }
            };
            if let Some(what) = saved {
                // Named by content: drawing a name from `rng` would shift
                // the mutants that follow, and one seed must give one run.
                let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
                    (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
                });
                let name = format!("{what}-nvjitlink{major}-{kind}-{hash:016x}");
                std::fs::write(save.join(name), &bytes).expect("save a crasher");
            }
        }
    }
    let accepted = mutants - refused;
    println!("mutants {mutants}, refused {refused}, accepted {accepted}");
    println!(
        "{:>10} {:>8} {:>8} {:>8} {:>8}",
        "nvJitLink", "linked", "failed", "crashed", "hung"
    );
    for (major, c) in &counts {
        println!(
            "{major:>10} {:>8} {:>8} {:>8} {:>8}",
            c.linked, c.failed, c.crashed, c.hung
        );
    }
}
