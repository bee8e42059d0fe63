#![doc = include_str!("../README.md")]
// Link errors are returned once per command; their size does not matter.
#![allow(clippy::result_large_err)]

mod cache;
mod compile;
mod fatbin;
mod inspect;
mod link;
mod make_rule;
mod output;
mod progress;
mod say;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use cuda_link::Arch;

/// Exit codes, one per kind of outcome.
const EXIT_CODES: &str = "\
Exit codes:
  0  success
  1  an input or a link failed (the message says which and why)
  2  the command line is wrong (unknown flag, bad value, -o naming an input)
  3  no backend library could be loaded (nvJitLink, or the driver)";

/// What `compile` does with nvcc's habits.
const COMPILE_NOTES: &str = "\
nvcc's spellings work: -arch (--gpu-architecture), -gencode
(--generate-code, code=lto_XX for LTO-IR), -I, -isystem, -D, -U, -include,
-std=c++17, -rdc=true, -dc, -lineinfo, -G, -use_fast_math, -ptx, -cubin,
-fatbin, -M, -MD, -MF, -MT, -MP, -Xnvrtc. NVRTC compiles device code only:
a file with host code (main, <<<...>>> launches, the runtime API, extern
\"C\" host functions) is found before NVRTC runs, whatever the flags, and
named: compile it with nvcc, or let cuda-build route it there. PTX written
is lowered to the first ISA of nvJitLink's CUDA release (13.x: 9.0, which
every 13.x driver JIT-compiles); --ptx-isa chooses another or as-linked.
NVRTC is found through CUDA_LINK_NVRTC_PATH (a file), then CUDA_HOME /
CUDA_PATH, the pip wheels nvidia-cuda-nvrtc (13.x: nvidia-cuda-nvrtc,
12.x: nvidia-cuda-nvrtc-cu12) of any Python, /usr/local/cuda, and the
system loader.
NVVM IR (.ll text, .bc bitcode, as numba-cuda writes it) compiles with
libNVVM the same ways, libdevice linked when the IR calls it; -O0 to -O3
is libNVVM's -opt (-G turns it off, as numba's debug builds do), and
-rdc=true or -dc leaves calls to functions it does not define for a
later link (to --ptx or --ltoir). libNVVM is found through CUDA_LINK_NVVM_PATH, a
toolkit's nvvm/lib64, or the wheels nvidia-nvvm (13.x) and
nvidia-cuda-nvcc-cu12 (12.x). `link` takes NVVM IR too.";

/// How NVIDIA's libraries are found.
const LIBRARIES: &str = "\
Libraries: `link` uses nvJitLink by default (--backend auto), found through
CUDA_LINK_NVJITLINK_PATH (a file), then CUDA_HOME / CUDA_PATH, the pip
wheels nvidia-nvjitlink (13.x) or nvidia-nvjitlink-cu12 (12.x) of any
Python on the system, /usr/local/cuda, and the system loader. Without
nvJitLink, auto falls back to the driver (libcuda.so.1, CUDA_LINK_LIBCUDA_PATH),
which needs a GPU and cannot link LTO-IR. `inspect` needs no library.";

