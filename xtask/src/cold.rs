//! `cargo xtask bench-cold`: whole-process figures for the `cuda-link`
//! command, as a user meets them, each measured as the median of
//! alternating pairs in one run, and each ratio as the median of the
//! ratios within pairs (the scaling bench's estimator: the two runs of a
//! pair are adjacent, so the machine's speed changing between pairs
//! cancels out):
//!
//! * a one-shot `cuda-link link` of a small PTX file, with a `python3` on
//!   `PATH` and without one; nvJitLink is found by the system loader, so the
//!   search passes the Python step;
//! * `cuda-link inspect` against `cuobjdump -res-usage` on the real
//!   `libcudadevrt.a`, and on `libcurand.so.10` (167 MB, from its pinned
//!   wheel), with both tools' peak RSS.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::{Result, cargo, redist, run};

const PAIRS: usize = 21;

pub fn bench_cold(workspace: &Path) -> Result<()> {
    redist::ensure(workspace, &[])?;
    run(cargo().current_dir(workspace).args([
        "build",
        "--release",
        "--quiet",
        "-p",
        "cuda-link-cli",
    ]))?;
    let cli = workspace.join("target/release/cuda-link");
    let ptx = workspace.join("fuzz/seeds/object_code/saxpy.ptx");
    let out = workspace.join("target/bench-cold");
    std::fs::create_dir_all(&out)?;
    let nvjitlink = redist::test_env(workspace)
        .into_iter()
        .find(|(key, _)| *key == "CUDA_LINK_NVJITLINK13_PATH")
        .map(|(_, path)| path)
        .ok_or("no nvJitLink 13 provisioned")?;
    let loader_dir = nvjitlink.parent().ok_or("nvJitLink has no folder")?;

    let path = std::env::var_os("PATH").unwrap_or_default();
    let with_python: Vec<PathBuf> = std::env::split_paths(&path).collect();
    if !with_python.iter().any(|dir| dir.join("python3").is_file()) {
        return Err("no python3 on PATH to measure against".into());
    }
    let without_python: Vec<PathBuf> = with_python
        .iter()
        .filter(|dir| !dir.join("python3").is_file())
        .cloned()
        .collect();
    let link = |dirs: &[PathBuf]| {
        let mut command = Command::new(&cli);
        command
            .args(["link", "-arch", "sm_90", "-o"])
            .arg(out.join("saxpy.cubin"))
            .arg(&ptx)
            .env_clear()
            .env("PATH", std::env::join_paths(dirs).unwrap_or_default())
            .env("LD_LIBRARY_PATH", loader_dir)
            .env("HOME", std::env::var_os("HOME").unwrap_or_default());
        command
    };
    let (with, without, ratio) = pairs(|| link(&with_python), || link(&without_python))?;
    println!("| one-shot `cuda-link link` of saxpy.ptx | median of {PAIRS} pairs |");
    println!("|---|---|");
    println!("| `python3` on PATH | {:.1} ms |", with * 1e3);
    println!("| no `python3` on PATH | {:.1} ms |", without * 1e3);
    println!("| ratio | {ratio:.3} (target ≤ 1.10) |\n");

    let devrt = redist::test_env(workspace)
        .into_iter()
        .find(|(key, _)| *key == "CUDA_LINK_CUDADEVRT")
        .map(|(_, path)| path)
        .ok_or("no libcudadevrt.a provisioned")?;
    let cuobjdump = redist::cuobjdump(workspace);
    // `cuda-link inspect FILE` and the peer, `cuobjdump -res-usage FILE`.
    let inspect = |file: &Path| {
        let mut command = Command::new(&cli);
        command.arg("inspect").arg(file);
        command
    };
    let peer = |file: &Path| {
        let mut command = Command::new(&cuobjdump);
        command.arg("-res-usage").arg(file);
        command
    };
    let (ours, theirs, ratio) = pairs(|| inspect(&devrt), || peer(&devrt))?;
    println!("| inspect libcudadevrt.a (3.2 MB) | median of {PAIRS} pairs |");
    println!("|---|---|");
    println!("| `cuda-link inspect` | {:.1} ms |", ours * 1e3);
    println!("| `cuobjdump -res-usage` | {:.1} ms |", theirs * 1e3);
    println!("| ratio | {ratio:.3} |\n");

    let big = redist::install(workspace, &redist::BIG_LIBRARY)?;
    let size = std::fs::metadata(&big)?.len() as f64;
    let (ours, theirs, ratio) = pairs(|| inspect(&big), || peer(&big))?;
    let (ours_rss, theirs_rss) = (peak_rss(inspect(&big))?, peak_rss(peer(&big))?);
    let mib = |bytes: f64| bytes / f64::from(1 << 20);
    println!(
        "| inspect libcurand.so.10 ({:.0} MiB) | wall, median of {PAIRS} pairs | peak RSS | RSS / file size |",
        mib(size)
    );
    println!("|---|---|---|---|");
    for (tool, wall, rss) in [
        ("`cuda-link inspect`", ours, ours_rss),
        ("`cuobjdump -res-usage`", theirs, theirs_rss),
    ] {
        println!(
            "| {tool} | {:.0} ms | {:.0} MiB | {:.2} |",
            wall * 1e3,
            mib(rss),
            rss / size
        );
    }
    println!(
        "| targets | ours / cuobjdump {ratio:.2} (≤ 1) | | ours {:.2} (≤ 0.6) |",
        ours_rss / size
    );
    Ok(())
}

/// The peak resident set of one run of `command`, in bytes, through GNU
/// time (`/usr/bin/time -f %M`).
fn peak_rss(command: Command) -> Result<f64> {
    let output = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(command.get_program())
        .args(command.get_args())
        .output()
        .map_err(|e| format!("/usr/bin/time is needed for peak RSS: {e}"))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    let kib: f64 = stderr
        .lines()
        .last()
        .and_then(|line| line.trim().parse().ok())
        .ok_or_else(|| format!("no RSS in /usr/bin/time's output: {stderr}"))?;
    Ok(kib * 1024.0)
}

/// Medians of `a` and `b` run alternately, `PAIRS` times each after one
/// warm-up of each, and of `a / b` within each pair; each must succeed.
fn pairs(a: impl Fn() -> Command, b: impl Fn() -> Command) -> Result<(f64, f64, f64)> {
    let time = |mut command: Command| -> Result<f64> {
        let start = Instant::now();
        let output = command.output()?;
        let elapsed = start.elapsed().as_secs_f64();
        if !output.status.success() {
            return Err(format!(
                "{command:?} failed: {}",
                String::from_utf8_lossy(&output.stderr)
            )
            .into());
        }
        Ok(elapsed)
    };
    time(a())?;
    time(b())?;
    let (mut first, mut second, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..PAIRS {
        let (a_time, b_time) = if round % 2 == 0 {
            let a_time = time(a())?;
            (a_time, time(b())?)
        } else {
            let b_time = time(b())?;
            (time(a())?, b_time)
        };
        first.push(a_time);
        second.push(b_time);
        ratios.push(a_time / b_time);
    }
    Ok((median(first), median(second), median(ratios)))
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
