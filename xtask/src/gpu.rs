//! `cargo xtask test-gpu` and `bench-gpu`: build the GPU tests and benches
//! here, run them on a GPU machine that has no Rust toolchain.
//!
//! The bundle (`target/gpu-bundle`) holds the test binaries and `run.sh`,
//! which points the tests at the machine's own CUDA (`/usr/local/cuda` or
//! `CUDA_HOME`) and runs them once per module loading mode; `bench-gpu`
//! adds `bench.sh`, which runs the Rust and Python benches as alternating
//! pairs of processes (`gpu_pairs.py`).

use std::path::Path;
use std::process::Command;

use crate::{Result, cargo, copy_dir, run};

/// What every bundle script starts with: the machine's own CUDA toolkit
/// (`/usr/local/cuda` or `CUDA_HOME`) for NVRTC, ptxas, nvFatbin, libNVVM and
/// `libcudadevrt.a`.
const PREAMBLE: &str = r#"#!/bin/sh
cd "$(dirname "$0")" || exit 1
CUDA=${CUDA_HOME:-/usr/local/cuda}
first() { for f in "$@"; do [ -e "$f" ] && { echo "$f"; return; }; done; }
export CUDA_LINK_NVRTC_PATH=${CUDA_LINK_NVRTC_PATH:-$(first "$CUDA"/lib64/libnvrtc.so.1[0-9] "$CUDA"/lib64/libnvrtc.so)}
export CUDA_LINK_NVFATBIN_PATH=${CUDA_LINK_NVFATBIN_PATH:-$(first "$CUDA"/lib64/libnvfatbin.so.1[0-9] "$CUDA"/lib64/libnvfatbin.so)}
export CUDA_LINK_PTXAS=${CUDA_LINK_PTXAS:-$CUDA/bin/ptxas}
export CUDA_LINK_CUDADEVRT=${CUDA_LINK_CUDADEVRT:-$CUDA/lib64/libcudadevrt.a}
export CUDA_LINK_NVVM_PATH=${CUDA_LINK_NVVM_PATH:-$(first "$CUDA"/nvvm/lib64/libnvvm.so.[0-9] "$CUDA"/nvvm/lib64/libnvvm.so)}
"#;