#[derive(Parser)]
#[command(
    name = "cuda-link",
    version,
    about = "Link and inspect CUDA device code",
    after_help = format!("{LIBRARIES}\n\n{EXIT_CODES}")
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Link inputs of any kind (cubin, PTX, LTO-IR, fatbin, .o, .a).
    #[command(after_help = format!("{LIBRARIES}\n\n{EXIT_CODES}"))]
    Link(Box<LinkArgs>),
    /// Compile CUDA C++ with NVRTC, spelt as nvcc is, or NVVM IR with
    /// libNVVM: PTX, LTO-IR, cubins,
    /// or one fatbin.
    #[command(after_help = format!("{COMPILE_NOTES}\n\n{EXIT_CODES}"))]
    Compile(Box<compile::CompileArgs>),
    /// Pack cubins, PTX and LTO-IR into one fatbin, in pure Rust.
    #[command(after_help = EXIT_CODES)]
    Fatbin(fatbin::FatbinArgs),
    /// Print what files hold: kinds, arches, kernels, fatbin entries.
    #[command(after_help = EXIT_CODES)]
    Inspect {
        /// Files to inspect; `-` reads standard input. Every file is
        /// reported, and the exit code is 1 if any could not be read.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print one JSON array, an object per file (a file that could not
        /// be read is `{"name", "error"}`).
        #[arg(long, conflicts_with = "jsonl")]
        json: bool,
        /// Print JSON Lines: one object per file, per line.
        #[arg(long)]
        jsonl: bool,
        /// Show C++ kernels by their demangled names (`saxpy<float>`), as
        /// `cuda-module`'s `Library::kernel` also finds them.
        #[arg(long)]
        demangle: bool,
    },
    /// The persistent link cache: where it is, what it holds, emptying it.
    Cache {
        /// What to do.
        #[command(subcommand)]
        action: cache::CacheAction,
        /// The cache directory (default: CUDA_LINK_CACHE_DIR, else
        /// $XDG_CACHE_HOME/cuda-link, else ~/.cache/cuda-link).
        #[arg(long, global = true)]
        cache_dir: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum BackendArg {
    Auto,
    Nvjitlink,
    Driver,
}

#[derive(clap::Args)]
/// The flags of `link`.
pub(crate) struct LinkArgs {
    /// Target architecture: sm_90, sm_90a, sm_100f, or 90, compute_90,
    /// lto_90 (also spelt `-arch`, as nvcc does). Several, comma-separated
    /// (`sm_80,sm_90,compute_90`): one link per arch, on all cores,
    /// bundled into a fatbin (a cubin per sm_XX, PTX per compute_XX).
    /// compute_XX alone is a fatbin of its PTX, as nvcc's (`--ptx`: the
    /// PTX itself).
    #[arg(long, alias = "gpu-architecture", value_delimiter = ',', value_parser = parse_arch_text)]
    pub(crate) arch: Vec<String>,
    /// nvcc's `-gencode arch=compute_80,code=[sm_80,compute_80]`
    /// (repeatable): the slots of a multi-arch link, bundled into a fatbin.
    #[arg(
        long,
        alias = "generate-code",
        value_name = "arch=compute_XX,code=[sm_XX,compute_XX]"
    )]
    pub(crate) gencode: Vec<String>,
    /// Output file.
    #[arg(short, long)]
    pub(crate) output: PathBuf,
    /// Inputs; kinds are detected from the bytes. CUDA C++ (`.cu`) is
    /// compiled with NVRTC to LTO-IR for each arch of the link, with the
    /// compile flags below.
    #[arg(required = true)]
    pub(crate) inputs: Vec<PathBuf>,
    /// How `.cu` inputs are compiled.
    #[command(flatten)]
    pub(crate) compile: compile::CompileFlags,
    /// A device library to link, `libNAME.a` (nvcc's `-lcudadevrt`):
    /// looked for in each `-L` folder, then CUDA's own (`CUDA_HOME`'s
    /// `lib64`, the pip wheels' `lib`). Repeatable.
    #[arg(short = 'l', long = "library", value_name = "NAME")]
    pub(crate) libraries: Vec<String>,
    /// A folder searched for `-l` libraries, in order (nvcc's `-L`).
    #[arg(short = 'L', long = "library-path", value_name = "DIR")]
    pub(crate) library_paths: Vec<PathBuf>,
    /// nvcc's device-link step (`-dlink`): what `link` does. nvcc writes
    /// the linked device code into a host object; `link` writes the
    /// device code itself (a cubin, or a fatbin), which cuda-module loads.
    #[arg(long = "dlink", alias = "device-link")]
    pub(crate) dlink: bool,
    /// Link-time optimisation (on by default when an input is LTO-IR).
    #[arg(long)]
    pub(crate) lto: bool,
    /// Emit PTX instead of a cubin (needs LTO).
    #[arg(long, conflicts_with = "ltoir")]
    pub(crate) ptx: bool,
    /// Emit LTO-IR instead of a cubin (needs LTO and nvJitLink 13).
    #[arg(long)]
    pub(crate) ltoir: bool,
    /// Linker backend.
    #[arg(long, value_enum, default_value = "auto")]
    pub(crate) backend: BackendArg,
    /// The device whose primary context the driver backend links in; its
    /// compute capability is the default `--arch`.
    #[arg(long, default_value_t = 0)]
    pub(crate) device: i32,
    /// Maximum registers per thread.
    #[arg(long)]
    pub(crate) max_register_count: Option<u32>,
    /// Optimisation level (-O).
    #[arg(short = 'O', long)]
    pub(crate) optimization_level: Option<u32>,
    /// Generate debug information.
    #[arg(short = 'g', long)]
    pub(crate) debug: bool,
    /// Generate line information.
    #[arg(long)]
    pub(crate) lineinfo: bool,
    /// Print the info log, what was written and, with a cache, whether
    /// the link was a hit; quiet otherwise, as nvcc is.
    #[arg(short, long, conflicts_with = "quiet")]
    pub(crate) verbose: bool,
    /// Print nothing but errors (the default already prints nothing on
    /// success; accepted for scripts that pass it).
    #[arg(short, long)]
    pub(crate) quiet: bool,
    /// Timing in the info log (printed to stderr).
    #[arg(long)]
    pub(crate) time: bool,
    /// Flush denormals to zero.
    #[arg(long)]
    pub(crate) ftz: Option<bool>,
    /// Precise division.
    #[arg(long)]
    pub(crate) prec_div: Option<bool>,
    /// Precise square root.
    #[arg(long)]
    pub(crate) prec_sqrt: Option<bool>,
    /// Fused multiply-add.
    #[arg(long)]
    pub(crate) fma: Option<bool>,
    /// Kernels that are used; others may be removed (repeatable).
    #[arg(long)]
    pub(crate) kernels_used: Vec<String>,
    /// Variables that are used; others may be removed (repeatable).
    #[arg(long)]
    pub(crate) variables_used: Vec<String>,
    /// Remove variables not referenced in device code.
    #[arg(long)]
    pub(crate) optimize_unused_variables: bool,
    /// Option passed to ptxas (repeatable; nvcc's `-Xptxas -v`).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) xptxas: Vec<String>,
    /// Split compilation thread count.
    #[arg(long)]
    pub(crate) split_compile: Option<u32>,
    /// Extended split compilation thread count.
    #[arg(long)]
    pub(crate) split_compile_extended: Option<u32>,
    /// The highest PTX ISA of PTX output, lowered to it and checked by
    /// ptxas: by default the ISA of the first driver of nvJitLink's CUDA
    /// release (13.x: 9.0, which CUDA 13.0's 580 driver JIT-compiles;
    /// nvJitLink 13.5 writes 9.5), as cuda-build lowers it; `9.2` for
    /// another, `as-linked` to keep nvJitLink's.
    #[arg(long, value_name = "MAJOR.MINOR|as-linked")]
    pub(crate) ptx_isa: Option<PtxIsaArg>,
    /// How a multi-arch link's fatbin stores its entries: none (default),
    /// lz4 or zstd.
    #[arg(long, value_enum)]
    pub(crate) compress: Option<crate::fatbin::CompressArg>,
    /// Do not use nvJitLink's in-memory cache of repeated links (nvJitLink's
    /// `-no-cache`). The persistent cache is `--cache` / `--no-cache`.
    #[arg(long)]
    pub(crate) no_nvjitlink_cache: bool,
    #[command(flatten)]
    pub(crate) cache: cache::CacheArgs,
    /// Raw nvJitLink flag (repeatable).
    #[arg(long = "flag", allow_hyphen_values = true)]
    pub(crate) flags: Vec<String>,
    /// Link in this process instead of a child process. By default
    /// nvJitLink runs in a child, so a crash or hang on corrupt input
    /// becomes an error message; the driver backend always links in this
    /// process, as CUDA does not survive the fork.
    #[arg(long)]
    pub(crate) in_process: bool,
    /// Stop the link after this many seconds (child process only); 0 for
    /// no limit. A link stopped so is an error message, exit code 1.
    #[arg(
        long,
        value_name = "SECONDS",
        conflicts_with = "in_process",
        default_value_t = 300.0
    )]
    pub(crate) timeout: f64,
    /// Stop the link when the child's resident memory passes this many
    /// GiB (child process only); 0 for no limit. By default half of this
    /// machine's memory.
    #[arg(long, value_name = "GIB", conflicts_with = "in_process")]
    pub(crate) memory_limit: Option<f64>,
}

