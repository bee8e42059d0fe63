//! `cuda-link`: link device code of any kind, or inspect it.
//!
//! ```text
//! cuda-link link -arch sm_90 [--lto] [options] -o out.cubin INPUTS...
//! cuda-link inspect FILE... [--json]
//! ```

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand, ValueEnum};
use cuda_link::{Backend, LinkCache, Linker, LinkerOptions, ObjectCode, OutputKind};

#[derive(Parser)]
#[command(
    name = "cuda-link",
    version,
    about = "Link and inspect CUDA device code"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Link inputs of any kind (cubin, PTX, LTO-IR, fatbin, .o, .a).
    Link(Box<LinkArgs>),
    /// Print what files hold: kinds, arches, kernels, fatbin entries.
    Inspect {
        /// Files to inspect.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print JSON instead of tables.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum BackendArg {
    Auto,
    Nvjitlink,
    Driver,
}

#[derive(clap::Args)]
struct LinkArgs {
    /// Target architecture, e.g. sm_90, sm_90a, sm_100f (also `-arch`).
    #[arg(long)]
    arch: Option<String>,
    /// Output file.
    #[arg(short, long)]
    output: PathBuf,
    /// Inputs; kinds are detected from the bytes.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Link-time optimisation (on by default when an input is LTO-IR).
    #[arg(long)]
    lto: bool,
    /// Emit PTX instead of a cubin (needs LTO).
    #[arg(long, conflicts_with = "ltoir")]
    ptx: bool,
    /// Emit LTO-IR instead of a cubin (needs LTO and nvJitLink 13).
    #[arg(long)]
    ltoir: bool,
    /// Linker backend.
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendArg,
    /// Maximum registers per thread.
    #[arg(long)]
    max_register_count: Option<u32>,
    /// Optimisation level (-O).
    #[arg(short = 'O', long)]
    optimization_level: Option<u32>,
    /// Generate debug information.
    #[arg(short = 'g', long)]
    debug: bool,
    /// Generate line information.
    #[arg(long)]
    lineinfo: bool,
    /// Verbose messages in the info log (printed to stderr).
    #[arg(long)]
    verbose: bool,
    /// Timing in the info log (printed to stderr).
    #[arg(long)]
    time: bool,
    /// Flush denormals to zero.
    #[arg(long)]
    ftz: Option<bool>,
    /// Precise division.
    #[arg(long)]
    prec_div: Option<bool>,
    /// Precise square root.
    #[arg(long)]
    prec_sqrt: Option<bool>,
    /// Fused multiply-add.
    #[arg(long)]
    fma: Option<bool>,
    /// Kernels that are used; others may be removed (repeatable).
    #[arg(long)]
    kernels_used: Vec<String>,
    /// Variables that are used; others may be removed (repeatable).
    #[arg(long)]
    variables_used: Vec<String>,
    /// Remove variables not referenced in device code.
    #[arg(long)]
    optimize_unused_variables: bool,
    /// Option passed to ptxas (repeatable).
    #[arg(long)]
    xptxas: Vec<String>,
    /// Split compilation thread count.
    #[arg(long)]
    split_compile: Option<u32>,
    /// Extended split compilation thread count.
    #[arg(long)]
    split_compile_extended: Option<u32>,
    /// Do not use nvJitLink's in-memory cache.
    #[arg(long)]
    no_cache: bool,
    /// Serve repeated links from the persistent cache (default directory:
    /// CUDA_LINK_CACHE_DIR, else ~/.cache/cuda-link).
    #[arg(long)]
    cache: bool,
    /// Use the persistent cache in this directory.
    #[arg(long)]
    cache_dir: Option<PathBuf>,
    /// Raw nvJitLink flag (repeatable).
    #[arg(long = "flag", allow_hyphen_values = true)]
    flags: Vec<String>,
}

/// nvcc spells it `-arch`; clap wants `--arch`.
fn normalise_args() -> Vec<String> {
    std::env::args()
        .map(|arg| match arg.strip_prefix("-arch") {
            Some(rest) if rest.is_empty() || rest.starts_with('=') => format!("--arch{rest}"),
            _ => arg,
        })
        .collect()
}

fn main() -> ExitCode {
    let cli = Cli::parse_from(normalise_args());
    let result = match cli.command {
        Command::Link(args) => link(*args),
        Command::Inspect { files, json } => inspect(&files, json),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("cuda-link: {message}");
            ExitCode::FAILURE
        }
    }
}

fn inspect(files: &[PathBuf], json: bool) -> Result<(), String> {
    for file in files {
        let info = ObjectCode::from_path(file)
            .and_then(|code| code.inspect())
            .map_err(|e| e.to_string())?;
        if json {
            println!("{}", info.to_json());
        } else {
            println!("{info}");
        }
    }
    Ok(())
}

fn link(args: LinkArgs) -> Result<(), String> {
    let output = if args.ptx {
        OutputKind::Ptx
    } else if args.ltoir {
        OutputKind::Ltoir
    } else {
        OutputKind::Cubin
    };
    let options = LinkerOptions {
        arch: args.arch,
        max_register_count: args.max_register_count,
        time: args.time,
        verbose: args.verbose,
        link_time_optimization: args.lto.then_some(true),
        ptx: args.ptx,
        optimization_level: args.optimization_level,
        debug: args.debug,
        lineinfo: args.lineinfo,
        ftz: args.ftz,
        prec_div: args.prec_div,
        prec_sqrt: args.prec_sqrt,
        fma: args.fma,
        kernels_used: args.kernels_used,
        variables_used: args.variables_used,
        optimize_unused_variables: args.optimize_unused_variables,
        ptxas_options: args.xptxas,
        split_compile: args.split_compile,
        split_compile_extended: args.split_compile_extended,
        no_cache: args.no_cache,
        extra_flags: args.flags,
        backend: match args.backend {
            BackendArg::Auto => Backend::Auto,
            BackendArg::Nvjitlink => Backend::NvJitLink,
            BackendArg::Driver => Backend::Driver,
        },
    };
    let mut linker = Linker::new(options).map_err(|e| e.to_string())?;
    let cache = match (args.cache_dir, args.cache) {
        (Some(dir), _) => Some(LinkCache::new(dir)),
        (None, true) => Some(LinkCache::open_default()),
        (None, false) => None,
    };
    if let Some(cache) = cache {
        linker = linker.with_cache(Arc::new(cache));
    }
    for path in &args.inputs {
        let input = ObjectCode::from_path(path).map_err(|e| e.to_string())?;
        linker.add(&input).map_err(|e| e.to_string())?;
    }
    let linked = linker.link(output).map_err(|e| e.to_string())?;
    if !linker.info_log().trim().is_empty() {
        eprintln!("{}", linker.info_log().trim_end());
    }
    std::fs::write(&args.output, linked.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", args.output.display()))?;
    let cached = match linker.cache().map(|c| c.stats()) {
        Some(stats) if stats.hits > 0 => ", from the cache",
        _ => "",
    };
    eprintln!(
        "cuda-link: wrote {} ({} bytes, {}{cached})",
        args.output.display(),
        linked.as_bytes().len(),
        linker.backend_name()
    );
    Ok(())
}
