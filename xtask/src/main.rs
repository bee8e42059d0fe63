//! Project automation, in the style of rust-analyzer's `xtask`.
//!
//! ```text
//! cargo xtask bindgen [--check]   regenerate (or verify) the sys bindings
//! cargo xtask provision           install the NVIDIA wheels the tests use
//! cargo xtask test [ARGS...]      provision, then cargo test --workspace
//! cargo xtask demo                link the bundled example, no GPU needed
//! cargo xtask test-gpu [--run]    build the GPU test bundle (and run it here)
//! cargo xtask bench               CPU link benches, wrapper vs raw nvJitLink
//! cargo xtask bench-gpu [--run]   GPU load/lookup benches against cuda.core
//! cargo xtask bench-cold          whole-process CLI figures: link, inspect
//! cargo xtask sanitize            the CPU tests under AddressSanitizer
//! cargo xtask vendor-test         each sys crate copied out and tested alone
//! cargo xtask fuzz-link [SECONDS] mutants of real inputs, linked in a child
//! cargo xtask msrv                no dependency needs a newer Rust than ours
//! ```

mod bench;
mod bindgen;
mod cold;
mod corpus;
mod gpu;
mod msrv;
mod redist;
mod vendor;

use std::path::{Path, PathBuf};
use std::process::Command;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() {
    if let Err(err) = try_main() {
        eprintln!("xtask: error: {err}");
        std::process::exit(1);
    }
}

fn try_main() -> Result<()> {
    let workspace = workspace_root();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (command, rest) = args
        .split_first()
        .map_or(("help", &[][..]), |(c, r)| (c.as_str(), r));
    check_flags(command, rest)?;
    match command {
        "bindgen" => bindgen::run(&workspace, rest.iter().any(|a| a == "--check")),
        "provision" => redist::ensure(&workspace, &[]).and_then(|()| corpus::ensure(&workspace)),
        "test" => test(&workspace, rest),
        "demo" => demo(&workspace),
        "test-gpu" => gpu::test_gpu(&workspace, rest),
        "bench" => bench::bench(&workspace, rest),
        "bench-gpu" => gpu::bench_gpu(&workspace, rest),
        "bench-cold" => cold::bench_cold(&workspace),
        "sanitize" => sanitize(&workspace),
        "vendor-test" => vendor::vendor_test(&workspace),
        "fuzz-link" => fuzz_link(&workspace, rest),
        "msrv" => msrv::check(&workspace),
        "help" | "--help" | "-h" => {
            eprintln!("{}", include_str!("usage.txt"));
            Ok(())
        }
        unknown => {
            eprintln!("{}", include_str!("usage.txt"));
            Err(format!("unknown command `{unknown}`").into())
        }
    }
}

/// Refuses a flag the command does not take: `bindgen --chek` must not
/// regenerate the bindings. `test`, `bench` and `fuzz-link` pass their
/// arguments on (to cargo test, criterion, the fuzzer), which check them.
fn check_flags(command: &str, args: &[String]) -> Result<()> {
    let allowed: &[&str] = match command {
        "test" | "bench" | "fuzz-link" | "help" | "--help" | "-h" => return Ok(()),
        "bindgen" => &["--check"],
        "test-gpu" | "bench-gpu" => &["--run"],
        _ => &[],
    };
    match args.iter().find(|arg| !allowed.contains(&arg.as_str())) {
        None => Ok(()),
        Some(bad) if allowed.is_empty() => {
            Err(format!("`{command}` takes no arguments, not `{bad}`").into())
        }
        Some(bad) => Err(format!(
            "`{command}` does not take `{bad}`; it takes {}",
            allowed.join(", ")
        )
        .into()),
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}

fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
}

/// Runs a command, failing on a non-zero exit.
fn run(command: &mut Command) -> Result<()> {
    let status = command
        .status()
        .map_err(|e| format!("cannot start {command:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{command:?} exited with {status}").into())
    }
}

/// Points a command at the provisioned libraries.
fn with_redist_env<'a>(command: &'a mut Command, workspace: &Path) -> &'a mut Command {
    for (key, value) in redist::test_env(workspace) {
        command.env(key, value);
    }
    command
}

fn test(workspace: &Path, extra: &[String]) -> Result<()> {
    redist::ensure(workspace, &[])?;
    corpus::ensure(workspace)?;
    run(with_redist_env(cargo().current_dir(workspace), workspace)
        .args(["test", "--workspace"])
        .args(extra))
}

/// The CPU test suites under AddressSanitizer (doctests excluded: rustdoc
/// does not link the sanitizer runtime). Stable rustc accepts the flag
/// with `RUSTC_BOOTSTRAP=1`; NVIDIA's own allocations show up as leaks in
/// unsymbolised modules and are reported, not failed on.
fn sanitize(workspace: &Path) -> Result<()> {
    redist::ensure(workspace, &[])?;
    let nvrtc_dir = redist::root(workspace).join("nvrtc12/nvidia/cuda_nvrtc/lib");
    run(with_redist_env(cargo().current_dir(workspace), workspace)
        .env("RUSTC_BOOTSTRAP", "1")
        .env("RUSTFLAGS", "-Zsanitizer=address")
        .env("CARGO_TARGET_DIR", workspace.join("target/asan"))
        // Under ASan, NVRTC finds its builtins library only on the path.
        .env("LD_LIBRARY_PATH", nvrtc_dir)
        .env("LSAN_OPTIONS", "exitcode=0")
        .args([
            "test",
            "-p",
            "cuda-link",
            "-p",
            "cuda-link-tests",
            "-p",
            "cuda-dylib",
            "-p",
            "nvjitlink-sys",
        ])
        .args(["--lib", "--tests", "--target", "x86_64-unknown-linux-gnu"]))
}

/// Differential fuzzing of the validator against nvJitLink: mutants of
/// real inputs, each accepted one linked in a child process. Crashers are
/// saved under `target/fuzz-link`; the run fails only if this process dies.
fn fuzz_link(workspace: &Path, extra: &[String]) -> Result<()> {
    redist::ensure(workspace, &[])?;
    let seconds = ["60".to_owned()];
    let args = if extra.is_empty() {
        &seconds[..]
    } else {
        extra
    };
    run(with_redist_env(cargo().current_dir(workspace), workspace)
        .args([
            "run",
            "--quiet",
            "-p",
            "cuda-link-tests",
            "--example",
            "fuzz_link",
            "--",
        ])
        .args(args)
        .args(["--save", "target/fuzz-link"]))
}

fn demo(workspace: &Path) -> Result<()> {
    redist::ensure(workspace, &[])?;
    run(
        with_redist_env(cargo().current_dir(workspace), workspace).args([
            "run",
            "--quiet",
            "--package",
            "cuda-link-examples",
            "--example",
            "demo",
        ]),
    )
}

#[cfg(test)]
mod tests {
    use super::check_flags;

    #[test]
    fn unknown_flags_are_refused() {
        let args = |list: &[&str]| list.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
        let err = check_flags("bindgen", &args(&["--chek"]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`bindgen` does not take `--chek`; it takes --check"),
            "{err}"
        );
        assert!(check_flags("bindgen", &args(&["--check"])).is_ok());
        assert!(check_flags("msrv", &args(&["--fix"])).is_err());
        assert!(check_flags("test-gpu", &args(&["--run"])).is_ok());
        assert!(check_flags("test", &args(&["--features", "x"])).is_ok());
    }
}
