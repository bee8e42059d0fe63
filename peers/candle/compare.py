"""The report of run.sh: candle-core's tests on the two builds of candle's
kernels (nvcc's, cuda-build's), per CUDA_MODULE_LOADING mode, and the
probe's outputs and GPU times. Exits 1 when the passing sets differ, a
build ran no test or passed none, a test executable stopped without its
summary, or a probe output differs in a bit or is missing."""

import re
import struct
import sys
from collections import defaultdict
from pathlib import Path

results = Path(sys.argv[1])
# `test_device!`'s CUDA variants: `zeros_gpu`, and a few `..._cuda`.
CUDA_SUFFIXES = ("_gpu", "_cuda")
LINE = re.compile(r"^test (\S+) \.\.\. (ok|FAILED|ignored)", re.M)
outcomes = defaultdict(dict)  # (mode, variant) -> {test: outcome}
for log in sorted(results.glob("*.*.*.txt")):
    mode, variant, binary = log.name[:-4].split(".", 2)
    text = log.read_text(errors="replace")
    for name, outcome in LINE.findall(text):
        outcomes[(mode, variant)][f"{binary}::{name}"] = outcome
    if "test result:" not in text:
        outcomes[(mode, variant)][f"{binary}::(did not finish)"] = "FAILED"

good = True
modes = sorted({m for m, _ in outcomes})
print("| mode | build | passed | failed | ignored | of them on CUDA (`_gpu`, `_cuda`), passed |")
print("|---|---|---|---|---|---|")
for mode in modes:
    for variant in ("nvcc", "ours"):
        tests = outcomes.get((mode, variant), {})
        count = lambda o: sum(1 for v in tests.values() if v == o)
        gpu = sum(1 for t, v in tests.items() if t.endswith(CUDA_SUFFIXES) and v == "ok")
        print(f"| {mode} | {variant} | {count('ok')} | {count('FAILED')} | {count('ignored')} | {gpu} |")
        if count("ok") == 0 or gpu == 0:
            good = False
            print(f"{mode} {variant}: no test passed on CUDA: nothing was compared")
for mode in modes:
    passed = {v: {t for t, o in outcomes[(mode, v)].items() if o == "ok"} for v in ("nvcc", "ours")}
    for a, b in (("nvcc", "ours"), ("ours", "nvcc")):
        only = sorted(passed[a] - passed[b])
        if only:
            good = False
            print(f"{mode}: pass with {a} only: {only}")
    failing = lambda v: {t for t, o in outcomes[(mode, v)].items() if o == "FAILED"}
    both = sorted(failing("nvcc") & failing("ours"))
    if both:
        print(f"{mode}: failing with both builds' kernels: {both}")
    if any(t.endswith("(did not finish)") for v in ("nvcc", "ours") for t in failing(v)):
        good = False
print("passing sets:", "identical" if good else "DIFFER or incomplete")

probe = results / "probe"
if probe.is_dir():
    print("\n| op | output | nvcc µs (median of runs) | cuda-build µs | ratio |")
    print("|---|---|---|---|---|")
    times = defaultdict(lambda: defaultdict(list))
    for log in probe.glob("*.*.txt"):
        variant = log.name.split(".")[0]
        for line in log.read_text(errors="replace").splitlines():
            parts = line.split()
            try:
                times[parts[0]][variant].append(float(parts[1]))
            except (IndexError, ValueError):
                pass
    median = lambda xs: sorted(xs)[len(xs) // 2] if xs else float("nan")
    outputs = sorted({p.name for v in ("nvcc", "ours") for p in (probe / v).glob("*.bin")})
    if not outputs:
        good = False
        print("no probe output: the probes failed (see probe/*.txt)")
    for name in outputs:
        theirs, ours = probe / "nvcc" / name, probe / "ours" / name
        if not (theirs.is_file() and ours.is_file()):
            good = False
            verdict = "MISSING from " + ("ours" if theirs.is_file() else "nvcc")
        elif theirs.read_bytes() == ours.read_bytes():
            verdict = f"bitwise equal ({ours.stat().st_size} bytes)"
        else:
            good = False
            a, b = theirs.read_bytes(), ours.read_bytes()
            verdict = f"DIFFERS ({len(a)} vs {len(b)} bytes)"
            if len(a) == len(b) and len(a) % 4 == 0:
                x = struct.unpack(f"<{len(a) // 4}i", a)
                y = struct.unpack(f"<{len(b) // 4}i", b)
                diffs = [abs(p - q) for p, q in zip(x, y) if p != q]
                verdict += f": {len(diffs)} words, at most {max(diffs)} apart as ints"
        op = name[:-4]
        t_nvcc, t_ours = median(times[op]["nvcc"]), median(times[op]["ours"])
        print(f"| {op} | {verdict} | {t_nvcc:.1f} | {t_ours:.1f} | {t_ours / t_nvcc:.3f} |")
sys.exit(0 if good else 1)