/// Runs the bundled GPU tests, the ignored ones included, once per module
/// loading mode: cuda-module's tests (the nvcc corpus ones with the bundled
/// corpus and CLI), their `gpu::` part again built against the cuda.h 13.0
/// declarations, and the cudarc tests. Arguments are test filters.
const RUN_SH: &str = r#"status=0
export CUDA_LINK_CORPUS="$PWD/corpus/files" CUDA_LINK_CLI="$PWD/cuda-link"
for tests in gpu-tests gpu-tests-cuda-13000 gpu-cudarc-tests; do
    filter=""
    [ "$tests" = gpu-tests-cuda-13000 ] && [ $# -eq 0 ] && filter="gpu::"
    for mode in EAGER LAZY; do
        echo "== $tests, CUDA_MODULE_LOADING=$mode"
        CUDA_MODULE_LOADING=$mode ./$tests --include-ignored --test-threads=1 --show-output $filter "$@" || status=1
    done
done
# The example crate: kernels compiled by its build.rs (cuda-build), run
# through cuda-module and a cudarc stream, every number checked; then
# built for sm_80 alone, so that the driver JIT-compiles its PTX.
for example in cuda-build-example cuda-build-example-sm80; do
    for mode in EAGER LAZY; do
        echo "== $example, CUDA_MODULE_LOADING=$mode"
        CUDA_MODULE_LOADING=$mode ./$example || status=1
    done
done
exit $status
"#;

/// `fuzz.sh [SECONDS] [BATCH]`: the GPU fuzz campaign, one child process
/// per batch, alternating loading modes; a crashed batch's last input is
/// kept in `fuzz-crashes/`, and a batch that runs past 60 s is killed and
/// counted as hung. A crashed or hung batch's counts are lost.
const FUZZ_SH: &str = r#"seconds=${1:-300}
batch=${2:-200}
mkdir -p fuzz-seeds fuzz-crashes
./gpu-fuzz prepare fuzz-seeds || exit 1
end=$(( $(date +%s) + seconds ))
seed=0 tried=0 valid=0 loaded=0 refused=0 crashes=0 hangs=0
while [ "$(date +%s)" -lt "$end" ]; do
    seed=$((seed + 1))
    mode=EAGER; [ $((seed % 2)) -eq 0 ] && mode=LAZY
    counts=$(CUDA_MODULE_LOADING=$mode timeout -s KILL 60 ./gpu-fuzz run fuzz-seeds "$seed" "$batch" current.cubin 2>/dev/null)
    status=$?
    if [ $status -eq 137 ]; then
        hangs=$((hangs + 1))
        cp current.cubin "fuzz-crashes/hang-$seed-$mode.cubin"
        echo "batch $seed ($mode) hung past 60 s; $(cat current.txt)" | tee -a fuzz-crashes/crashes.txt
        continue
    fi
    if [ $status -ne 0 ]; then
        crashes=$((crashes + 1))
        cp current.cubin "fuzz-crashes/batch-$seed-$mode.cubin"
        CUDA_MODULE_LOADING=$mode ./gpu-fuzz replay current.cubin >/dev/null 2>&1
        replay=$?
        echo "batch $seed ($mode) died with status $status; alone: status $replay; $(cat current.txt)" | tee -a fuzz-crashes/crashes.txt
        continue
    fi
    set -- $counts
    tried=$((tried + $1)) valid=$((valid + $2)) loaded=$((loaded + $3)) refused=$((refused + $4))
done
echo "fuzz: $seed batches of $batch in ${seconds}s: $tried mutants, $valid passed validation, $loaded loaded, $refused refused by the driver, $crashes batches crashed, $hangs hung"
[ "$crashes" -eq 0 ] && [ "$hangs" -eq 0 ]
"#;

/// `fatbin_stress.sh [PROCESSES] [REPEAT] [MUTANTS] [SEED]`: every fatbin of
/// `fatbin-stress make` and of `cuda-link link -arch a,b,c` loaded, run
/// and checked in PROCESSES fresh processes per loading mode and REPEAT
/// times in one, and the build example built for sm_80 alone in
/// PROCESSES fresh processes per mode; the PTX ISAs the driver JITs;
/// MUTANTS hostile fatbins, each accepted one loaded in a process of its
/// own.
const FATBIN_STRESS_SH: &str = r#"processes=${1:-50} repeat=${2:-50} mutants=${3:-600} seed=${4:-$(date +%s)}
dir=stress-fatbins
rm -rf "$dir"
./fatbin-stress make "$dir" || exit 1
status=0
for archs in sm_80,compute_80 sm_75,sm_80,compute_80 sm_80,sm_86,compute_86; do
    ./cuda-link link -arch "$archs" "$dir/saxpy.cu" -o "$dir/link-$archs.fatbin" || status=1
done
ls "$dir"
for mode in EAGER LAZY; do
    failed=0
    for i in $(seq 1 "$processes"); do
        CUDA_MODULE_LOADING=$mode ./fatbin-stress run "$dir" > stress-last.txt 2>&1 || { failed=$((failed + 1)); cat stress-last.txt; }
    done
    echo "== $mode: $processes fresh processes, $failed failed"
    [ "$failed" -eq 0 ] || status=1
    echo "== $mode: $repeat rounds in one process"
    CUDA_MODULE_LOADING=$mode ./fatbin-stress run "$dir" "$repeat" || status=1
    # The build example built for sm_80 alone: its PTX is what runs here.
    failed=0
    for i in $(seq 1 "$processes"); do
        CUDA_MODULE_LOADING=$mode ./cuda-build-example-sm80 > stress-last.txt 2>&1 || { failed=$((failed + 1)); cat stress-last.txt; }
    done
    echo "== $mode: cuda-build-example-sm80 in $processes fresh processes, $failed failed"
    [ "$failed" -eq 0 ] || status=1
done
echo "== PTX ISA versions the driver JIT-compiles"
./fatbin-stress isa || status=1
echo "== hostile fatbins"
./fatbin-stress hostile "$dir" "$mutants" "$seed" || status=1
echo "fatbin stress: status $status"
exit $status
"#;

/// `launch_overhead.sh`: the checked launch against cudarc's
/// `launch_builder`, once per module loading mode.
const LAUNCH_OVERHEAD_SH: &str = r#"for mode in EAGER LAZY; do
    echo "== CUDA_MODULE_LOADING=$mode"
    CUDA_MODULE_LOADING=$mode ./launch-overhead || exit 1
done
"#;

/// `load_gap.sh`: raw load, lookup and unload times per driver API, once
/// per module loading mode.
const LOAD_GAP_SH: &str = r#"for mode in EAGER LAZY; do
    CUDA_MODULE_LOADING=$mode ./load-gap || exit 1
done
"#;

/// `load_held.sh [SECONDS] [THREADS]`: the default path held under load
/// (`cuda-module/benches/load_held.rs`), each configuration for SECONDS
/// (60) on THREADS threads (8), once per loading mode.
const LOAD_HELD_SH: &str = r#"for mode in EAGER LAZY; do
    CUDA_MODULE_LOADING=$mode ./load-held "${1:-60}" "${2:-8}" || exit 1
done
"#;

/// `compile_bench.sh [PAIRS] [includes]`: a warm compile-cache hit plus
/// load and first lookup, ours (`compile-bench`) against cuda.core's
/// (`compile_bench.py`, with cuda.core's program cache when it has one),
/// as ABBA pairs of processes; prints each pair's ratio and the median.
/// With `includes`, the kernel includes a header from an include folder.
const COMPILE_BENCH_SH: &str = r#"pairs=${1:-6}
include_dir=""
if [ "${2:-}" = includes ]; then
    include_dir="$PWD/compile-bench-include"
    mkdir -p "$include_dir"
    printf '#pragma once\ntemplate <typename T>\n__device__ T saxpy_op(T a, T x, T y) { return a * x + y; }\n' > "$include_dir/saxpy_op.h"
fi
rm -rf compile-cache-rust compile-cache-python
ratios=""
for i in $(seq 1 "$pairs"); do
    if [ $((i % 2)) -eq 1 ]; then
        rust=$(./compile-bench compile-cache-rust $include_dir) || exit 1
        python=$(python3 compile_bench.py compile-cache-python $include_dir) || exit 1
    else
        python=$(python3 compile_bench.py compile-cache-python $include_dir) || exit 1
        rust=$(./compile-bench compile-cache-rust $include_dir) || exit 1
    fi
    echo "$rust"
    echo "$python"
    ratio=$(python3 -c "import json,sys; r=json.loads(sys.argv[1]); p=json.loads(sys.argv[2]); print(p['warm_s']/r['warm_hit_load_lookup_s'])" "$rust" "$python")
    echo "pair $i: cuda.core / ours = $ratio"
    ratios="$ratios $ratio"
done
python3 -c "import statistics,sys; r=sorted(map(float,sys.argv[1:])); print(f'median {statistics.median(r):.1f}x, min {r[0]:.1f}x, max {r[-1]:.1f}x over {len(r)} pairs')" $ratios
"#;

/// `bench.sh [--pairs N] [--min-pairs N] [--budget SECONDS]
/// [--own-nvjitlink]`: the GPU benches, gpu-bench (Rust) and
/// cuda_core_bench.py (cuda.core and cuda.bindings) on the same inputs, as
/// ABBA pairs of processes per loading mode; `gpu_pairs.py` runs them and
/// reports the median of per-pair ratios (`results/table.md`).
const BENCH_SH: &str = r#"exec python3 gpu_pairs.py run "$@"
"#;

/// The pairing, the time budget and the report of `bench.sh`: the GPU
/// machine has python3 but no Rust.
const GPU_PAIRS_PY: &str = include_str!("gpu_pairs.py");

/// Builds `cargo ARGS --message-format=json` and returns the path of the
/// executable whose target is named `target`.
pub(crate) fn build_executable(workspace: &Path, args: &[&str], target: &str) -> Result<String> {
    build_with(cargo().current_dir(workspace).args(args), target)
}

/// `cuda-build-example` (with its cudarc path), whose build.rs compiles
/// its kernels with the provisioned NVRTC and nvJitLink, for
/// `compute_cap`'s archs when given (`CUDA_COMPUTE_CAP`).
fn build_kernels_example(workspace: &Path, compute_cap: Option<&str>) -> Result<String> {
    crate::redist::ensure(workspace, &[])?;
    let mut command = cargo();
    match compute_cap {
        Some(archs) => command.env("CUDA_COMPUTE_CAP", archs),
        None => command.env_remove("CUDA_COMPUTE_CAP"),
    };
    crate::with_redist_env(command.current_dir(workspace), workspace).args([
        "build",
        "--release",
        "-p",
        "cuda-build-example",
        "--features",
        "cudarc",
    ]);
    build_with(&mut command, "cuda-build-example")
}

/// Runs a cargo build and returns the path of `target`'s executable.
fn build_with(command: &mut Command, target: &str) -> Result<String> {
    let output = command
        .arg("--message-format=json")
        .env("CARGO_PROFILE_TEST_DEBUG", "0")
        .output()?;
    if !output.status.success() {
        return Err(format!(
            "building {target} failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    let marker = format!("\"name\":\"{target}\"");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| line.contains(&marker))
        .find_map(|line| {
            let start = line.find("\"executable\":\"")? + "\"executable\":\"".len();
            let end = start + line[start..].find('"')?;
            Some(line[start..end].to_owned())
        })
        .ok_or_else(|| format!("cargo reported no executable for {target}").into())
}

/// Builds a release example of `cuda-module`; returns its path.
fn build_example(workspace: &Path, name: &str) -> Result<String> {
    build_module_target(workspace, "--example", name, "cudarc")
}

/// Builds a benchmark of `cuda-module` (`benches/`, run by these bundles);
/// returns its path.
fn build_bench(workspace: &Path, name: &str) -> Result<String> {
    build_module_target(workspace, "--bench", name, "cudarc")
}

/// Builds one release target of `cuda-module` with `features`.
fn build_module_target(workspace: &Path, kind: &str, name: &str, features: &str) -> Result<String> {
    let args = [
        "build",
        "--release",
        "-p",
        "cuda-module",
        "--features",
        features,
        kind,
        name,
    ];
    build_executable(workspace, &args, name)
}

fn write_script(path: &Path, body: &str) -> Result<()> {
    std::fs::write(path, format!("{PREAMBLE}{body}"))?;
    run(Command::new("chmod").arg("+x").arg(path))
}

/// Copies an executable into a bundle without its symbols: the device
/// takes 64 MiB of carried files, and the tests' panics need no symbols.
fn copy_executable(from: impl AsRef<Path>, to: impl AsRef<Path>) -> Result<()> {
    std::fs::copy(from, to.as_ref())?;
    run(Command::new("strip").arg(to.as_ref()))
}

/// `cargo xtask bench-gpu`: bundles the GPU benches next to the tests.
pub fn bench_gpu(workspace: &Path, run_here: bool) -> Result<()> {
    let executable = build_bench(workspace, "gpu_bench")?;
    let bundle = workspace.join("target/gpu-bundle");
    std::fs::create_dir_all(&bundle)?;
    copy_executable(executable, bundle.join("gpu-bench"))?;
    // The step-by-step timings, with the `tracing` spans compiled in.
    let phases = build_module_target(workspace, "--bench", "gpu_phases", "tracing")?;
    copy_executable(phases, bundle.join("gpu-phases"))?;
    std::fs::copy(
        workspace.join("xtask/bench/cuda_core_bench.py"),
        bundle.join("cuda_core_bench.py"),
    )?;
    std::fs::write(bundle.join("gpu_pairs.py"), GPU_PAIRS_PY)?;
    write_script(&bundle.join("bench.sh"), BENCH_SH)?;
    eprintln!(
        "xtask: GPU benches in {}; on a GPU machine run: target/gpu-bundle/bench.sh \
         (3–5 minutes; report in target/gpu-bundle/results/table.md)",
        bundle.display()
    );
    if run_here || has_local_gpu() {
        run(&mut Command::new(bundle.join("bench.sh")))?;
    }
    Ok(())
}

/// Builds the bundle and runs it here when this machine has a GPU (or
/// with `--run`).
pub fn test_gpu(workspace: &Path, run_here: bool) -> Result<()> {
    let executable = build_executable(
        workspace,
        &["test", "-p", "cuda-module", "--test", "it", "--no-run"],
        "it",
    )?;
    // The same tests against the driver declarations of cuda.h 13.0.
    let executable_13000 = build_executable(
        workspace,
        &[
            "test",
            "-p",
            "cuda-module",
            "--features",
            "cuda-13000",
            "--test",
            "it",
            "--no-run",
        ],
        "it",
    )?;
    let cudarc_tests = build_executable(
        workspace,
        &[
            "test",
            "-p",
            "cuda-module",
            "--features",
            "cudarc",
            "--test",
            "gpu_cudarc",
            "--no-run",
        ],
        "gpu_cudarc",
    )?;
    let launch_overhead = build_bench(workspace, "launch_overhead")?;
    let cli = build_executable(
        workspace,
        &["build", "--release", "-p", "cuda-link-cli"],
        "cuda-link",
    )?;
    crate::corpus::ensure(workspace)?;
    let fuzzer = build_example(workspace, "gpu_fuzz")?;
    let load_gap = build_bench(workspace, "load_gap")?;
    let load_held = build_bench(workspace, "load_held")?;
    let compile_bench = build_bench(workspace, "compile_bench")?;
    let fatbin_stress = build_example(workspace, "fatbin_stress")?;
    let cubin_options = build_example(workspace, "cubin_options")?;
    // The example for sm_80 alone first: the plain build after it leaves
    // cargo's copy as the default.
    let kernels_example_sm80 = build_kernels_example(workspace, Some("80"))?;
    let sm80_copy = workspace.join("target/cuda-build-example-sm80");
    std::fs::copy(&kernels_example_sm80, &sm80_copy)?;
    let kernels_example = build_kernels_example(workspace, None)?;
    let bundle = workspace.join("target/gpu-bundle");
    std::fs::create_dir_all(&bundle)?;
    copy_executable(&executable, bundle.join("gpu-tests"))?;
    copy_executable(&executable_13000, bundle.join("gpu-tests-cuda-13000"))?;
    copy_executable(&cudarc_tests, bundle.join("gpu-cudarc-tests"))?;
    copy_executable(&launch_overhead, bundle.join("launch-overhead"))?;
    write_script(&bundle.join("launch_overhead.sh"), LAUNCH_OVERHEAD_SH)?;
    copy_executable(&cli, bundle.join("cuda-link"))?;
    copy_dir(
        &workspace.join("target/corpus/files"),
        &bundle.join("corpus/files"),
    )?;
    copy_executable(&fuzzer, bundle.join("gpu-fuzz"))?;
    copy_executable(&load_gap, bundle.join("load-gap"))?;
    write_script(&bundle.join("load_gap.sh"), LOAD_GAP_SH)?;
    copy_executable(&load_held, bundle.join("load-held"))?;
    write_script(&bundle.join("load_held.sh"), LOAD_HELD_SH)?;
    copy_executable(&compile_bench, bundle.join("compile-bench"))?;
    copy_executable(&fatbin_stress, bundle.join("fatbin-stress"))?;
    write_script(&bundle.join("fatbin_stress.sh"), FATBIN_STRESS_SH)?;
    copy_executable(&cubin_options, bundle.join("cubin-options"))?;
    copy_executable(&kernels_example, bundle.join("cuda-build-example"))?;
    copy_executable(&sm80_copy, bundle.join("cuda-build-example-sm80"))?;
    std::fs::copy(
        workspace.join("xtask/bench/compile_bench.py"),
        bundle.join("compile_bench.py"),
    )?;
    write_script(&bundle.join("compile_bench.sh"), COMPILE_BENCH_SH)?;
    write_script(&bundle.join("fuzz.sh"), FUZZ_SH)?;
    let script = bundle.join("run.sh");
    write_script(&script, RUN_SH)?;
    let size = std::fs::metadata(bundle.join("gpu-tests"))?.len();
    eprintln!(
        "xtask: GPU bundle in {} ({} MiB)",
        bundle.display(),
        size / (1 << 20)
    );
    eprintln!("xtask: on a GPU machine run: target/gpu-bundle/run.sh");

    if run_here || has_local_gpu() {
        run(&mut Command::new(&script))?;
    }
    Ok(())
}

/// Whether `nvidia-smi` sees a GPU on this machine.
fn has_local_gpu() -> bool {
    Command::new("nvidia-smi")
        .arg("-L")
        .output()
        .is_ok_and(|o| o.status.success() && !o.stdout.is_empty())
}
