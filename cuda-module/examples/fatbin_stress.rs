//! `fatbin-stress`, bundled by `cargo xtask test-gpu` with
//! `fatbin_stress.sh`: fatbins of both writers loaded, fetched and run
//! again and again, numbers checked, so that a load that works by luck
//! shows; the PTX ISAs the driver JITs; and hostile fatbins, each loaded
//! in a process of its own.
//!
//! ```text
//! fatbin-stress make DIR          write the fatbins: (sm_90 cubin, compute_80
//!                                 PTX, sm_80 cubin + compute_80 PTX) x (none,
//!                                 lz4, zstd) x (ours, nvFatbin), and saxpy.cu
//! fatbin-stress run DIR [REPEAT]  load, fetch and run saxpy from every
//!                                 .fatbin in DIR, REPEAT times; exit 1 on
//!                                 any failure
//! fatbin-stress isa               which PTX ISA versions the driver JITs
//! fatbin-stress hostile DIR COUNT SEED
//!                                 mutate the fatbins of DIR (entry headers,
//!                                 options, payloads); each mutant that
//!                                 passes validation is loaded in a child
//!                                 process, loading modes alternating
//! fatbin-stress load FILE         load one file and fetch every kernel
//! ```

use std::ffi::c_void;
use std::path::Path;
use std::process::Command;

use cuda_link::inspect::Compression;
use cuda_link::{FatbinBuilder, ObjectCode};
use cuda_link_tests::{Rng, fixtures, hostile, nvrtc, ptxas};
use cuda_module::{Context, DeviceBuffer, LaunchConfig, Library};

type Error = Box<dyn std::error::Error + Send + Sync>;

const N: usize = 1 << 16;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["make", dir] => make(Path::new(dir)),
        ["run", dir] => run(Path::new(dir), 1),
        ["run", dir, repeat] => run(Path::new(dir), repeat.parse().expect("REPEAT")),
        ["isa"] => isa(),
        ["hostile", dir, count, seed] => hostile(
            Path::new(dir),
            count.parse().expect("COUNT"),
            seed.parse().expect("SEED"),
        ),
        ["load", file] => load(Path::new(file)),
        _ => Err("usage: see the header of fatbin_stress.rs".into()),
    };
    if let Err(error) = result {
        println!("FAILED: {error}");
        std::process::exit(1);
    }
}

/// Writes every variant into `dir`, and `saxpy.cu` for the CLI's links.
fn make(dir: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("saxpy.cu"), fixtures::SAXPY_CU)?;
    let ptx = nvrtc(fixtures::SAXPY_CU, "saxpy.cu", &["-arch=compute_80"])?
        .ptx
        .ok_or("NVRTC made no PTX")?;
    let cubin = |sm: &str| -> Result<ObjectCode, Error> {
        Ok(ObjectCode::from_cubin(
            ptxas(&ptx, sm, false)?,
            format!("saxpy.{sm}.cubin"),
        )?)
    };
    let (sm80, sm90) = (cubin("sm_80")?, cubin("sm_90")?);
    // Seeds of the hostile set alone (`run` does not load them): sm_90
    // cubin entries with an options slot, empty, flagged as sm_100+
    // cubins' compatibility blob or not, so that mutants reach a cubin
    // entry's slot as the driver reads it.
    for (name, flags) in [("cubin-slot", 0u64), ("cubin-slot-flagged", 0x100_0000)] {
        let mut seed = hostile::fatbin_with_options(2, sm90.as_bytes(), (72, 0), b"\0");
        let at = 16 + 0x28;
        let old = u64::from_le_bytes(seed[at..at + 8].try_into()?);
        seed[at..at + 8].copy_from_slice(&(old | flags).to_le_bytes());
        std::fs::write(dir.join(format!("{name}.seed")), seed)?;
    }
    let ptx = ObjectCode::from_ptx(ptx, "saxpy.compute_80.ptx")?;
    let nvfatbin = nvfatbin_sys::NvFatbin::global()?;
    for (codec, codec_name) in [
        (Compression::None, "none"),
        (Compression::Lz4, "lz4"),
        (Compression::Zstd, "zstd"),
    ] {
        for (set, codes) in [
            ("cubin", vec![&sm90]),
            ("ptx", vec![&ptx]),
            ("cubin+ptx", vec![&sm80, &ptx]),
        ] {
            let mut builder = FatbinBuilder::new().compression(codec);
            for code in codes {
                builder = builder.add(code, None)?;
            }
            let ours = builder.build("ours")?;
            let theirs = builder.build_with(nvfatbin, "nvfatbin")?;
            ours.write_to(dir.join(format!("ours-{codec_name}-{set}.fatbin")))?;
            theirs.write_to(dir.join(format!("nvfatbin-{codec_name}-{set}.fatbin")))?;
        }
    }
    Ok(())
}

