"""The GPU benches of `cargo xtask bench-gpu`, in pairs.

Usage, in the bundle folder (`bench.sh` runs `run`):

    python3 gpu_pairs.py run [--pairs N] [--min-pairs N] [--budget SECONDS]
                             [--own-nvjitlink] [--no-pin]
    python3 gpu_pairs.py report [RESULTS_DIR]
    python3 gpu_pairs.py probe

`run` prepares the workloads once (`gpu-bench prepare data`), then runs
the two sides, `gpu-bench measure data` (cuda-link, Rust) and
`cuda_core_bench.py measure` (cuda.core and cuda.bindings), as whole
processes, one right after the other: a pair per loading mode (EAGER,
LAZY) per round, the side that goes first alternating from round to round
(ABBA). Each figure is then reported as the median over the pairs of the
ratio within each pair, with its interquartile range and its min-max: the
two runs of a pair are adjacent, so the machine's speed changing between
pairs (clocks, other tenants, caches) cancels, which a ratio of two
separate runs' figures does not.

It runs --pairs rounds (default 20), but stops after --min-pairs
(default 10) once the next round would end past --budget seconds
(default 420), so the whole run stays under about 8 minutes.

Unless --own-nvjitlink is given or CUDA_LINK_NVJITLINK_PATH is set, the
Rust side links with the nvJitLink that cuda.core loads (when cuda.core
links with nvJitLink), so that both link with the same library. Unless
--no-pin is given, every process runs on the CPUs of GPU 0's NUMA node.

Then, when the bundle has gpu-phases, each side's small link + load +
lookup is timed step by step per mode (results/phases.txt and
results/phases-MODE-SIDE.json).

Writes results/MODE-ROUND-SIDE.json (each process's medians),
results/log.txt (their stderr), results/table.md (the report, also printed)
and results/summary.json.
"""

import json
import os
import re
import statistics
import subprocess
import sys
import time

MODES = ("EAGER", "LAZY")
RESULTS = "results"
DATA = "data"

