//! `cargo xtask bench-build`: `cuda-build` against nvcc on a set of kernel
//! files (`--set candle`: candle's, `xtask/bench/kernels/candle`; `--set cub`:
//! header-heavy files of fp16, bf16 and CUB, `xtask/bench/kernels/cub`), for
//! three SM arches plus PTX, run alternately (ABBA) on this machine; then
//! the warm rebuild, where every compile and link is a cache hit.
//! cuda-build uses NVRTC's precompiled headers unless `--no-pch`.
//!
//! Both sides use CUDA 13.0.88 (NVRTC and nvcc from the pinned wheels;
//! nvJitLink 13.5 links) and every core: `cuda-build` its jobs, nvcc one
//! process per file at a time per core, as `bindgen_cuda` runs it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use crate::{Result, redist};

const ARCHS: &str = "sm_80,sm_86,sm_90";
const NVCC_GENCODE: &[&str] = &[
    "-gencode=arch=compute_80,code=sm_80",
    "-gencode=arch=compute_86,code=sm_86",
    "-gencode=arch=compute_90,code=sm_90",
    "-gencode=arch=compute_80,code=compute_80",
];

/// The timed build (`cuda-build`'s `build_bench`) and the kernel set it
/// builds, with the pinned NVRTC and nvJitLink.
pub(crate) struct BuildBench {
    executable: String,
    root: PathBuf,
    files: Vec<PathBuf>,
    archs: String,
    pch: bool,
}

impl BuildBench {
    /// Builds `build_bench` with cuda-build's `features` for the kernel set
    /// `set` (`candle` or `cub`).
    pub(crate) fn new(workspace: &Path, set: &str, pch: bool, features: &str) -> Result<Self> {
        if !matches!(set, "candle" | "cub") {
            return Err(format!("--set {set}: expected candle or cub").into());
        }
        redist::ensure(workspace, &[])?;
        let executable = crate::gpu::build_executable(
            workspace,
            &[
                "build",
                "--release",
                "-p",
                "cuda-build",
                "--features",
                features,
                "--bench",
                "build_bench",
            ],
            "build_bench",
        )?;
        let kernels = workspace.join("xtask/bench/kernels").join(set);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&kernels)?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "cu"))
            .collect();
        files.sort();
        Ok(BuildBench {
            executable,
            root: redist::root(workspace),
            files,
            archs: ARCHS.to_owned(),
            pch,
        })
    }

    /// `files` instead of a kernel set, built for `archs` (`compute_90a`:
    /// PTX text alone, as `peer-candle` builds candle's).
    pub(crate) fn with_files(mut self, files: Vec<PathBuf>, archs: &str) -> Self {
        self.files = files;
        self.archs = archs.to_owned();
        self
    }

    /// The kernel files.
    pub(crate) fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// One build into `out` with the cache in `cache`, `env` added: its
    /// seconds, and its lines (`ms compiled cached processes remote`, the
    /// summary).
    pub(crate) fn run(
        &self,
        out: &Path,
        cache: &Path,
        env: &[(&str, String)],
    ) -> Result<(f64, Vec<String>)> {
        let root = &self.root;
        let mut command = Command::new(&self.executable);
        command
            .env(
                "CUDA_LINK_NVRTC_PATH",
                root.join("nvrtc130/nvidia/cu13/lib/libnvrtc.so.13"),
            )
            .env(
                "CUDA_LINK_NVJITLINK_PATH",
                root.join("nvjitlink13/nvidia/cu13/lib/libnvJitLink.so.13"),
            )
            .env("CUDA_LINK_SITE_PACKAGES", root.join("nvcc13"))
            .env("CUDA_BUILD_BENCH_PCH", if self.pch { "1" } else { "0" })
            .env_remove("CUDA_LINK_CACHE_URL")
            .envs(env.iter().map(|(k, v)| (k, v)))
            .arg(out)
            .arg(cache)
            .arg(&self.archs)
            .args(&self.files);
        let start = Instant::now();
        let output = command.output()?;
        let seconds = start.elapsed().as_secs_f64();
        if !output.status.success() {
            return Err(format!(
                "build_bench failed: {}",
                String::from_utf8_lossy(&output.stderr)
            )
            .into());
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        Ok((seconds, stdout.lines().map(str::to_owned).collect()))
    }
}