/// `--ptx-isa`: an ISA, or nvJitLink's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PtxIsaArg {
    /// `as-linked`: the PTX as nvJitLink writes it.
    AsLinked,
    /// `MAJOR.MINOR`.
    Isa(cuda_link::PtxIsa),
}

impl std::str::FromStr for PtxIsaArg {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "as-linked" => Ok(PtxIsaArg::AsLinked),
            _ => text
                .parse()
                .map(PtxIsaArg::Isa)
                .map_err(|e| format!("{e}; or `as-linked`")),
        }
    }
}

/// nvcc's options spelt with one dash (`-arch`, `-isystem`, `-MD`): clap
/// wants two. The value after `--flag`, `-Xnvrtc` or `-Xptxas` is a raw
/// option and passes through untouched.
pub(crate) fn normalise_args(args: impl IntoIterator<Item = String>) -> Vec<String> {
    const NVCC_WORDS: &[(&str, &str)] = &[
        ("-arch", "--arch"),
        ("-gencode", "--gencode"),
        ("-isystem", "--isystem"),
        ("-include", "--include"),
        ("-std", "--std"),
        ("-rdc", "--rdc"),
        ("-dc", "--dc"),
        ("-dlto", "--dlto"),
        ("-dlink", "--dlink"),
        ("-lineinfo", "--lineinfo"),
        ("-use_fast_math", "--use_fast_math"),
        ("-ptx", "--ptx"),
        ("-cubin", "--cubin"),
        ("-fatbin", "--fatbin"),
        ("-ltoir", "--ltoir"),
        ("-MD", "--MD"),
        ("-MMD", "--MMD"),
        ("-MF", "--MF"),
        ("-MT", "--MT"),
        ("-MP", "--MP"),
        ("-Xnvrtc", "--Xnvrtc"),
        ("-Xptxas", "--xptxas"),
        ("--Xptxas", "--xptxas"),
        ("-maxrregcount", "--maxrregcount"),
        ("-ftz", "--ftz"),
        ("-prec-div", "--prec-div"),
        ("-prec-sqrt", "--prec-sqrt"),
        ("-fmad", "--fmad"),
        ("-expt-relaxed-constexpr", "--expt-relaxed-constexpr"),
        ("-expt-extended-lambda", "--expt-extended-lambda"),
        ("-extended-lambda", "--extended-lambda"),
    ];
    let mut previous_was_raw = false;
    args.into_iter()
        .map(|arg| {
            let raw = std::mem::replace(&mut previous_was_raw, RAW_OPTIONS.contains(&arg.as_str()));
            if raw {
                return arg;
            }
            for (nvcc, ours) in NVCC_WORDS {
                if let Some(rest) = arg.strip_prefix(nvcc)
                    && (rest.is_empty() || rest.starts_with('='))
                {
                    return format!("{ours}{rest}");
                }
            }
            arg
        })
        .collect()
}