# (label, ours, reference label, reference, kind): `ours` and `reference`
# are (side, key) of the JSON each side writes. kind "speedup" reports
# reference / ours (above 1: cuda-link is faster), "overhead" reports
# ours / reference - 1, "time" reports ours alone.
FIGURES = [
    ("small: link + load + first lookup (default: isolated link)",
     ("rust", "small/e2e_link_load_lookup"), "cuda.core",
     ("python", "small/cuda_core_e2e_link_load_lookup"), "speedup"),
    ("small: link + load + first lookup (in-process link)",
     ("rust", "small/e2e_link_load_lookup_in_process"), "cuda.core",
     ("python", "small/cuda_core_e2e_link_load_lookup"), "speedup"),
    ("small: link + load + first lookup, isolated, against cuda.core with "
     "`cuKernelGetFunction` (the same work)",
     ("rust", "small/e2e_link_load_lookup"), "cuda.core",
     ("python", "small/cuda_core_e2e_link_load_lookup_function"), "speedup"),
    ("small: link + load + first lookup, in-process, the same work",
     ("rust", "small/e2e_link_load_lookup_in_process"), "cuda.core",
     ("python", "small/cuda_core_e2e_link_load_lookup_function"), "speedup"),
    ("small: NVIDIA's floor (raw nvJitLink and driver calls from Rust) "
     "against cuda.core, the same work: the most any wrapper can reach",
     ("rust", "small/raw_e2e_link_load_lookup"), "cuda.core",
     ("python", "small/cuda_core_e2e_link_load_lookup_function"), "speedup"),
    ("small: link + load + first lookup, isolated, over the floor",
     ("rust", "small/e2e_link_load_lookup"), "raw calls (Rust)",
     ("rust", "small/raw_e2e_link_load_lookup"), "overhead"),
    ("small: link + load + first lookup, in-process, over the floor",
     ("rust", "small/e2e_link_load_lookup_in_process"), "raw calls (Rust)",
     ("rust", "small/raw_e2e_link_load_lookup"), "overhead"),
    ("small: the same, persistent link cache warm",
     ("rust", "small/e2e_link_load_lookup_cached"), "cuda.core (no cache)",
     ("python", "small/cuda_core_e2e_link_load_lookup"), "speedup"),
]
for _name in ("small", "big"):
    FIGURES += [
        (f"{_name}: load + get kernel",
         ("rust", f"{_name}/load_lookup"), "raw cuLibraryLoadData (Rust)",
         ("rust", f"{_name}/raw_load_lookup"), "overhead"),
        (f"{_name}: raw, with a 16 KiB JIT log buffer",
         ("rust", f"{_name}/raw_load_lookup_with_log"), "raw (Rust)",
         ("rust", f"{_name}/raw_load_lookup"), "overhead"),
        (f"{_name}: raw, with `cuCtxSynchronize` before the unload "
         "(what our unload did before it waited only after launches)",
         ("rust", f"{_name}/raw_load_lookup_synchronized"), "raw (Rust)",
         ("rust", f"{_name}/raw_load_lookup"), "overhead"),
        (f"{_name}: load + get kernel, binary preserved",
         ("rust", f"{_name}/load_lookup_preserved"), "raw (Rust)",
         ("rust", f"{_name}/raw_load_lookup"), "overhead"),
        (f"{_name}: cuda.core `ObjectCode.get_kernel` (no function, no unload)",
         ("rust", f"{_name}/load_lookup"), "cuda.core",
         ("python", f"{_name}/cuda_core_load_lookup"), "speedup"),
        (f"{_name}: cuda.core `get_kernel` + `cuKernelGetFunction` (the same work)",
         ("rust", f"{_name}/load_lookup"), "cuda.core",
         ("python", f"{_name}/cuda_core_load_lookup_function"), "speedup"),
        (f"{_name}: raw calls from Python (cuda.bindings)",
         ("rust", f"{_name}/raw_load_lookup"), "cuda.bindings",
         ("python", f"{_name}/bindings_raw_load_lookup"), "speedup"),
        (f"{_name}: cudarc `cuModuleLoadData` + function",
         ("rust", f"{_name}/load_lookup"), "cudarc",
         ("rust", f"{_name}/cudarc_module_load_lookup"), "speedup"),
        (f"{_name}: eager load of every kernel",
         ("rust", f"{_name}/load_eager_all_kernels"), None, None, "time"),
    ]
FIGURES.append(
    ("cached lookup (kernel + function)",
     ("rust", "cached_lookup"), "cuda.core `get_kernel`",
     ("python", "cuda_core_cached_lookup"), "speedup"))


def fmt_time(seconds):
    if seconds < 1e-6:
        return f"{seconds * 1e9:.0f} ns"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e3:.3f} ms"


def fmt_ratio(value, kind):
    if kind == "overhead":
        return f"{(value - 1) * 100:+.1f} %"
    if kind == "time":
        return fmt_time(value)
    if value >= 10:
        return f"{value:.0f}×"
    return f"{value:.2f}×" if value >= 0.1 else f"{value:.2g}×"


def quartiles(values):
    """(q1, median, q3) of the values, inclusive method."""
    if len(values) == 1:
        return values[0], values[0], values[0]
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, median, q3


def result_path(results, mode, round_, side):
    return os.path.join(results, f"{mode}-{round_:02d}-{side}.json")


def run_side(side, mode, out_path, log):
    """Runs one side's measure as a process; True when it succeeded."""
    env = dict(os.environ, CUDA_MODULE_LOADING=mode)
    if side == "rust":
        with open(out_path + ".tmp", "w") as out:
            code = subprocess.call(["./gpu-bench", "measure", DATA],
                                   stdout=out, stderr=log, env=env)
        if code == 0:
            os.replace(out_path + ".tmp", out_path)
        else:
            os.remove(out_path + ".tmp")
    else:
        code = subprocess.call(
            [sys.executable, "cuda_core_bench.py", "measure", DATA, out_path],
            stdout=log, stderr=log, env=env)
    log.flush()
    if code != 0:
        print(f"  {side} ({mode}) exited with {code}; see {RESULTS}/log.txt",
              file=sys.stderr)
    return code == 0