pub fn bench_build(workspace: &Path, pairs: usize, set: &str, pch: bool) -> Result<()> {
    let bench = BuildBench::new(workspace, set, pch, "build")?;
    let nvcc = redist::install(workspace, &redist::NVCC)?;
    let files = bench.files().to_vec();
    let scratch = scratch_dir(workspace, "bench-build")?;
    let ours_in = |out: &Path, cache: &Path| -> Result<(f64, String)> {
        let (seconds, lines) = bench.run(out, cache, &[])?;
        Ok((seconds, lines.first().cloned().unwrap_or_default()))
    };
    let ours = |run: usize| {
        let dir = scratch.join(format!("ours-{run}"));
        ours_in(&dir.join("out"), &dir.join("cache"))
    };
    let theirs = |run: usize| -> Result<f64> {
        let out = scratch.join(format!("nvcc-{run}"));
        std::fs::create_dir_all(&out)?;
        let start = Instant::now();
        let mut args = vec!["--fatbin"];
        args.extend(NVCC_GENCODE);
        nvcc_all(&nvcc, &args, &files, &out, "fatbin")?;
        Ok(start.elapsed().as_secs_f64())
    };

    eprintln!(
        "xtask: {} {set} files, {ARCHS} + compute_80, {pairs} ABBA pairs, PCH {}",
        files.len(),
        if pch { "on" } else { "off" }
    );
    let mut ratios = Vec::new();
    for pair in 0..pairs {
        let (a, b) = if pair % 2 == 0 {
            let a = ours(pair)?;
            (a, theirs(pair)?)
        } else {
            let b = theirs(pair)?;
            (ours(pair)?, b)
        };
        let ratio = a.0 / b;
        println!(
            "pair {pair}: cuda-build {:.2} s ({}), nvcc {:.2} s: {ratio:.2}x",
            a.0, a.1, b
        );
        ratios.push(ratio);
    }
    ratios.sort_by(f64::total_cmp);
    println!(
        "cold: cuda-build / nvcc, median of {pairs}: {:.2}x",
        ratios[pairs / 2]
    );

    // Warm: the last cold run's outputs and cache, nothing changed (what
    // cargo's rerun of the build script finds).
    let last = scratch.join(format!("ours-{}", pairs - 1));
    let median = |label: &str, out: &dyn Fn(usize) -> PathBuf| -> Result<()> {
        let mut times: Vec<f64> = (0..11)
            .map(|run| ours_in(&out(run), &last.join("cache")).map(|(s, _)| s * 1e3))
            .collect::<Result<_>>()?;
        times.sort_by(f64::total_cmp);
        println!(
            "{label}: median {:.1} ms of 11 ({:.1} to {:.1}), whole process",
            times[5], times[0], times[10]
        );
        Ok(())
    };
    median("no-op rebuild (nothing changed)", &|_| last.join("out"))?;
    // A new target folder or profile: every compile and link a cache hit.
    median("new target folder, warm cache", &|run| {
        scratch.join(format!("fresh-{run}"))
    })?;
    Ok(())
}

/// `nvcc ARGS -o OUT/{stem}.{extension} FILE` for every file, a process
/// per file and one per core, as `bindgen_cuda` runs it (cudaforge runs
/// half as many on a machine of two cores: nvcc's side is the faster here).
pub(crate) fn nvcc_all(
    nvcc: &Path,
    args: &[&str],
    files: &[PathBuf],
    out: &Path,
    extension: &str,
) -> Result<()> {
    let next = AtomicUsize::new(0);
    let failure = Mutex::new(None);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    std::thread::scope(|scope| {
        for _ in 0..cores.min(files.len()) {
            scope.spawn(|| {
                while let Some(file) = files.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let stem = file.file_stem().unwrap_or_default().to_string_lossy();
                    let status = Command::new(nvcc)
                        .args(args)
                        .arg("-o")
                        .arg(out.join(format!("{stem}.{extension}")))
                        .arg(file)
                        .status();
                    if !status.as_ref().is_ok_and(|s| s.success()) {
                        *failure.lock().unwrap() =
                            Some(format!("nvcc on {}: {status:?}", file.display()));
                    }
                }
            });
        }
    });
    match failure.into_inner().unwrap() {
        Some(failure) => Err(failure.into()),
        None => Ok(()),
    }
}

/// `target/NAME`, emptied.
pub(crate) fn scratch_dir(workspace: &Path, name: &str) -> Result<PathBuf> {
    let dir = workspace.join("target").join(name);
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
