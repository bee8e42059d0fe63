//! `cargo xtask peer-candle`: candle-core's own CUDA tests, built twice on
//! this machine with only the kernel compiler swapped. Once on
//! candle-kernels as published (nvcc 13.0 from the pinned wheels, through
//! cudaforge), once on `peers/candle/candle-kernels` (cuda-build: NVRTC
//! and nvJitLink). Both sets of test executables, the probe of each build
//! and the scripts are packed into `target/peer-candle/bundle` for the
//! GPU machine (`run.sh` there).
//!
//! Neither build needs a GPU or a CUDA install: cudarc's `dynamic-linking`
//! links against stub libraries made here from cudarc's own declarations,
//! and the real ones are found at run time (`/usr/local/cuda/lib64`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

mod numbers;

use crate::{Result, redist, run};

/// The candle release whose kernels are swapped.
const CANDLE: &str = "0.11.1";

/// The files candle loads as PTX (`peers/candle/candle-kernels/build.rs`).
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

/// The GPU both builds are for: the lent H100 or H200 (`CUDA_COMPUTE_CAP`,
/// which candle's builder reads as compute_90a).
const COMPUTE_CAP: &str = "90";

/// The libraries cudarc links with `dynamic-linking`: the stub's file,
/// its soname (what the executable will ask for) and the cudarc module
/// whose declarations it defines.
const STUBS: [(&str, &str, &str); 5] = [
    ("libcuda.so", "libcuda.so.1", "driver"),
    ("libnvrtc.so", "libnvrtc.so.13", "nvrtc"),
    ("libcurand.so", "libcurand.so.10", "curand"),
    ("libcublas.so", "libcublas.so.13", "cublas"),
    ("libcublasLt.so", "libcublasLt.so.13", "cublaslt"),
];

/// A build of candle-core's tests: its name, and whether candle-kernels
/// is patched to the peer crate.
struct Variant {
    name: &'static str,
    ours: bool,
}

const VARIANTS: [Variant; 2] = [
    Variant {
        name: "nvcc",
        ours: false,
    },
    Variant {
        name: "ours",
        ours: true,
    },
];

