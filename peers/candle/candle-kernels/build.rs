//! candle-kernels' build with cuda-build.
//!
//! The eleven files candle loads as PTX modules are device code only:
//! NVRTC compiles each straight to PTX, the text written to
//! `OUT_DIR/ptx.rs` as upstream's builder writes it. The MoE and GGUF
//! files launch their kernels from host functions (`ffi.rs`): cuda-build
//! sends them to nvcc, into `libmoe.a`, with upstream's flags, through
//! the same cache. No cudaforge.

use std::fmt::Write as _;
use std::path::PathBuf;

/// The files candle loads as PTX, one module each (`lib.rs`'s `Id`).
const PTX_FILES: [&str; 11] = [
    "affine",
    "binary",
    "cast",
    "conv",
    "fill",
    "indexing",
    "quantized",
    "reduce",
    "sort",
    "ternary",
    "unary",
];

/// The host-launched files, as upstream lists them.
const HOST_FILES: [&str; 15] = [
    "src/moe/moe_gguf.cu",
    "src/moe/moe_wmma.cu",
    "src/moe/moe_wmma_gguf.cu",
    "src/mmvq_gguf.cu",
    "src/mmq_gguf/mmq_quantize.cu",
    "src/mmq_gguf/mmq_instance_q4_0.cu",
    "src/mmq_gguf/mmq_instance_q4_1.cu",
    "src/mmq_gguf/mmq_instance_q5_0.cu",
    "src/mmq_gguf/mmq_instance_q5_1.cu",
    "src/mmq_gguf/mmq_instance_q8_0.cu",
    "src/mmq_gguf/mmq_instance_q2_k.cu",
    "src/mmq_gguf/mmq_instance_q3_k.cu",
    "src/mmq_gguf/mmq_instance_q4_k.cu",
    "src/mmq_gguf/mmq_instance_q5_k.cu",
    "src/mmq_gguf/mmq_instance_q6_k.cu",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    let (sm, specific) = compute_cap()?;
    let ptx_arch = format!("compute_{sm}{}", if specific { "a" } else { "" });

    let started = std::time::Instant::now();
    let built = cuda_build::Build::new()
        .files(PTX_FILES.map(|stem| format!("src/{stem}.cu")))
        .include("src")
        // nvcc's `--expt-relaxed-constexpr`, as `cuda-link compile` maps it:
        // NVRTC has no such option, and makes unmarked functions device
        // functions with this one.
        .flag("-default-device")
        .flag("--std=c++17")
        .archs(Vec::<&str>::new())
        .ptx(Some(&ptx_arch))
        .per_file(true)
        .write_ptx(true)
        .compile("candle")?;
    let mut ptx_rs = String::new();
    for stem in PTX_FILES {
        let file = built
            .ptx_files
            .iter()
            .find(|path| path.file_stem().is_some_and(|s| s == stem))
            .ok_or_else(|| format!("cuda-build wrote no PTX for {stem}.cu"))?;
        let constant = stem.to_uppercase();
        writeln!(
            ptx_rs,
            "pub const {constant}: &str = include_str!({file:?});"
        )?;
    }
    std::fs::write(out_dir.join("ptx.rs"), ptx_rs)?;
    println!(
        "cargo:warning=candle-kernels: PTX of {} files for {ptx_arch} by cuda-build in {:.1} s ({})",
        PTX_FILES.len(),
        started.elapsed().as_secs_f64(),
        built.summary()
    );

    host_launchers(sm, specific)?;
    Ok(())
}

/// `CUDA_COMPUTE_CAP` as upstream's builder reads it (`90`, `90a`,
/// `sm_90`; sm_90 and later get the `a` variant unless given), else sm_80:
/// a build needs no GPU, and the PTX runs on every later one.
fn compute_cap() -> Result<(u32, bool), String> {
    println!("cargo:rerun-if-env-changed=CUDA_COMPUTE_CAP");
    let Ok(text) = std::env::var("CUDA_COMPUTE_CAP") else {
        return Ok((80, false));
    };
    let text = text.trim().to_lowercase();
    let text = text.strip_prefix("sm_").unwrap_or(&text);
    let (digits, a) = match text.strip_suffix('a') {
        Some(digits) => (digits, true),
        None => (text, false),
    };
    let sm: u32 = digits
        .parse()
        .map_err(|_| format!("CUDA_COMPUTE_CAP={text:?} is not a compute capability"))?;
    let sm = if sm < 20 { sm * 10 } else { sm };
    Ok((sm, a || sm >= 90))
}

/// `libmoe.a`: the host-launched files, compiled by nvcc through
/// cuda-build (its host-code verdict sends every one to nvcc), with
/// upstream's flags, and linked with the shared cudart as upstream links
/// it.
fn host_launchers(sm: u32, specific: bool) -> Result<(), Box<dyn std::error::Error>> {
    let mut sources: Vec<&str> = HOST_FILES.to_vec();
    if std::env::var_os("CARGO_FEATURE_CUTILE").is_some() {
        sources.push("src/moe/moe_align.cu");
    }
    let arch = format!("sm_{sm}{}", if specific { "a" } else { "" });
    let mut build = cuda_build::Build::new();
    build
        .files(&sources)
        .flag("--expt-relaxed-constexpr")
        .flag("-std=c++17")
        .flag("-O3")
        .archs([arch.as_str()])
        .ptx(None)
        .cudart(cuda_build::Cudart::Shared);
    if sm < 80 {
        build.define("NO_BF16_KERNEL", None);
    }
    let msvc = std::env::var("TARGET").is_ok_and(|t| t.contains("msvc"));
    match msvc {
        true => build.define("_USE_MATH_DEFINES", None),
        false => build.flag("-Xcompiler").flag("-fPIC"),
    };
    let started = std::time::Instant::now();
    let built = build.compile("moe")?;
    let by_nvcc = built.nvcc_compiled + built.nvcc_cached;
    if by_nvcc != sources.len() {
        return Err(format!(
            "{} of the {} host-launched files went to nvcc: {built:?}",
            by_nvcc,
            sources.len()
        )
        .into());
    }
    println!(
        "cargo:warning=candle-kernels: libmoe.a of {} files by cuda-build in {:.1} s ({})",
        sources.len(),
        started.elapsed().as_secs_f64(),
        built.summary()
    );
    Ok(())
}
