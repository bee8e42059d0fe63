//! `fatbin-probe`, bundled by `cargo xtask test-gpu`: loads fatbins of
//! both writers, one variant per child process, and says which load and
//! run, so a driver crash names its variant. `fatbin-probe` runs every
//! variant; `fatbin-probe VARIANT` one.

use cuda_link::inspect::Compression;
use cuda_link::{FatbinBuilder, ObjectCode};
use cuda_link_tests::{fixtures, nvrtc, ptxas};
use cuda_module::{Context, Library};

fn variants() -> Vec<String> {
    // An sm_100 entry without its compatibility records, as the Rust
    // writer first wrote it: does the driver take it?
    let mut all = vec!["stripped-none-sm100".to_owned()];
    for writer in ["ours", "nvfatbin"] {
        for codec in ["none", "lz4", "zstd"] {
            for set in ["sm80", "sm90", "sm100", "three", "jit"] {
                all.push(format!("{writer}-{codec}-{set}"));
            }
        }
    }
    all
}

fn run(variant: &str) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let parts: Vec<&str> = variant.split('-').collect();
    let ptx = nvrtc(fixtures::SAXPY_CU, "saxpy.cu", &["-arch=compute_80"])?
        .ptx
        .unwrap();
    let cubin = |sm: &str| -> Result<ObjectCode, Box<dyn std::error::Error + Send + Sync>> {
        Ok(ObjectCode::from_cubin(
            ptxas(&ptx, sm, false)?,
            format!("{sm}.cubin"),
        )?)
    };
    let codec = match parts[1] {
        "lz4" => Compression::Lz4,
        "zstd" => Compression::Zstd,
        _ => Compression::None,
    };
    let mut builder = FatbinBuilder::new().compression(codec);
    match parts[2] {
        "sm80" => builder = builder.add(&cubin("sm_80")?, None)?,
        "sm90" => builder = builder.add(&cubin("sm_90")?, None)?,
        "sm100" => builder = builder.add(&cubin("sm_100")?, None)?,
        "three" => {
            for sm in ["sm_80", "sm_90", "sm_100"] {
                builder = builder.add(&cubin(sm)?, None)?;
            }
        }
        _ => {
            builder = builder.add(&cubin("sm_80")?, None)?;
            builder = builder.add(&ObjectCode::from_ptx(ptx.clone(), "saxpy.ptx")?, None)?;
        }
    }
    let fatbin = match parts[0] {
        "ours" => builder.build("ours")?,
        "stripped" => {
            let mut bytes = builder.build("ours")?.as_bytes().to_vec();
            // The one entry's header: options offset at 0x14, flags at 0x28.
            bytes[16 + 0x14..16 + 0x18].copy_from_slice(&0u32.to_le_bytes());
            let flags = u64::from_le_bytes(bytes[16 + 0x28..16 + 0x30].try_into()?);
            bytes[16 + 0x28..16 + 0x30].copy_from_slice(&(flags & !0x100_0000).to_le_bytes());
            ObjectCode::from_fatbin(bytes, "stripped")?
        }
        _ => builder.build_with(nvfatbin_sys::NvFatbin::global()?, "nvfatbin")?,
    };
    let context = Context::primary(0)?;
    let _current = context.make_current()?;
    let library = Library::load(&fatbin)?;
    library.kernel("saxpy")?.function(&context)?;
    Ok(())
}

fn main() {
    if let Some(variant) = std::env::args().nth(1) {
        match run(&variant) {
            Ok(()) => println!("{variant}: loaded"),
            Err(e) => println!("{variant}: error {e}"),
        }
        return;
    }
    let me = std::env::current_exe().unwrap();
    for variant in variants() {
        let status = std::process::Command::new(&me)
            .arg(&variant)
            .status()
            .unwrap();
        if !status.success() {
            println!("{variant}: CRASHED {status}");
        }
    }
}