pub fn peer_candle(
    workspace: &Path,
    kernels_only: bool,
    pairs: usize,
    runners: bool,
    numbers_only: bool,
) -> Result<()> {
    redist::ensure(workspace, &[])?;
    let nvcc = redist::install(workspace, &redist::NVCC)?;
    let peer = workspace.join("peers/candle");
    if kernels_only {
        println!("{}", kernel_times(workspace, &nvcc, &peer, pairs)?);
        return Ok(());
    }
    let root = workspace.join("target/peer-candle");
    let candle_core = registry_source(&peer, "candle-core")?;
    if !candle_core.ends_with(format!("candle-core-{CANDLE}")) {
        return Err(format!(
            "peers/candle's lock holds {}, not candle {CANDLE}",
            candle_core.display()
        )
        .into());
    }
    let cudarc = registry_source(&peer, "cudarc")?;
    let stubs = link_stubs(&root.join("stubs"), &cudarc, &nvcc)?;
    let numbers = numbers::Numbers {
        workspace,
        nvcc: &nvcc,
        stubs: &stubs,
        root: &root,
        peer: &peer,
        candle_core: &candle_core,
    };
    if numbers_only {
        if pairs > 0 && !VARIANTS.iter().all(|v| root.join(v.name).is_dir()) {
            return Err(
                "--numbers-only --pairs needs the test builds of an earlier \
                        `cargo xtask peer-candle`"
                    .into(),
            );
        }
        println!("{}", numbers.measure(pairs, runners)?);
        return Ok(());
    }
    // The runners alone build in a target folder of their own.
    if runners && pairs == 0 {
        println!("{}", numbers.measure(0, true)?);
        return Ok(());
    }
    let bundle = crate::bench_build::scratch_dir(workspace, "peer-candle/bundle")?;
    let executables = bundle.join("bin");
    std::fs::create_dir_all(&executables)?;

    let mut times = Vec::new();
    for variant in &VARIANTS {
        let dir = root.join(variant.name);
        let kernels = peer.join("candle-kernels");
        write_workspace(&dir, &peer, &candle_core, variant.ours.then_some(&*kernels))?;
        let env = BuildEnv {
            workspace,
            nvcc: &nvcc,
            stubs: &stubs,
            target: &root.join("target"),
            cache: &crate::bench_build::scratch_dir(
                workspace,
                &format!("peer-candle/cache-{}", variant.name),
            )?,
        };
        let start = Instant::now();
        let tests = env.tests(&dir)?;
        let seconds = start.elapsed().as_secs_f64();
        let report = env.target.join("cargo-timings/cargo-timing.html");
        let script = match build_script_seconds(&report) {
            Ok(Some(seconds)) => format!("{seconds:.1}"),
            Ok(None) => "up to date".to_owned(),
            Err(error) => format!("unknown ({error})"),
        };
        eprintln!(
            "xtask: {}: candle-core's {} test executables in {seconds:.1} s, candle-kernels' \
             build script: {script}",
            variant.name,
            tests.len(),
        );
        times.push((variant.name, seconds, script));
        for test in &tests {
            let name = Path::new(test)
                .file_name()
                .unwrap_or_default()
                .to_string_lossy();
            // `tensor_tests-1a2b...`: the hash differs between the builds.
            let name = name.rsplit_once('-').map_or(&*name, |(stem, _)| stem);
            std::fs::copy(test, executables.join(format!("{name}.{}", variant.name)))?;
        }
    }

    let data = bundle.join("candle-core/tests");
    std::fs::create_dir_all(&data)?;
    for entry in std::fs::read_dir(candle_core.join("tests"))?.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e != "rs") {
            std::fs::copy(&path, data.join(entry.file_name()))?;
        }
    }
    for script in ["run.sh", "compare.py"] {
        std::fs::copy(peer.join(script), bundle.join(script))?;
    }
    let kernel_times = kernel_times(workspace, &nvcc, &peer, 1)?;
    // One archive: each test's two builds side by side share most bytes.
    run(Command::new("tar")
        .current_dir(&bundle)
        .env("XZ_OPT", "-9 --threads=0")
        .args(["--sort=name", "-cJf", "bin.tar.xz", "bin"]))?;
    std::fs::remove_dir_all(&executables)?;

    // The first build also compiles what both share (cudarc, gemm...).
    println!(
        "| build (cargo test --release --no-run), in this order | whole, s | candle-kernels' \
         build script, s |"
    );
    println!("|---|---|---|");
    for (name, seconds, script) in &times {
        println!("| {name} | {seconds:.1} | {script} |");
    }
    println!("{kernel_times}");
    if pairs > 0 || runners {
        println!("{}", numbers.measure(pairs, runners)?);
    }
    let size = std::fs::metadata(bundle.join("bin.tar.xz"))?.len();
    eprintln!(
        "xtask: bundle in {} ({} MiB); on the GPU machine: bash run.sh",
        bundle.display(),
        size >> 20
    );
    Ok(())
}

/// How long candle-kernels' build script ran in the last build, from
/// cargo's `--timings` report; `None` when it did not run.
pub(crate) fn build_script_seconds(report: &Path) -> Result<Option<f64>> {
    let html = std::fs::read_to_string(report)?;
    let start = html
        .find("const UNIT_DATA = ")
        .map(|at| at + "const UNIT_DATA = ".len())
        .ok_or("no UNIT_DATA in cargo's timing report")?;
    let units: serde_json::Value = serde_json::Deserializer::from_str(&html[start..])
        .into_iter()
        .next()
        .ok_or("UNIT_DATA is empty")??;
    Ok(units
        .as_array()
        .into_iter()
        .flatten()
        .find(|unit| unit["name"] == "candle-kernels" && unit["mode"] == "run-custom-build")
        .and_then(|unit| unit["duration"].as_f64())
        // A script cargo found up to date is listed, with no time.
        .filter(|&seconds| seconds > 0.0))
}

