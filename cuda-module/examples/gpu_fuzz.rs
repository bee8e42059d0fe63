//! GPU fuzz campaign: mutate real cubins, keep those that still pass
//! validation, and load them with `Library::load`, then look up every
//! kernel's function. `cargo xtask test-gpu` bundles it with `fuzz.sh`,
//! which runs one child process per batch so that a driver crash is
//! counted, and its input kept, instead of ending the campaign.
//!
//! ```text
//! gpu_fuzz prepare DIR                 write the seed cubins into DIR
//! gpu_fuzz run DIR SEED COUNT CURRENT  mutate and load COUNT images
//! gpu_fuzz replay FILE                 load one image, as `run` does
//! ```
//!
//! `run` writes each image to CURRENT, and what was mutated where to
//! CURRENT.txt, before loading it, and prints one line:
//! `tried valid loaded refused`.

use std::path::Path;

use cuda_link::{Linker, LinkerOptions, ObjectCode, OutputKind};
use cuda_link_tests::hostile::part_at;
use cuda_link_tests::{Rng, fixtures, nvrtc, ptxas};
use cuda_module::{Context, Library};

const ARCH: &str = "sm_90";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["prepare", dir] => prepare(Path::new(dir)),
        ["replay", file] => {
            let context = Context::primary(0).unwrap();
            let _current = context.make_current().unwrap();
            let code = ObjectCode::from_cubin(std::fs::read(file).unwrap(), file).unwrap();
            println!("loaded: {}", load_and_resolve(&code, &context));
        }
        ["run", dir, seed, count, current] => run(
            Path::new(dir),
            seed.parse().expect("SEED is a number"),
            count.parse().expect("COUNT is a number"),
            Path::new(current),
        ),
        _ => {
            eprintln!("usage: gpu_fuzz prepare DIR | run DIR SEED COUNT CURRENT");
            std::process::exit(2);
        }
    }
}

/// Seeds: ptxas executable and relocatable cubins, and nvJitLink output.
fn prepare(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for (name, source) in [
        ("saxpy", fixtures::SAXPY_CU),
        ("counter", fixtures::COUNTER_CU),
        ("heavy", fixtures::HEAVY_CU),
    ] {
        let ptx = nvrtc(source, name, &["-arch=compute_90", "-rdc=true"])
            .unwrap()
            .ptx
            .expect("NVRTC produced no PTX");
        let executable = ptxas(&ptx, ARCH, false).unwrap();
        let relocatable = ptxas(&ptx, ARCH, true).unwrap();
        let mut linker = Linker::new(LinkerOptions::for_arch(ARCH.parse().unwrap())).unwrap();
        linker
            .add(&ObjectCode::from_ptx(ptx, format!("{name}.ptx")).unwrap())
            .unwrap();
        let linked = linker.link(OutputKind::Cubin).unwrap();
        std::fs::write(dir.join(format!("{name}.exec.cubin")), executable).unwrap();
        std::fs::write(dir.join(format!("{name}.rel.cubin")), relocatable).unwrap();
        std::fs::write(dir.join(format!("{name}.linked.cubin")), linked.as_bytes()).unwrap();
    }
}

/// One to eight byte writes; most land past the ELF header, where a
/// mutant still has a chance to pass validation.
fn mutate(seed: &[u8], rng: &mut Rng) -> (Vec<u8>, Vec<usize>) {
    let mut bytes = seed.to_vec();
    let mut offsets = Vec::new();
    for _ in 0..1 + rng.below(8) {
        let at = if rng.below(10) == 0 {
            rng.below(bytes.len())
        } else {
            64 + rng.below(bytes.len() - 64)
        };
        bytes[at] = match rng.below(4) {
            0 => 0,
            1 => 0xff,
            2 => bytes[at] ^ (1 << rng.below(8)),
            _ => rng.next() as u8,
        };
        offsets.push(at);
    }
    (bytes, offsets)
}

/// Loads `code` and looks up every kernel's function; whether it loaded.
fn load_and_resolve(code: &ObjectCode, context: &Context) -> bool {
    let Ok(library) = Library::load(code) else {
        return false;
    };
    for name in library.kernels().unwrap_or_default() {
        if let Ok(kernel) = library.kernel(&name) {
            let _ = kernel.function(context);
        }
    }
    true
}

fn run(dir: &Path, seed: u64, count: usize, current: &Path) {
    let mut seeds: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(path).unwrap())
        })
        .collect();
    seeds.sort();
    assert!(!seeds.is_empty(), "no seeds in {}", dir.display());
    let context = Context::primary(0).unwrap();
    let _current = context.make_current().unwrap();
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let (mut valid, mut loaded, mut refused) = (0, 0, 0);
    let notes = current.with_extension("txt");
    for _ in 0..count {
        let (name, seed) = &seeds[rng.below(seeds.len())];
        let (image, offsets) = mutate(seed, &mut rng);
        let Ok(code) = ObjectCode::from_cubin(image.clone(), "mutant.cubin") else {
            continue;
        };
        valid += 1;
        std::fs::write(current, &image).unwrap();
        let parts: Vec<String> = offsets.iter().map(|&at| part_at(seed, at)).collect();
        std::fs::write(&notes, format!("{name} at {offsets:?} in {parts:?}\n")).unwrap();
        if load_and_resolve(&code, &context) {
            loaded += 1;
        } else {
            refused += 1;
        }
    }
    println!("{count} {valid} {loaded} {refused}");
}
