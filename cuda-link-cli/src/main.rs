#![doc = include_str!("../README.md")]

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand, ValueEnum};
use cuda_link::{
    Arch, Backend, DeviceContext, Isolation, LinkCache, Linker, LinkerOptions, ObjectCode,
    OutputKind,
};

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
        /// Show C++ kernels by their demangled names (`saxpy<float>`), as
        /// `cuda-module`'s `Library::kernel` also finds them.
        #[arg(long)]
        demangle: bool,
    },
    /// The persistent link cache: where it is, what it holds, emptying it.
    Cache {
        /// What to do.
        #[command(subcommand)]
        action: CacheAction,
        /// The cache directory (default: CUDA_LINK_CACHE_DIR, else
        /// $XDG_CACHE_HOME/cuda-link, else ~/.cache/cuda-link).
        #[arg(long, global = true)]
        cache_dir: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum CacheAction {
    /// Entries and bytes in the directory.
    Stats,
    /// Remove every entry.
    Clear,
    /// Print the directory.
    Dir,
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
    arch: Option<Arch>,
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
    /// The device whose primary context the driver backend links in; its
    /// compute capability is the default `--arch`.
    #[arg(long, default_value_t = 0)]
    device: i32,
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
    /// Verbose messages in the info log (printed to stderr); with a cache,
    /// also whether the link was a hit or a miss.
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
    /// Link in this process instead of a child process. By default
    /// nvJitLink runs in a child, so a crash or hang on corrupt input
    /// becomes an error message; the driver backend always links in this
    /// process, as CUDA does not survive the fork.
    #[arg(long)]
    in_process: bool,
    /// Stop the link after this many seconds (child process only).
    #[arg(long, value_name = "SECONDS", conflicts_with = "in_process")]
    timeout: Option<f64>,
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
        Command::Inspect {
            files,
            json,
            demangle,
        } => inspect(&files, json, demangle),
        Command::Cache { action, cache_dir } => cache(action, cache_dir),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("cuda-link: {message}");
            ExitCode::FAILURE
        }
    }
}

/// An error and every source under it, each once: `a: b: c`.
fn report(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn inspect(files: &[PathBuf], json: bool, demangle: bool) -> Result<(), String> {
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    for file in files {
        // Host objects and libraries are read a fatbin at a time.
        let mut info = cuda_link::inspect_path(file).map_err(|e| report(&e))?;
        if demangle {
            info.demangle_kernels();
        }
        let written = if json {
            writeln!(stdout, "{}", info.to_json())
        } else {
            writeln!(stdout, "{info}")
        };
        match written {
            // A closed pipe (`| head`) is the reader's choice, not an error.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
            other => other.map_err(|e| format!("cannot write to stdout: {e}"))?,
        }
    }
    Ok(())
}

fn open_cache(dir: Option<PathBuf>) -> LinkCache {
    dir.map_or_else(LinkCache::open_default, LinkCache::new)
}

fn cache(action: CacheAction, dir: Option<PathBuf>) -> Result<(), String> {
    let cache = open_cache(dir);
    let shown = cache.dir().display();
    match action {
        CacheAction::Dir => println!("{shown}"),
        CacheAction::Stats => match cache.disk_usage() {
            Ok((entries, bytes)) => println!("{shown}: {entries} entries, {bytes} bytes"),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                println!("{shown}: 0 entries, 0 bytes (not created yet)")
            }
            Err(e) => return Err(format!("cannot read {shown}: {e}")),
        },
        CacheAction::Clear => {
            let (entries, _) = cache.disk_usage().unwrap_or_default();
            match cache.clear() {
                Ok(()) => println!("{shown}: removed {entries} entries"),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    println!("{shown}: nothing to clear")
                }
                Err(e) => return Err(format!("cannot clear {shown}: {e}")),
            }
        }
    }
    Ok(())
}

/// One line on what the cache did for this link.
fn cache_report(cache: &LinkCache) -> String {
    let stats = cache.stats();
    let dir = cache.dir().display();
    if stats.hits > 0 {
        format!("cache hit in {dir}")
    } else if stats.refused > 0 {
        format!("cache refused: {dir} or its entry is another user's or writable by others")
    } else if stats.stores > 0 {
        format!("cache miss, stored in {dir}")
    } else {
        format!("cache miss, not stored in {dir}")
    }
}

fn link(args: LinkArgs) -> Result<(), String> {
    let output = if args.ptx {
        OutputKind::Ptx
    } else if args.ltoir {
        OutputKind::Ltoir
    } else {
        OutputKind::Cubin
    };
    let mut options = LinkerOptions::default()
        .time(args.time)
        .verbose(args.verbose)
        .ptx(args.ptx)
        .debug(args.debug)
        .lineinfo(args.lineinfo)
        .kernels_used(args.kernels_used)
        .variables_used(args.variables_used)
        .optimize_unused_variables(args.optimize_unused_variables)
        .ptxas_options(args.xptxas)
        .no_cache(args.no_cache)
        .extra_flags(args.flags)
        .backend(match args.backend {
            BackendArg::Auto => Backend::Auto,
            BackendArg::Nvjitlink => Backend::NvJitLink,
            BackendArg::Driver => Backend::Driver,
        });
    let timeout = match args.timeout {
        Some(seconds) => Some(
            std::time::Duration::try_from_secs_f64(seconds)
                .map_err(|_| format!("--timeout {seconds}: not a number of seconds"))?,
        ),
        None => None,
    };
    // nvJitLink runs in a child unless asked otherwise; the driver cannot.
    options.isolation = if args.in_process || options.backend == Backend::Driver {
        Isolation::InProcess
    } else {
        Isolation::Process { timeout }
    };
    // The options that stay unset unless given.
    options.arch = args.arch;
    options.max_register_count = args.max_register_count;
    options.link_time_optimization = args.lto.then_some(true);
    options.optimization_level = args.optimization_level;
    options.ftz = args.ftz;
    options.prec_div = args.prec_div;
    options.prec_sqrt = args.prec_sqrt;
    options.fma = args.fma;
    options.split_compile = args.split_compile;
    options.split_compile_extended = args.split_compile_extended;
    let inputs = args
        .inputs
        .iter()
        .map(ObjectCode::from_path)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| report(&e))?;
    // Bad options and inputs are reported before a backend is loaded, so
    // a machine without the driver still hears what is wrong with them.
    Linker::check(&options, &inputs).map_err(|e| report(&e))?;
    let _context = match options.backend {
        Backend::Driver => Some(DeviceContext::make_current(args.device).map_err(|e| report(&e))?),
        _ => None,
    };
    let mut linker = Linker::new(options.clone()).map_err(|e| report(&e))?;
    if linker.backend() == Backend::Driver && options.isolation != Isolation::InProcess {
        // Auto found no nvJitLink and fell back to the driver.
        let in_process = options.isolation(Isolation::InProcess);
        linker = Linker::new(in_process).map_err(|e| report(&e))?;
    }
    let cache = (args.cache || args.cache_dir.is_some()).then(|| open_cache(args.cache_dir));
    if let Some(cache) = cache {
        linker = linker.with_cache(Arc::new(cache));
    }
    linker.add_many(&inputs).map_err(|e| report(&e))?;
    let linked = linker.link(output).map_err(|e| report(&e))?;
    if !linker.info_log().trim().is_empty() {
        eprintln!("{}", linker.info_log().trim_end());
    }
    std::fs::write(&args.output, linked.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", args.output.display()))?;
    if let Some(cache) = linker.cache().filter(|_| args.verbose) {
        eprintln!("cuda-link: {}", cache_report(cache));
    }
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