/// The folder of `name`'s source in cargo's registry, as `peers/candle`'s
/// lock resolves it.
fn registry_source(peer: &Path, name: &str) -> Result<PathBuf> {
    let output = crate::cargo()
        .current_dir(peer)
        .args(["metadata", "--format-version", "1"])
        .output()?;
    if !output.status.success() {
        return Err(format!(
            "cargo metadata in {}: {}",
            peer.display(),
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout)?;
    metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|package| package["name"] == name)
        .filter(|package| {
            package["source"]
                .as_str()
                .is_some_and(|s| s.starts_with("registry"))
        })
        .find_map(|package| {
            Path::new(package["manifest_path"].as_str()?)
                .parent()
                .map(Path::to_path_buf)
        })
        .ok_or_else(|| format!("{name} is not in {}'s lock", peer.display()).into())
}

/// The workspace of one build: candle-core's published source as a member
/// (its tests build only so), the probe, and `peers/candle`'s lock (the
/// probe's dependencies hold candle-core's dev-dependencies, so it pins
/// every crate of both builds); ours patches candle-kernels to `kernels`,
/// the peer crate or a copy of it.
pub(crate) fn write_workspace(
    dir: &Path,
    peer: &Path,
    candle_core: &Path,
    kernels: Option<&Path>,
) -> Result<()> {
    // Copied again unless a whole copy of this source is there: a copy
    // the build has seen keeps its times, and candle-core stays built.
    let copied = dir.join("candle-core/.copied-from");
    let source = candle_core.display().to_string();
    if std::fs::read_to_string(&copied).ok().as_deref() != Some(&*source) {
        crate::copy_dir(candle_core, &dir.join("candle-core"))?;
        std::fs::write(&copied, &source)?;
    }
    crate::copy_dir(&peer.join("probe"), &dir.join("probe"))?;
    let kernels = match kernels {
        Some(kernels) => format!(
            "candle-kernels = {{ path = {:?} }}\n",
            kernels.display().to_string()
        ),
        None => String::new(),
    };
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "# Written by `cargo xtask peer-candle`.\n[workspace]\nmembers = [\"candle-core\", \
             \"probe\"]\nresolver = \"2\"\n\n[patch.crates-io]\ncandle-core = {{ path = \
             \"candle-core\" }}\n{kernels}"
        ),
    )?;
    std::fs::copy(peer.join("Cargo.lock"), dir.join("Cargo.lock"))?;
    Ok(())
}

/// Stub libraries to link cudarc's `dynamic-linking` against: each
/// defines the functions cudarc declares for it, under the real soname.
/// `libcudart.so` is the wheel's own (libmoe.a's host launchers call it).
fn link_stubs(dir: &Path, cudarc: &Path, nvcc: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    for (file, soname, module) in STUBS {
        let declarations =
            std::fs::read_to_string(cudarc.join("src").join(module).join("sys/mod.rs"))?;
        let mut source = String::new();
        let mut names: Vec<&str> = declarations
            .lines()
            .filter_map(|line| line.trim_start().strip_prefix("fn "))
            .filter_map(|rest| rest.split_once('(').map(|(name, _)| name))
            .filter(|name| name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            .collect();
        names.sort_unstable();
        names.dedup();
        for name in names {
            source.push_str(&format!("void {name}(void) {{}}\n"));
        }
        let c = dir.join(format!("{file}.c"));
        std::fs::write(&c, source)?;
        run(Command::new("cc")
            .args(["-shared", "-fPIC", "-o"])
            .arg(dir.join(file))
            .arg(format!("-Wl,-soname,{soname}"))
            .arg(&c))?;
    }
    let cudart = nvcc
        .parent()
        .and_then(Path::parent)
        .map(|cu13| cu13.join("lib/libcudart.so.13"))
        .filter(|path| path.is_file())
        .ok_or("the nvcc wheel has no lib/libcudart.so.13")?;
    let link = dir.join("libcudart.so");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(cudart, link)?;
    Ok(dir.to_path_buf())
}

/// What both builds share: the toolchain, the stubs and the target folder.
pub(crate) struct BuildEnv<'a> {
    pub(crate) workspace: &'a Path,
    pub(crate) nvcc: &'a Path,
    pub(crate) stubs: &'a Path,
    pub(crate) target: &'a Path,
    /// cuda-build's cache, empty: the timed build compiles.
    pub(crate) cache: &'a Path,
}