def probe():
    """Prints what the Python side links with, as JSON."""
    info = {}
    try:
        from cuda.bindings import nvjitlink
        info["nvjitlink_version"] = "%d.%d" % tuple(nvjitlink.version())
    except Exception as e:  # noqa: BLE001 - reported, not fatal
        info["nvjitlink_error"] = repr(e)
    try:
        from cuda.pathfinder import load_nvidia_dynamic_lib
        info["nvjitlink_path"] = load_nvidia_dynamic_lib("nvJitLink").abs_path
    except Exception as e:  # noqa: BLE001
        info["nvjitlink_path_error"] = repr(e)
    try:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import cuda_core_bench
        core = cuda_core_bench.import_core()
        info["cuda_core_version"] = getattr(core, "__version__", "?")
        core.Device(0).set_current()
        ptx = open(os.path.join(DATA, "small.ptx"), "rb").read()
        linker = cuda_core_bench.make_linker(
            core, [core.ObjectCode.from_ptx(ptx)],
            core.LinkerOptions(arch="sm_90"))
        # A property, then a classmethod (0.8), then which_backend().
        backend = getattr(linker, "backend", None) or getattr(linker, "which_backend")
        info["cuda_core_backend"] = str(backend() if callable(backend) else backend)
    except Exception as e:  # noqa: BLE001
        info["cuda_core_backend_error"] = repr(e)
    print(json.dumps(info))


def parse_cpulist(text):
    """`0-3,8` as {0, 1, 2, 3, 8}."""
    cpus = set()
    for part in text.strip().split(","):
        if "-" in part:
            first, last = part.split("-")
            cpus.update(range(int(first), int(last) + 1))
        elif part:
            cpus.add(int(part))
    return cpus


def pin_near_gpu():
    """Keeps this process and its children on the CPUs of GPU 0's NUMA
    node (those this process may use): a process of a pair landing on the
    other socket would be slower for reasons of its own. Returns what was
    done, for the report."""
    try:
        bus = subprocess.run(
            ["nvidia-smi", "-i", "0", "--query-gpu=pci.bus_id", "--format=csv,noheader"],
            capture_output=True, text=True, check=True).stdout.strip()
        # 00000000:19:00.0 in nvidia-smi, 0000:19:00.0 in sysfs.
        domain, rest = bus.split(":", 1)
        path = f"/sys/bus/pci/devices/{domain[-4:]}:{rest}".lower() + "/local_cpulist"
        local = parse_cpulist(open(path).read())
        allowed = os.sched_getaffinity(0)
        use = local & allowed
        if not use:
            return "not pinned: none of GPU 0's CPUs are ours"
        if use != allowed:
            os.sched_setaffinity(0, use)
        return f"pinned to the {len(use)} CPUs of GPU 0's node that this run may use"
    except Exception as e:  # noqa: BLE001 - pinning is an improvement, not a need
        return f"not pinned: {e!r}"


def machine():
    try:
        return subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, check=True).stdout.strip().splitlines()[0]
    except Exception:  # noqa: BLE001
        return "?"