/// `compile` and `link` command lines without nvcc's host-side options
/// (`-Xcompiler -fPIC`, `--default-stream per-thread`, ...), which
/// change nothing in device code: each left out is said on stderr, with
/// why (cuda-compile's table). Raw options' values are kept.
pub(crate) fn without_nvcc_host_options(args: Vec<String>) -> Vec<String> {
    if !matches!(args.get(1).map(String::as_str), Some("compile" | "link")) {
        return args;
    }
    let mut kept = Vec::with_capacity(args.len());
    let mut at = 0;
    while at < args.len() {
        let raw_value = kept
            .last()
            .is_some_and(|previous: &String| RAW_OPTIONS.contains(&previous.as_str()));
        if !raw_value && let Some((taken, dropped)) = cuda_compile::nvcc_host_option(&args[at..]) {
            eprintln!(
                "cuda-link: `{}` is left out: {}",
                dropped.option, dropped.why
            );
            at += taken;
            continue;
        }
        kept.push(args[at].clone());
        at += 1;
    }
    kept
}

/// Options whose next word is theirs, whatever it looks like, before
/// [`normalise_args`] and after.
const RAW_OPTIONS: &[&str] = &[
    "--flag", "-Xnvrtc", "--Xnvrtc", "-Xptxas", "--Xptxas", "--xptxas",
];

