//! Project automation, in the style of rust-analyzer's `xtask`.
//!
//! The commands and their flags are defined once, in `cli.rs`; `cargo
//! xtask help` lists them, and README.md's tables are tested against it.

mod bench;
mod bench_build;
mod bench_remote;
mod bindgen;
mod cli;
mod cold;
mod corpus;
#[cfg(test)]
mod cycles;
#[cfg(test)]
mod doc_refs;
mod gpu;
mod library_corpus;
mod loaders;
#[cfg(test)]
mod map;
mod msrv;
mod peer_candle;
mod redist;
mod vendor;

use std::path::{Path, PathBuf};
use std::process::Command;

use cli::Command as Task;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() {
    if let Err(err) = try_main() {
        eprintln!("xtask: error: {err}");
        std::process::exit(1);
    }
}

fn try_main() -> Result<()> {
    let workspace = workspace_root();
    let args: Vec<String> = std::env::args().collect();
    let cli = match cli::parse(&args) {
        Ok(cli) => cli,
        // `help`, `--help`: clap prints them and exits 0; a mistake, 2.
        Err(err) => err.exit(),
    };
    let Some(command) = cli.command else {
        cli::print_help();
        return Ok(());
    };
    match command {
        Task::Bindgen { check } => bindgen::run(&workspace, check),
        Task::Provision => {
            redist::ensure(&workspace, &[]).and_then(|()| corpus::ensure(&workspace))
        }
        Task::Env => print_env(&workspace),
        Task::Test { args } => test(&workspace, &args),
        Task::Demo => demo(&workspace),
        Task::TestGpu { run } => gpu::test_gpu(&workspace, run),
        Task::Bench { args } => bench::bench(&workspace, &args),
        Task::BenchGpu { run } => gpu::bench_gpu(&workspace, run),
        Task::BenchCold => cold::bench_cold(&workspace),
        Task::BenchRemote { pairs } => bench_remote::bench_remote(&workspace, pairs.max(1)),
        Task::BenchBuild { pairs, set, no_pch } => {
            bench_build::bench_build(&workspace, pairs.max(1), &set, !no_pch)
        }
        Task::Sanitize => sanitize(&workspace),
        Task::VendorTest => vendor::vendor_test(&workspace),
        Task::FuzzLink {
            seconds,
            seed,
            count,
            save,
        } => fuzz_link(&workspace, seconds, seed, count, &save),
        Task::Msrv => msrv::check(&workspace),
        Task::PeerCandle {
            kernels_only,
            pairs,
            runners,
            numbers_only,
        } => peer_candle::peer_candle(&workspace, kernels_only, pairs, runners, numbers_only),
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

/// Points a command at the provisioned libraries, the nvcc corpus and
/// NVIDIA's library cubins.
pub(crate) fn with_redist_env<'a>(command: &'a mut Command, workspace: &Path) -> &'a mut Command {
    for (key, value) in redist::test_env(workspace) {
        command.env(key, value);
    }
    command
        .env("CUDA_LINK_CORPUS", corpus::files(workspace))
        .env("CUDA_LINK_LIBRARY_CORPUS", library_corpus::root(workspace))
}

/// Prints the test environment as shell `export` lines, so that plain
/// cargo commands (`cargo clippy --workspace`, which builds the example
/// whose build.rs compiles kernels) find the provisioned wheels. Nothing
/// else goes to stdout, so provisioning is `provision`'s.
fn print_env(workspace: &Path) -> Result<()> {
    let nvrtc = redist::root(workspace).join("nvrtc12");
    if !nvrtc.is_dir() {
        return Err(format!(
            "{} is missing: run `cargo xtask provision` first",
            nvrtc.display()
        )
        .into());
    }
    let quote = |value: &Path| format!("'{}'", value.display().to_string().replace('\'', r"'\''"));
    for (key, value) in redist::test_env(workspace) {
        println!("export {key}={}", quote(&value));
    }
    println!(
        "export CUDA_LINK_CORPUS={}",
        quote(&corpus::files(workspace))
    );
    println!(
        "export CUDA_LINK_LIBRARY_CORPUS={}",
        quote(&library_corpus::root(workspace))
    );
    Ok(())
}