def run(args):
    pairs, min_pairs, budget = 20, 10, 420.0
    own_nvjitlink, pin = False, True
    it = iter(args)
    for arg in it:
        if arg == "--pairs":
            pairs = int(next(it))
        elif arg == "--min-pairs":
            min_pairs = int(next(it))
        elif arg == "--budget":
            budget = float(next(it))
        elif arg == "--own-nvjitlink":
            own_nvjitlink = True
        elif arg == "--no-pin":
            pin = False
        else:
            sys.exit(f"gpu_pairs.py run: unknown argument {arg!r}\n\n{__doc__}")
    min_pairs = min(min_pairs, pairs)
    os.makedirs(RESULTS, exist_ok=True)
    for name in os.listdir(RESULTS):
        os.remove(os.path.join(RESULTS, name))
    started = time.monotonic()
    log = open(os.path.join(RESULTS, "log.txt"), "w")

    pinned = pin_near_gpu() if pin else "not pinned (--no-pin)"
    if subprocess.call(["./gpu-bench", "prepare", DATA], stdout=log, stderr=log) != 0:
        sys.exit(f"gpu-bench prepare failed; see {RESULTS}/log.txt")
    found = subprocess.run([sys.executable, os.path.abspath(__file__), "probe"],
                           capture_output=True, text=True)
    try:
        python_side = json.loads(found.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        python_side = {"probe_error": found.stderr.strip()[-500:]}
    if (not own_nvjitlink and "CUDA_LINK_NVJITLINK_PATH" not in os.environ
            and python_side.get("nvjitlink_path")
            and "nvjitlink" in python_side.get("cuda_core_backend", "").lower()):
        os.environ["CUDA_LINK_NVJITLINK_PATH"] = python_side["nvjitlink_path"]
        python_side["rust_side_uses_it"] = True
    with open(os.path.join(RESULTS, "machine.json"), "w") as out:
        json.dump({"gpu": machine(), "python_side": python_side, "cpus": pinned,
                   "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}, out)

    # One discarded run of each side: the first process after a while
    # pays for cold file and driver caches.
    warm = os.path.join(RESULTS, "warmup")
    if not (run_side("rust", "EAGER", warm + "-rust.json", log)
            and run_side("python", "EAGER", warm + "-python.json", log)):
        sys.exit(f"the warm-up run failed; see {RESULTS}/log.txt")
    for name in ("warmup-rust.json", "warmup-python.json"):
        os.remove(os.path.join(RESULTS, name))

    failed = 0
    rounds_started = time.monotonic()
    for round_ in range(1, pairs + 1):
        # ABBA: odd rounds run Rust first, even rounds Python first.
        order = ("rust", "python") if round_ % 2 else ("python", "rust")
        for mode in MODES:
            for side in order:
                if not run_side(side, mode, result_path(RESULTS, mode, round_, side), log):
                    failed += 1
        elapsed = time.monotonic() - started
        per_round = (time.monotonic() - rounds_started) / round_
        print(f"round {round_}/{pairs}: {elapsed:.0f} s", file=sys.stderr)
        if round_ >= min_pairs and round_ < pairs and elapsed + per_round > budget:
            print(f"stopping after {round_} rounds: the next would end past "
                  f"{budget:.0f} s", file=sys.stderr)
            break
    phases(log)
    log.close()
    report(RESULTS)
    if failed:
        sys.exit(f"{failed} runs failed; their pairs are left out")


def phases(log):
    """Each side's small link + load + lookup step by step, per mode
    (`gpu-phases` and `cuda_core_bench.py phases`): results/phases.txt."""
    if not os.path.exists("./gpu-phases"):
        return
    with open(os.path.join(RESULTS, "phases.txt"), "w") as out:
        for mode in MODES:
            env = dict(os.environ, CUDA_MODULE_LOADING=mode)
            out.write(f"\n### CUDA_MODULE_LOADING={mode}\n")
            out.flush()
            for command in (["./gpu-phases", DATA],
                            [sys.executable, "cuda_core_bench.py", "phases", DATA,
                             os.path.join(RESULTS, f"phases-{mode}-python.json")]):
                done = subprocess.run(command, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True)
                out.write(done.stderr)
                log.write(done.stderr)
                if command[0] == "./gpu-phases" and done.returncode == 0:
                    with open(os.path.join(RESULTS, f"phases-{mode}-rust.json"), "w") as f:
                        f.write(done.stdout)
    print(open(os.path.join(RESULTS, "phases.txt")).read(), file=sys.stderr)


def load_pairs(results, mode):
    """[(round, rust, python)] of the rounds where both sides succeeded."""
    rounds = {}
    for name in os.listdir(results):
        match = re.fullmatch(rf"{mode}-(\d+)-(rust|python)\.json", name)
        if match:
            with open(os.path.join(results, name)) as f:
                rounds.setdefault(int(match[1]), {})[match[2]] = json.load(f)
    return [(round_, sides["rust"], sides["python"])
            for round_, sides in sorted(rounds.items()) if len(sides) == 2]


def summarise(pairs):
    """{label: figures} over the pairs of one mode."""
    summary = {}
    for label, ours, ref_label, ref, kind in FIGURES:
        values, references, ratios = [], [], []
        for _, rust, python in pairs:
            sides = {"rust": rust, "python": python}
            mine = sides[ours[0]].get(ours[1])
            theirs = sides[ref[0]].get(ref[1]) if ref else None
            if not isinstance(mine, (int, float)) or (ref and not isinstance(theirs, (int, float))):
                continue
            values.append(mine)
            if kind == "time":
                ratios.append(mine)
            else:
                references.append(theirs)
                ratios.append(theirs / mine if kind == "speedup" else mine / theirs)
        if not ratios:
            continue
        q1, median, q3 = quartiles(ratios)
        summary[label] = {
            "kind": kind,
            "reference": ref_label,
            "processes": "one" if kind == "time" or ours[0] == ref[0] else "paired",
            "pairs": len(ratios),
            "ours_median_s": statistics.median(values),
            "reference_median_s": statistics.median(references) if references else None,
            "ratio_median": median,
            "ratio_q1": q1,
            "ratio_q3": q3,
            "ratio_min": min(ratios),
            "ratio_max": max(ratios),
        }
    return summary


def report(results=RESULTS):
    lines = []
    info = {}
    if os.path.exists(os.path.join(results, "machine.json")):
        info = json.load(open(os.path.join(results, "machine.json")))
    side = info.get("python_side", {})
    summaries = {}
    for mode in MODES:
        pairs = load_pairs(results, mode)
        if not pairs:
            continue
        rust, python = pairs[0][1], pairs[0][2]
        summary = summarise(pairs)
        summaries[mode] = summary
        lines.append(f"\n### CUDA_MODULE_LOADING={mode}: {len(pairs)} pairs, ABBA\n")
        backend = side.get("cuda_core_backend", "an unknown backend")
        if "nvjitlink_version" in side:
            backend += f", nvJitLink {side['nvjitlink_version']}"
        if "nvjitlink_path" in side:
            backend += f" ({side['nvjitlink_path']})"
        lines.append(
            f"{info.get('gpu', 'GPU unknown')}; {info.get('started', '?')}; cuda.core "
            f"{python.get('cuda_core_version', '?')} links with {backend}; cuda-link "
            f"links with nvJitLink {rust.get('nvjitlink', '?')}; processes "
            f"{info.get('cpus', 'not pinned')}.\n")
        lines.append("| measure | cuda-link (Rust) | reference | ratio, median of pairs "
                     "| interquartile | min – max | from |")
        lines.append("|---|---|---|---|---|---|---|")
        for label, _, _, _, kind in FIGURES:
            figure = summary.get(label)
            if figure is None:
                lines.append(f"| {label} | - | - | not measured | | | |")
                continue
            reference = (f"{figure['reference']} {fmt_time(figure['reference_median_s'])}"
                         if figure["reference_median_s"] is not None else "-")
            lines.append(
                f"| {label} | {fmt_time(figure['ours_median_s'])} | {reference} "
                f"| {fmt_ratio(figure['ratio_median'], kind)} "
                f"| {fmt_ratio(figure['ratio_q1'], kind)} – {fmt_ratio(figure['ratio_q3'], kind)} "
                f"| {fmt_ratio(figure['ratio_min'], kind)} – {fmt_ratio(figure['ratio_max'], kind)} "
                f"| {'one process' if figure['processes'] == 'one' else 'paired processes'} |")
    if not summaries:
        sys.exit(f"no complete pair in {results}")
    lines.append(
        "\nRatio: reference / cuda-link for × (above 1: cuda-link is faster), "
        "cuda-link / reference − 1 for %. Each pair's two figures come from one "
        "Rust process (one process) or from a Rust and a Python process run one "
        "right after the other (paired processes); eager load is a time, not a ratio.")
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(results, "table.md"), "w") as out:
        out.write(text + "\n")
    with open(os.path.join(results, "summary.json"), "w") as out:
        json.dump({"machine": info, "modes": summaries}, out, indent=1)


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "run":
        run(sys.argv[2:])
    elif command == "report":
        report(*sys.argv[2:3])
    elif command == "probe":
        probe()
    else:
        sys.exit(__doc__)