/// Loads every fatbin of `dir` `repeat` times: `Library::load`, the
/// kernel, its function, a launch of saxpy with every number checked.
fn run(dir: &Path, repeat: usize) -> Result<(), Error> {
    let context = Context::primary(0)?;
    let _current = context.make_current()?;
    let mut files: Vec<_> = std::fs::read_dir(dir)?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    files.retain(|path| path.extension().is_some_and(|e| e == "fatbin"));
    files.sort();
    let mut failures = Vec::new();
    for _ in 0..repeat {
        for file in &files {
            let name = file.file_name().unwrap_or_default().to_string_lossy();
            let outcome = ObjectCode::from_path(file)
                .map_err(Error::from)
                .and_then(|code| Ok(Library::load(&code)?))
                .and_then(|library| saxpy(&context, &library));
            if let Err(error) = outcome {
                failures.push(format!("{name}: {error}"));
            }
        }
    }
    println!(
        "{} loads of {} fatbins, {} failed",
        repeat * files.len(),
        files.len(),
        failures.len()
    );
    for failure in &failures {
        println!("  {failure}");
    }
    match failures.is_empty() {
        true => Ok(()),
        false => Err(format!("{} failures", failures.len()).into()),
    }
}

/// Runs saxpy from `library` on random numbers and checks every result.
fn saxpy(context: &Context, library: &Library) -> Result<(), Error> {
    let mut rng = Rng(0x2545_F491);
    let x: Vec<f32> = (0..N).map(|_| rng.below(10_000) as f32 / 100.0).collect();
    let y: Vec<f32> = (0..N).map(|_| rng.below(10_000) as f32 / 100.0).collect();
    let (dx, dy) = (
        DeviceBuffer::from_slice(context, &x)?,
        DeviceBuffer::from_slice(context, &y)?,
    );
    let (mut a, mut x_arg, mut y_arg, mut n) = (2.5f32, dx.pointer(), dy.pointer(), N as i32);
    let mut params: [*mut c_void; 4] = [
        (&raw mut a).cast(),
        (&raw mut x_arg).cast(),
        (&raw mut y_arg).cast(),
        (&raw mut n).cast(),
    ];
    let kernel = library.kernel("saxpy")?;
    kernel.function(context)?;
    // SAFETY: saxpy(float, const float*, float*, int): four values of
    // those types; both buffers hold N floats and saxpy stays below n = N.
    unsafe {
        kernel.launch(
            context,
            std::ptr::null_mut(),
            LaunchConfig::for_elements(N as u32, 256),
            &mut params,
        )
    }?;
    cuda_module::synchronize(context)?;
    let result: Vec<f32> = dy.to_vec()?;
    let wrong = (0..N)
        .filter(|&i| (result[i] - (2.5 * x[i] + y[i])).abs() > 1e-3)
        .count();
    match wrong {
        0 => Ok(()),
        _ => Err(format!("{wrong} of {N} results wrong").into()),
    }
}

/// JITs a one-kernel PTX at each ISA version, bare and in a PTX-only
/// fatbin, and prints what the driver says of each.
fn isa() -> Result<(), Error> {
    let context = Context::primary(0)?;
    let _current = context.make_current()?;
    for version in [
        "8.0", "8.5", "8.7", "8.8", "9.0", "9.1", "9.2", "9.3", "9.4", "9.5",
    ] {
        let text = format!(
            ".version {version}\n.target sm_80\n.address_size 64\n.visible .entry k() {{ ret; }}\n"
        );
        let ptx = ObjectCode::from_ptx(text.into_bytes(), format!("isa-{version}.ptx"))?;
        let fatbin = FatbinBuilder::new().add(&ptx, None)?.build("isa.fatbin")?;
        for (form, code) in [("ptx", &ptx), ("fatbin", &fatbin)] {
            let outcome = Library::load(code)
                .map_err(Error::from)
                .and_then(|library| Ok(library.kernel("k")?.function(&context).map(drop)?));
            match outcome {
                Ok(()) => println!("isa {version} {form}: JIT ok"),
                Err(error) => println!(
                    "isa {version} {form}: refused: {}",
                    error.to_string().lines().next().unwrap_or_default()
                ),
            }
        }
    }
    Ok(())
}

