//! The commands of `cargo xtask` and their flags: the one list of them.
//!
//! `cargo xtask help` prints it; README.md's tables are checked against
//! it by this crate's tests (`doc_refs.rs`).

use clap::{CommandFactory, Parser, Subcommand};

/// Project automation for the cuda-link workspace.
#[derive(Debug, PartialEq, Eq, Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, PartialEq, Eq, Subcommand)]
pub enum Command {
    /// Regenerate the sys crates' bindings (or fail if they are stale)
    Bindgen {
        /// Fail if the checked-in bindings differ from the headers' instead of writing them
        #[arg(long)]
        check: bool,
    },
    /// Install the pinned NVIDIA wheels into target/cuda-redist, build the nvcc corpus
    Provision,
    /// Print `export` lines pointing cargo at the provisioned wheels (`eval "$(cargo xtask env)"`)
    Env,
    /// Provision, then `cargo test --workspace ARGS...`
    #[command(disable_help_flag = true)]
    Test {
        /// Passed on to `cargo test --workspace`, `--` and `--help` included
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Compile, link and inspect the bundled example (no GPU needed)
    Demo,
    /// Build the GPU test bundle into target/gpu-bundle (runs it when this machine has a GPU)
    TestGpu {
        /// Run the bundle on this machine even when `nvidia-smi` sees no GPU
        #[arg(long)]
        run: bool,
    },
    /// CPU link benches: cuda-link's Linker against raw nvJitLink, and the persistent cache
    #[command(disable_help_flag = true)]
    Bench {
        /// Passed on to criterion (`cargo bench ... -- ARGS`): a filter, `--save-baseline X`, ...
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Build the GPU benches (Rust, cuda.core, cudarc) into target/gpu-bundle, run as ABBA pairs
    BenchGpu {
        /// Run the benches on this machine even when `nvidia-smi` sees no GPU
        #[arg(long)]
        run: bool,
    },
    /// Whole-process CLI figures: one-shot link with and without python3, inspect vs cuobjdump
    BenchCold,
    /// cuda-build against nvcc on a kernel set (3 SM arches + PTX, ABBA), then the warm rebuild
    BenchBuild {
        /// How many pairs of cold builds
        #[arg(long, default_value_t = 3)]
        pairs: usize,
        /// The kernels: `candle` (xtask/bench/kernels/candle) or `cub` (header-heavy: fp16, bf16, CUB)
        #[arg(long, default_value = "candle")]
        set: String,
        /// Build without NVRTC's precompiled headers (on by default in cuda-build)
        #[arg(long)]
        no_pch: bool,
    },
    /// The shared cache on a real redis-server: a second runner after a first, a miss with the store against none, a store that never answers
    BenchRemote {
        /// How many pairs of cold builds with and without the store
        #[arg(long, default_value_t = 2)]
        pairs: usize,
    },
    /// candle-core's CUDA tests built on candle's kernels from nvcc and from cuda-build (peers/candle), packed for the GPU machine
    PeerCandle {
        /// Only time the kernel part: the eleven PTX files, nvcc against cuda-build, cold
        #[arg(long)]
        kernels_only: bool,
        /// Then time candle-kernels' build script cold in this many ABBA pairs (upstream, ours); with --kernels-only, the pairs of the kernel part
        #[arg(long, default_value_t = 0)]
        pairs: usize,
        /// Then a second runner through a real redis-server store after a first, and the no-op rebuild
        #[arg(long)]
        runners: bool,
        /// Only the numbers of --pairs and --runners, in the test builds' workspaces an earlier whole run left
        #[arg(long)]
        numbers_only: bool,
    },
    /// The CPU test suites under AddressSanitizer
    Sanitize,
    /// Copy each sys crate out as a vendor would, then build and test it alone
    VendorTest,
    /// Mutants of real inputs through from_bytes, each accepted one linked in a child by every nvJitLink major
    FuzzLink {
        /// How long to run
        #[arg(default_value_t = 60)]
        seconds: u64,
        /// The random seed (default: from the clock); one seed and count give the same mutants
        #[arg(long)]
        seed: Option<u64>,
        /// Stop after this many mutants
        #[arg(long)]
        count: Option<u64>,
        /// Where crashing and hanging inputs are saved
        #[arg(long, default_value = "target/fuzz-link")]
        save: String,
    },
    /// Fail if a dependency of a published crate declares a newer rust-version than ours
    Msrv,
}

/// Parses `cargo xtask`'s arguments (`args[0]` is the program).
///
/// clap drops a `--` that comes first among a trailing list, so `test` and
/// `bench` take their arguments as given: `cargo xtask test -- --nocapture`
/// must reach cargo with its `--`.
pub fn parse(args: &[String]) -> Result<Cli, clap::Error> {
    let mut cli = Cli::try_parse_from(args)?;
    if let Some(Command::Test { args: rest } | Command::Bench { args: rest }) = &mut cli.command {
        // Cli has no options of its own, so the command is args[1].
        *rest = args.get(2..).unwrap_or_default().to_vec();
    }
    Ok(cli)
}

/// The names of every command, in the order `cargo xtask help` lists them.
#[cfg(test)]
pub fn command_names() -> Vec<String> {
    Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .filter(|name| name != "help")
        .collect()
}

/// The long flags a command takes (`--check`), or `None` for a command
/// that passes its arguments on.
#[cfg(test)]
pub fn long_flags(command: &str) -> Option<Vec<String>> {
    let cli = Cli::command();
    let sub = cli.find_subcommand(command)?;
    if sub
        .get_arguments()
        .any(|arg| arg.is_trailing_var_arg_set() || arg.is_allow_hyphen_values_set())
    {
        return None;
    }
    Some(
        sub.get_arguments()
            .filter_map(|arg| arg.get_long().map(|long| format!("--{long}")))
            .collect(),
    )
}

/// Prints the help that `cargo xtask help` prints.
pub fn print_help() {
    // Failing to write help to stderr leaves nothing to report it on.
    let _ = Cli::command().print_help();
}

#[cfg(test)]
mod tests {
    use super::{Cli, Command, parse};
    use clap::CommandFactory;
    use clap::error::ErrorKind;

    fn parse_args(list: &[&str]) -> Result<Option<Command>, clap::Error> {
        let args: Vec<String> = std::iter::once("xtask")
            .chain(list.iter().copied())
            .map(str::to_owned)
            .collect();
        parse(&args).map(|cli| cli.command)
    }

    #[test]
    fn the_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn unknown_flags_are_refused() {
        let err = parse_args(&["bindgen", "--chek"]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnknownArgument);
        let text = err.to_string();
        assert!(text.contains("'--chek'"), "{text}");
        assert!(text.contains("'--check'"), "names the flag meant: {text}");
        assert!(parse_args(&["msrv", "--fix"]).is_err());
        assert!(parse_args(&["test-gpu", "--runn"]).is_err());
        assert!(parse_args(&["fuzz-link", "--seeds", "3"]).is_err());
        assert!(parse_args(&["fuzz-link", "sixty"]).is_err());
        assert_eq!(
            parse_args(&["nonsense"]).unwrap_err().kind(),
            ErrorKind::InvalidSubcommand
        );
    }

    #[test]
    fn flags_are_typed() {
        assert_eq!(
            parse_args(&["bindgen", "--check"]).unwrap(),
            Some(Command::Bindgen { check: true })
        );
        assert_eq!(
            parse_args(&["bindgen"]).unwrap(),
            Some(Command::Bindgen { check: false })
        );
        assert_eq!(
            parse_args(&["test-gpu", "--run"]).unwrap(),
            Some(Command::TestGpu { run: true })
        );
        assert_eq!(
            parse_args(&["fuzz-link", "30", "--seed", "7", "--count", "100"]).unwrap(),
            Some(Command::FuzzLink {
                seconds: 30,
                seed: Some(7),
                count: Some(100),
                save: "target/fuzz-link".to_owned(),
            })
        );
        assert!(matches!(
            parse_args(&["fuzz-link"]).unwrap(),
            Some(Command::FuzzLink {
                seconds: 60,
                seed: None,
                count: None,
                ..
            })
        ));
        assert_eq!(parse_args(&[]).unwrap(), None);
    }

    #[test]
    fn test_and_bench_pass_their_arguments_on_as_given() {
        let passed = |list: &[&str]| match parse_args(list).unwrap() {
            Some(Command::Test { args } | Command::Bench { args }) => args,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            passed(&["test", "--features", "cuda-module/cuda-13000"]),
            ["--features", "cuda-module/cuda-13000"]
        );
        assert_eq!(
            passed(&["test", "--", "--nocapture"]),
            ["--", "--nocapture"]
        );
        assert_eq!(passed(&["test", "--help"]), ["--help"]);
        assert_eq!(
            passed(&["test", "-p", "cuda-link", "--", "--ignored"]),
            ["-p", "cuda-link", "--", "--ignored"]
        );
        assert_eq!(passed(&["bench", "paired-only"]), ["paired-only"]);
        assert_eq!(
            passed(&["bench", "--save-baseline", "main"]),
            ["--save-baseline", "main"]
        );
        assert!(passed(&["test"]).is_empty());
    }
}