/// An arch as typed (`compute_90` stays a PTX slot in a multi-arch link),
/// checked to parse.
fn parse_arch_text(text: &str) -> Result<String, String> {
    parse_arch(text).map(|_| text.to_owned())
}

/// An arch, or what was probably meant and every accepted spelling.
pub(crate) fn parse_arch(text: &str) -> Result<Arch, String> {
    if let Ok(arch) = text.parse() {
        return Ok(arch);
    }
    let lower = text.to_ascii_lowercase();
    let digits = lower.trim_start_matches(|c: char| c.is_ascii_alphabetic() || c == '_');
    let prefix = &lower[..lower.len() - digits.len()];
    let guess = ["sm", "compute", "lto"]
        .into_iter()
        .find(|p| prefix.trim_end_matches('_') == *p)
        .map(|p| format!("{p}_{digits}"))
        .filter(|guess| guess.parse::<Arch>().is_ok());
    let hint = guess
        .map(|g| format!("did you mean `{g}`? "))
        .unwrap_or_default();
    Err(format!(
        "{hint}accepted spellings: 90, sm_90, compute_90, lto_90, with an `a` or `f` \
         suffix for arch- or family-specific code (sm_90a, sm_100f)"
    ))
}

/// Why the command failed, and so its exit code.
pub(crate) enum Failure {
    /// An input or a link failed, and why: exit 1.
    Reported(String),
    /// The command line asks for something impossible: exit 2.
    Usage(String),
    /// No backend library loads: exit 3.
    NoBackend(String),
    /// Anything else: exit 1.
    Other(String),
}

fn main() -> ExitCode {
    // nvcc's spellings are read as text: a word that is not UTF-8 (a file
    // name, say) is refused by name, where `env::args` would panic.
    let mut words = Vec::new();
    for word in std::env::args_os() {
        match word.into_string() {
            Ok(word) => words.push(word),
            Err(word) => {
                say::err(format!(
                    "cuda-link: {} is not UTF-8: rename it, or pass it through a link \
                     whose name is",
                    word.to_string_lossy()
                ));
                return ExitCode::from(2);
            }
        }
    }
    let cli = Cli::parse_from(without_nvcc_host_options(normalise_args(words)));
    let verbose = match &cli.command {
        Command::Link(args) => args.verbose,
        Command::Compile(args) => args.verbose,
        _ => false,
    };
    VERBOSE.store(verbose, std::sync::atomic::Ordering::Relaxed);
    let result = match cli.command {
        Command::Link(args) => link::run(*args),
        Command::Compile(args) => compile::run(*args),
        Command::Fatbin(args) => fatbin::run(args),
        Command::Inspect {
            files,
            json,
            jsonl,
            demangle,
        } => {
            let format = match (json, jsonl) {
                (true, _) => inspect::Format::Json,
                (_, true) => inspect::Format::JsonLines,
                _ => inspect::Format::Table,
            };
            inspect::run(&files, format, demangle)
        }
        Command::Cache { action, cache_dir } => {
            cache::run(action, cache_dir).map_err(Failure::Other)
        }
    };
    let (message, code) = match result {
        Ok(()) => return ExitCode::SUCCESS,
        Err(Failure::Reported(message) | Failure::Other(message)) => (message, 1),
        Err(Failure::Usage(message)) => (message, 2),
        Err(Failure::NoBackend(message)) => (message, 3),
    };
    say::err(format!("cuda-link: {message}"));
    ExitCode::from(code)
}

