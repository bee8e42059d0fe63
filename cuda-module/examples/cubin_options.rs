//! `cubin-options`, bundled by `cargo xtask test-gpu`: what the driver
//! reads of a cubin entry's options slot, with and without the flag that
//! says the slot holds a compatibility blob (0x1000000, sm_100+ cubins).
//!
//! Each variant is one sm_90 cubin entry, loaded with raw
//! `cuLibraryLoadData` from the start of 1 MiB of memory followed by
//! 64 MiB that is mapped but unreadable: a read anywhere up to 64 MiB past
//! the fatbin is a SIGSEGV, so a crash says the driver read there (a
//! missing descriptor, read from the entry's first bytes, points 16 MiB
//! past the entry). Each load runs in a process of its own.
//!
//! ```text
//! cubin-options [RUNS]        every variant RUNS times (default 10); a table
//! cubin-options one VARIANT   load one variant, fetch saxpy's function
//! ```

use std::process::Command;

use cuda_driver_sys::Driver;
use cuda_driver_sys::sys::{CUfunction, CUkernel, CUlibrary};
use cuda_link::{FatbinBuilder, ObjectCode};
use cuda_link_tests::{fixtures, nvrtc, ptxas};
use cuda_module::Context;

type Error = Box<dyn std::error::Error + Send + Sync>;

/// The slot's compatibility-blob flag.
const COMPAT: u64 = 0x100_0000;
/// A descriptor offset inside the unreadable part, from the entry.
const FAR: u32 = 0x0200_0000;

/// An options descriptor: offset and length, from the entry's start.
type Descriptor = (u32, u32);

/// (name, flags to add, the options slot: none, or a descriptor with 8
/// bytes of NULs after it).
const VARIANTS: &[(&str, u64, Option<Descriptor>)] = &[
    ("offset 0", 0, None),
    ("offset 0, compat flag", COMPAT, None),
    ("empty descriptor {72,0}", 0, Some((72, 0))),
    (
        "empty descriptor {72,0}, compat flag",
        COMPAT,
        Some((72, 0)),
    ),
    ("descriptor to +32 MiB", 0, Some((FAR, 16))),
    (
        "descriptor to +32 MiB, compat flag",
        COMPAT,
        Some((FAR, 16)),
    ),
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        [] => table(10),
        ["one", variant] => variant.parse().map_err(Error::from).and_then(one),
        [runs] => runs.parse().map_err(Error::from).and_then(table),
        _ => Err("usage: see the header of cubin_options.rs".into()),
    };
    if let Err(error) = result {
        println!("FAILED: {error}");
        std::process::exit(1);
    }
}

/// Every variant `runs` times, each in a child; how each ended.
fn table(runs: usize) -> Result<(), Error> {
    let mode = std::env::var("CUDA_MODULE_LOADING").unwrap_or_else(|_| "default".into());
    println!("| variant ({mode}) | loaded | CUDA error | killed by a signal |");
    println!("|---|---|---|---|");
    for (index, (name, _, _)) in VARIANTS.iter().enumerate() {
        let (mut loaded, mut errors, mut signals) = (0, Vec::new(), Vec::new());
        for _ in 0..runs {
            let out = Command::new(std::env::current_exe()?)
                .args(["one", &index.to_string()])
                .output()?;
            let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            match (
                out.status.code(),
                std::os::unix::process::ExitStatusExt::signal(&out.status),
            ) {
                (Some(0), _) => loaded += 1,
                (_, Some(signal)) => signals.push(signal.to_string()),
                _ => errors.push(text),
            }
        }
        errors.dedup();
        signals.dedup();
        println!(
            "| {name} | {loaded} | {} {} | {} {} |",
            runs - loaded - signals.len(),
            errors.join("; "),
            signals.len(),
            signals.join(","),
        );
    }
    Ok(())
}

/// The fatbin of one variant: an sm_90 saxpy cubin entry, reshaped.
fn variant(index: usize) -> Result<Vec<u8>, Error> {
    let (_, flags, slot) = *VARIANTS.get(index).ok_or("no such variant")?;
    let ptx = nvrtc(fixtures::SAXPY_CU, "saxpy.cu", &["-arch=compute_90"])?
        .ptx
        .ok_or("NVRTC made no PTX")?;
    let cubin = ObjectCode::from_cubin(ptxas(&ptx, "sm_90", false)?, "saxpy.sm_90.cubin")?;
    let fatbin = FatbinBuilder::new().add(&cubin, None)?.build("saxpy")?;
    let bytes = fatbin.as_bytes();
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let (entry, header) = (16, u32_at(16 + 4) as usize);
    if header != 64 || u32_at(entry + 0x14) != 0 {
        return Err("our sm_90 cubin entry has options: the variants assume none".into());
    }
    let mut out = bytes[..entry + 64].to_vec();
    if let Some((offset, len)) = slot {
        out.extend_from_slice(&offset.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&[0; 8]);
        out[entry + 4..entry + 8].copy_from_slice(&80u32.to_le_bytes());
        out[entry + 0x14..entry + 0x18].copy_from_slice(&64u32.to_le_bytes());
    }
    out.extend_from_slice(&bytes[entry + 64..]);
    let fat_size = (out.len() - 16) as u64;
    out[8..16].copy_from_slice(&fat_size.to_le_bytes());
    let old = u64::from_le_bytes(out[entry + 0x28..entry + 0x30].try_into().unwrap());
    out[entry + 0x28..entry + 0x30].copy_from_slice(&(old | flags).to_le_bytes());
    Ok(out)
}

/// Loads variant `index` from guarded memory and fetches saxpy.
fn one(index: usize) -> Result<(), Error> {
    const READABLE: usize = 1 << 20;
    const GUARD: usize = 64 << 20;
    let fatbin = variant(index)?;
    if fatbin.len() > READABLE {
        return Err("the fatbin is over 1 MiB".into());
    }
    // SAFETY: a fresh private anonymous mapping, nothing else refers to it.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            READABLE + GUARD,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return Err("mmap failed".into());
    }
    // SAFETY: the first MiB of the mapping just made.
    if unsafe { libc::mprotect(base, READABLE, libc::PROT_READ | libc::PROT_WRITE) } != 0 {
        return Err("mprotect failed".into());
    }
    // SAFETY: the fatbin fits the readable part.
    unsafe { std::ptr::copy_nonoverlapping(fatbin.as_ptr(), base.cast::<u8>(), fatbin.len()) };
    let context = Context::primary(0)?;
    let _current = context.make_current()?;
    let driver = Driver::global()?;
    let mut library: CUlibrary = std::ptr::null_mut();
    // SAFETY: the experiment: a fatbin whose entry header may be misread;
    // a misread is what this process exists to show.
    let status = unsafe {
        driver.cuLibraryLoadData(
            &mut library,
            base,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        )
    }?;
    driver
        .check(status)
        .map_err(|e| format!("cuLibraryLoadData: {e}"))?;
    let mut kernel: CUkernel = std::ptr::null_mut();
    // SAFETY: a loaded library and a NUL-terminated name.
    let status = unsafe { driver.cuLibraryGetKernel(&mut kernel, library, c"saxpy".as_ptr()) }?;
    driver
        .check(status)
        .map_err(|e| format!("cuLibraryGetKernel: {e}"))?;
    let mut function: CUfunction = std::ptr::null_mut();
    // SAFETY: a kernel of the library, in the current context.
    let status = unsafe { driver.cuKernelGetFunction(&mut function, kernel) }?;
    driver
        .check(status)
        .map_err(|e| format!("cuKernelGetFunction: {e}"))?;
    Ok(())
}