fn test(workspace: &Path, extra: &[String]) -> Result<()> {
    redist::ensure(workspace, &[])?;
    corpus::ensure(workspace)?;
    library_corpus::ensure(workspace)?;
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
/// saved under `save`; the run fails only if this process dies.
fn fuzz_link(
    workspace: &Path,
    seconds: u64,
    seed: Option<u64>,
    count: Option<u64>,
    save: &str,
) -> Result<()> {
    redist::ensure(workspace, &[])?;
    let mut command = cargo();
    with_redist_env(command.current_dir(workspace), workspace)
        .args([
            "run",
            "--quiet",
            "-p",
            "cuda-link-tests",
            "--example",
            "fuzz_link",
            "--",
        ])
        .arg(seconds.to_string())
        .args(["--save", save]);
    if let Some(seed) = seed {
        command.args(["--seed", &seed.to_string()]);
    }
    if let Some(count) = count {
        command.args(["--count", &count.to_string()]);
    }
    run(&mut command)
}

fn demo(workspace: &Path) -> Result<()> {
    redist::ensure(workspace, &[])?;
    let example = ["--package", "cuda-link-examples", "--example", "demo"];
    // The build shows cargo's progress (a cold one takes minutes); the
    // run then prints the demo's output alone.
    run(with_redist_env(cargo().current_dir(workspace), workspace)
        .arg("build")
        .args(example))?;
    run(with_redist_env(cargo().current_dir(workspace), workspace)
        .args(["run", "--quiet"])
        .args(example))
}

/// Copies the folder `from` into `to`, made afresh: every file, in every
/// subfolder, with symbolic links followed, so the copy holds the files
/// themselves. Both callers need a self-contained tree: a vendored sys
/// crate (whose `LICENSE-*` are links to the workspace's, and whose `src/`
/// has subfolders) and the GPU bundle (the nvcc corpus), which is carried
/// to another machine. Nothing is skipped: neither copies a folder that
/// holds build output.
fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    match std::fs::remove_dir_all(to) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(format!("cannot clear {}: {e}", to.display()).into());
        }
        _ => {}
    }
    copy_tree(from, to, 0)
}

fn copy_tree(from: &Path, to: &Path, depth: usize) -> Result<()> {
    // Links are followed, so a link to a folder above would recurse forever.
    if depth > 32 {
        return Err(format!("{} is nested over 32 deep (a link loop?)", from.display()).into());
    }
    std::fs::create_dir_all(to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
    for entry in
        std::fs::read_dir(from).map_err(|e| format!("cannot read {}: {e}", from.display()))?
    {
        let path = entry?.path();
        let target = to.join(path.file_name().ok_or("a directory entry without a name")?);
        // `metadata`, not the entry's file type: it follows links.
        if std::fs::metadata(&path)?.is_dir() {
            copy_tree(&path, &target, depth + 1)?;
        } else {
            std::fs::copy(&path, &target)
                .map_err(|e| format!("cannot copy {}: {e}", path.display()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::copy_dir;

    #[test]
    fn copy_dir_follows_links_and_recurses() {
        let root = std::env::temp_dir().join(format!("xtask-copy-dir-{}", std::process::id()));
        let (from, to) = (root.join("from"), root.join("to"));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(from.join("sub/deeper")).unwrap();
        std::fs::write(root.join("outside.txt"), "linked").unwrap();
        std::fs::write(from.join("a.txt"), "a").unwrap();
        std::fs::write(from.join("sub/deeper/b.txt"), "b").unwrap();
        std::os::unix::fs::symlink(root.join("outside.txt"), from.join("link.txt")).unwrap();
        // A stale file of an earlier copy does not survive.
        std::fs::create_dir_all(&to).unwrap();
        std::fs::write(to.join("stale.txt"), "old").unwrap();

        copy_dir(&from, &to).unwrap();
        let read = |p: &str| std::fs::read_to_string(to.join(p)).unwrap();
        assert_eq!(read("a.txt"), "a");
        assert_eq!(read("sub/deeper/b.txt"), "b");
        assert_eq!(read("link.txt"), "linked");
        assert!(
            !std::fs::symlink_metadata(to.join("link.txt"))
                .unwrap()
                .is_symlink()
        );
        assert!(!to.join("stale.txt").exists());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