/// Whether `--verbose` was given: errors then list every place a library
/// was looked for, not the first few.
static VERBOSE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// An error and every source under it, each once: `a: b: c`.
fn report(error: &dyn std::error::Error) -> String {
    match VERBOSE.load(std::sync::atomic::Ordering::Relaxed) {
        true => format!("{:#}", cuda_link::Report(error)),
        false => cuda_link::Report(error).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvcc_host_options_are_left_out_of_compile_and_link() {
        let args = [
            "cuda-link",
            "compile",
            "-Xcompiler",
            "-fPIC",
            "--default-stream",
            "per-thread",
            "--Xnvrtc",
            "--keep",
            "--threads=4",
            "k.cu",
        ];
        let kept = without_nvcc_host_options(args.map(str::to_owned).to_vec());
        assert_eq!(kept, ["cuda-link", "compile", "--Xnvrtc", "--keep", "k.cu"]);
        let inspect = ["cuda-link", "inspect", "--keep"]
            .map(str::to_owned)
            .to_vec();
        assert_eq!(without_nvcc_host_options(inspect.clone()), inspect);
    }

    #[test]
    fn raw_flags_pass_through_untouched() {
        let args = [
            "cuda-link",
            "link",
            "-arch",
            "sm_90",
            "--flag",
            "-arch=sm_80",
            "-arch=sm_90",
        ];
        let normalised = normalise_args(args.map(str::to_owned));
        assert_eq!(
            normalised,
            [
                "cuda-link",
                "link",
                "--arch",
                "sm_90",
                "--flag",
                "-arch=sm_80",
                "--arch=sm_90"
            ]
        );
    }

    /// nvcc's one-dash words get two dashes; the value of `-Xnvrtc`
    /// stays as it is, and so do `-I`, `-D` and `-U`, which clap reads.
    #[test]
    fn nvcc_spellings_are_normalised() {
        let args = [
            "-isystem",
            "/x",
            "-MD",
            "-MF",
            "k.d",
            "-std=c++17",
            "-rdc=true",
            "-Xnvrtc",
            "-std=c++20",
            "-Iinc",
            "-DA=1",
            "-use_fast_math",
            "-Xptxas",
            "-v",
        ];
        let normalised = normalise_args(args.map(str::to_owned));
        assert_eq!(
            normalised,
            [
                "--isystem",
                "/x",
                "--MD",
                "--MF",
                "k.d",
                "--std=c++17",
                "--rdc=true",
                "--Xnvrtc",
                "-std=c++20",
                "-Iinc",
                "-DA=1",
                "--use_fast_math",
                "--xptxas",
                "-v",
            ]
        );
    }

    #[test]
    fn misspelled_arches_get_a_suggestion() {
        for (typed, meant) in [
            ("sm90", "sm_90"),
            ("SM_90", "sm_90"),
            ("Compute90a", "compute_90a"),
        ] {
            let message = parse_arch(typed).unwrap_err();
            assert!(
                message.contains(&format!("did you mean `{meant}`")),
                "{typed}: {message}"
            );
        }
        assert!(!parse_arch("bogus").unwrap_err().contains("did you mean"));
        assert_eq!(parse_arch("sm_90a").unwrap().to_string(), "sm_90a");
    }
}