/// Loads `file` and fetches the function of every kernel it lists.
fn load(file: &Path) -> Result<(), Error> {
    let context = Context::primary(0)?;
    let _current = context.make_current()?;
    let code = ObjectCode::from_path(file)?;
    let library = Library::load(&code)?;
    for name in library.kernels()? {
        library.kernel(&name)?.function(&context)?;
    }
    Ok(())
}

/// Where a mutation lands: an entry's fixed header, the rest of its
/// header (identifier, options descriptor, options), or the payload of a
/// compressed or PTX entry. A plain cubin's payload is left alone: the
/// cubin fuzz (`gpu-fuzz`) covers it.
fn regions(fatbin: &[u8]) -> Vec<(&'static str, usize, usize)> {
    let u32_at = |at: usize| u32::from_le_bytes(fatbin[at..at + 4].try_into().unwrap()) as usize;
    let u64_at = |at: usize| u64::from_le_bytes(fatbin[at..at + 8].try_into().unwrap()) as usize;
    let (mut at, end) = (16, 16 + u64_at(8));
    let mut out = vec![("file header", 0, 16)];
    while at + 64 <= end {
        let (kind, header, size) = (fatbin[at], u32_at(at + 4), u64_at(at + 8));
        let compressed = u64_at(at + 0x28) & 0xa000 != 0;
        out.push(("entry header", at, at + 64));
        if header > 64 {
            out.push(("options and identifier", at + 64, at + header));
        }
        if compressed || kind == 1 {
            out.push(("payload", at + header, (at + header + size).min(end)));
        }
        at += header + size;
    }
    out
}

/// `count` mutants of the fatbins and seeds in `dir`; each that validation accepts
/// is loaded in a child process (`load`), EAGER and LAZY in turn. A child
/// killed by a signal is a failure, its input kept as `dir/crash-N.fatbin`.
fn hostile(dir: &Path, count: usize, seed: u64) -> Result<(), Error> {
    let mut seeds = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path
            .extension()
            .is_some_and(|e| e == "fatbin" || e == "seed")
        {
            seeds.push(std::fs::read(&path)?);
        }
    }
    seeds.sort();
    let me = std::env::current_exe()?;
    let (mut accepted, mut loaded, mut refused, mut deaths) = (0, 0, 0, 0);
    let mut rng = Rng(seed | 1);
    let current = dir.join("mutant.bin");
    for index in 0..count {
        let seed = &seeds[rng.below(seeds.len())];
        let regions = regions(seed);
        let mut bytes = seed.clone();
        let mut places = Vec::new();
        for _ in 0..1 + rng.below(4) {
            let (what, start, end) = regions[rng.below(regions.len())];
            if end <= start {
                continue;
            }
            let at = start + rng.below(end - start);
            bytes[at] = match rng.below(4) {
                0 => 0,
                1 => 0xff,
                2 => bytes[at] ^ (1 << rng.below(8)),
                _ => rng.next() as u8,
            };
            places.push(format!("{what} @{at:#x}"));
        }
        if ObjectCode::from_bytes(bytes.clone(), "mutant").is_err() {
            continue;
        }
        accepted += 1;
        std::fs::write(&current, &bytes)?;
        let mode = if index % 2 == 0 { "EAGER" } else { "LAZY" };
        let output = Command::new(&me)
            .env("CUDA_MODULE_LOADING", mode)
            .arg("load")
            .arg(&current)
            .output()?;
        match output.status.code() {
            Some(0) => loaded += 1,
            Some(_) => refused += 1,
            None => {
                deaths += 1;
                let kept = dir.join(format!("crash-{deaths}.fatbin"));
                std::fs::copy(&current, &kept)?;
                println!(
                    "mutant {index} ({mode}) killed the process ({}): {}; kept as {}",
                    output.status,
                    places.join(", "),
                    kept.display()
                );
            }
        }
    }
    println!(
        "hostile fatbins (seed {seed}): {count} mutants, {accepted} passed validation, \
         {loaded} loaded, {refused} refused by the driver, {deaths} process deaths"
    );
    match deaths {
        0 => Ok(()),
        _ => Err(format!("{deaths} process deaths").into()),
    }
}