impl BuildEnv<'_> {
    pub(crate) fn cargo(&self, dir: &Path) -> Command {
        let redist = redist::root(self.workspace);
        let nvcc_bin = self.nvcc.parent().unwrap_or(Path::new("."));
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut paths = vec![nvcc_bin.to_path_buf()];
        paths.extend(std::env::split_paths(&path));
        let mut command = crate::cargo();
        command
            .current_dir(dir)
            .env("CARGO_TARGET_DIR", self.target)
            .env("CARGO_PROFILE_RELEASE_STRIP", "symbols")
            .env("RUSTFLAGS", format!("-L native={}", self.stubs.display()))
            .env("CUDARC_CUDA_VERSION", "13000")
            .env("CUDA_COMPUTE_CAP", COMPUTE_CAP)
            .env("NVCC", self.nvcc)
            .env("PATH", std::env::join_paths(paths).unwrap_or(path))
            .env(
                "CUDA_LINK_NVRTC_PATH",
                redist.join("nvrtc130/nvidia/cu13/lib/libnvrtc.so.13"),
            )
            .env(
                "CUDA_LINK_NVJITLINK_PATH",
                redist.join("nvjitlink13/nvidia/cu13/lib/libnvJitLink.so.13"),
            )
            .env("CUDA_LINK_SITE_PACKAGES", redist.join("nvcc13"))
            .env("CUDA_LINK_CACHE_DIR", self.cache)
            .env_remove("CUDA_LINK_CACHE_URL")
            .env_remove("CUDA_HOME");
        command
    }

    /// Builds candle-core's tests with the `cuda` feature, and the probe in
    /// the same run (a build of its own would resolve other features and
    /// build candle-kernels again); returns the test executables.
    fn tests(&self, dir: &Path) -> Result<Vec<String>> {
        let output = self
            .cargo(dir)
            .args([
                "test",
                "--release",
                "-p",
                "candle-core",
                "-p",
                "candle-peer-probe",
                "--features",
                "candle-core/cuda",
                "--no-run",
                "--timings",
                "--message-format=json-render-diagnostics",
            ])
            .stderr(std::process::Stdio::inherit())
            .output()?;
        if !output.status.success() {
            return Err(format!("building candle-core's tests in {} failed", dir.display()).into());
        }
        let mut executables = Vec::new();
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            let probe = message["target"]["name"] == "probe";
            if (message["profile"]["test"] == true || probe)
                && let Some(executable) = message["executable"].as_str()
            {
                executables.push(executable.to_owned());
            }
        }
        // A fresh executable can be reported twice.
        executables.sort();
        executables.dedup();
        Ok(executables)
    }
}

/// The kernel part alone, cold, on this machine, in `pairs` ABBA pairs:
/// nvcc's PTX of the eleven files (cudaforge's command line, one process
/// per core) against cuda-build's (NVRTC straight to PTX, an empty cache),
/// as a markdown table.
fn kernel_times(workspace: &Path, nvcc: &Path, peer: &Path, pairs: usize) -> Result<String> {
    let src = peer.join("candle-kernels/src");
    let files: Vec<PathBuf> = PTX_FILES
        .iter()
        .map(|f| src.join(format!("{f}.cu")))
        .collect();
    // cudaforge's `build_ptx` command line.
    let args = [
        "-gencode=arch=compute_90a,code=sm_90a",
        "--ptx",
        "--default-stream",
        "per-thread",
        "--expt-relaxed-constexpr",
        "-std=c++17",
        "-O3",
    ];
    let bench = crate::bench_build::BuildBench::new(workspace, "candle", true, "build")?
        .with_files(files.clone(), "compute_90a");
    let flags = (
        "CUDA_BUILD_BENCH_FLAGS",
        "-default-device --std=c++17".to_owned(),
    );
    let mut table = format!(
        "| kernel part: PTX of candle's {} files for compute_90a, cold | nvcc 13.0 --ptx, a \
         process per file, one per core, s | cuda-build (NVRTC 13.0, straight to PTX), s | \
         ratio |\n|---|---|---|---|\n",
        PTX_FILES.len()
    );
    let mut ratios = Vec::new();
    for pair in 0..pairs.max(1) {
        let mut seconds = [0.0; 2];
        // A B B A: nvcc first in even pairs.
        let order = if pair % 2 == 0 { [0, 1] } else { [1, 0] };
        for side in order {
            let scratch = crate::bench_build::scratch_dir(workspace, "peer-candle/kernels")?;
            let start = Instant::now();
            match side {
                0 => crate::bench_build::nvcc_all(nvcc, &args, &files, &scratch, "ptx")?,
                _ => {
                    bench.run(
                        &scratch.join("ours"),
                        &scratch.join("cache"),
                        std::slice::from_ref(&flags),
                    )?;
                }
            }
            seconds[side] = start.elapsed().as_secs_f64();
        }
        let ratio = seconds[1] / seconds[0];
        ratios.push(ratio);
        table.push_str(&format!(
            "| pair {pair} | {:.1} | {:.1} | {ratio:.2} |\n",
            seconds[0], seconds[1]
        ));
    }
    ratios.sort_by(f64::total_cmp);
    table.push_str(&format!(
        "| median of {} | | | **{:.2}** |",
        ratios.len(),
        ratios[ratios.len() / 2]
    ));
    Ok(table)
}
