"""The report of run.sh: candle-core's tests on the two builds of candle's
kernels (nvcc's, cuda-build's), per CUDA_MODULE_LOADING mode, and the
probe's outputs and GPU times. Exits 1 when the passing sets differ or an
output differs in a bit."""

import re
import struct
import sys
from collections import defaultdict
from pathlib import Path

results = Path(sys.argv[1])
LINE = re.compile(r"^test (\S+) \.\.\. (ok|FAILED|ignored)", re.M)
outcomes = defaultdict(dict)  # (mode, variant) -> {test: outcome}
for log in sorted(results.glob("*.*.*.txt")):
    mode, variant, binary = log.name[:-4].split(".", 2)
    text = log.read_text(errors="replace")
    for name, outcome in LINE.findall(text):
        outcomes[(mode, variant)][f"{binary}::{name}"] = outcome
    if "test result:" not in text:
        outcomes[(mode, variant)][f"{binary}::(did not finish)"] = "FAILED"

same = True
print("| mode | build | passed | failed | ignored | of them on CUDA (`_gpu`), passed |")
print("|---|---|---|---|---|---|")
for (mode, variant), tests in sorted(outcomes.items()):
    count = lambda o: sum(1 for v in tests.values() if v == o)
    gpu = sum(1 for t, v in tests.items() if t.endswith("_gpu") and v == "ok")
    print(f"| {mode} | {variant} | {count('ok')} | {count('FAILED')} | {count('ignored')} | {gpu} |")
for mode in sorted({m for m, _ in outcomes}):
    passed = {v: {t for t, o in outcomes[(mode, v)].items() if o == "ok"} for v in ("nvcc", "ours")}
    for a, b in (("nvcc", "ours"), ("ours", "nvcc")):
        only = sorted(passed[a] - passed[b])
        if only:
            same = False
            print(f"{mode}: pass with {a} only: {only}")
    failed = sorted(t for t, o in outcomes[(mode, "nvcc")].items() if o == "FAILED")
    if failed:
        print(f"{mode}: failing with both builds' kernels: {failed}")
print("passing sets:", "identical" if same else "DIFFER")

probe = results / "probe"
if (probe / "nvcc").is_dir() and (probe / "ours").is_dir():
    print("\n| op | output | nvcc µs (median of runs) | cuda-build µs | ratio |")
    print("|---|---|---|---|---|")
    times = defaultdict(lambda: defaultdict(list))
    for log in probe.glob("*.*.txt"):
        variant = log.name.split(".")[0]
        for line in log.read_text().splitlines():
            parts = line.split()
            if len(parts) == 3:
                times[parts[0]][variant].append(float(parts[1]))
    median = lambda xs: sorted(xs)[len(xs) // 2] if xs else float("nan")
    for output in sorted((probe / "nvcc").glob("*.bin")):
        theirs, ours = output.read_bytes(), (probe / "ours" / output.name).read_bytes()
        if theirs == ours:
            verdict = f"bitwise equal ({len(ours)} bytes)"
        else:
            same = False
            verdict = f"DIFFERS ({len(theirs)} vs {len(ours)} bytes)"
            if len(theirs) == len(ours) and len(ours) % 4 == 0:
                a = struct.unpack(f"<{len(ours) // 4}i", theirs)
                b = struct.unpack(f"<{len(ours) // 4}i", ours)
                diffs = [abs(x - y) for x, y in zip(a, b) if x != y]
                verdict += f": {len(diffs)} words, at most {max(diffs)} apart as ints"
        op = output.stem
        t_nvcc, t_ours = median(times[op]["nvcc"]), median(times[op]["ours"])
        print(f"| {op} | {verdict} | {t_nvcc:.1f} | {t_ours:.1f} | {t_ours / t_nvcc:.3f} |")
sys.exit(0 if same else 1)
