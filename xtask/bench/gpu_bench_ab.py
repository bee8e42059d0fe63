"""Two builds of `gpu-bench` against each other on one GPU machine.

Usage, in a bench-gpu bundle folder (`cargo xtask bench-gpu`), with a
second `gpu-bench` built from the other tree and copied in:

    python3 gpu_bench_ab.py OLD NEW [ROUNDS]

Runs `OLD measure data` and `NEW measure data` as whole processes,
alternating ABBA, ROUNDS rounds (default 10) per loading mode, and prints,
per side, the median of each process's load + get kernel over its own raw
`cuLibraryLoadData` calls (one process's two figures, so the machine's
speed from process to process cancels) with its interquartile range.
"""

import json
import os
import statistics
import subprocess
import sys

KEYS = ("small/load_lookup", "small/load_lookup_preserved", "big/load_lookup")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    sides = {"old": sys.argv[1], "new": sys.argv[2]}
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    subprocess.check_call([sides["new"], "prepare", "data"], stderr=subprocess.DEVNULL)
    for mode in ("EAGER", "LAZY"):
        env = dict(os.environ, CUDA_MODULE_LOADING=mode)
        results = {"old": [], "new": []}
        for round_ in range(rounds):
            order = ("old", "new") if round_ % 2 == 0 else ("new", "old")
            for side in order:
                out = subprocess.run([sides[side], "measure", "data"], env=env,
                                     capture_output=True, text=True, check=True).stdout
                results[side].append(json.loads(out))
        print(f"== {mode}: {rounds} processes per side, ABBA")
        for key in KEYS:
            raw = key.split("/")[0] + "/raw_load_lookup"
            for side in ("old", "new"):
                over = [100 * (r[key] / r[raw] - 1) for r in results[side]]
                q1, median, q3 = statistics.quantiles(over, n=4, method="inclusive")
                time = statistics.median(r[key] for r in results[side]) * 1e6
                print(f"{key:30} {side}: {time:9.1f} µs, over raw {median:+.1f} % "
                      f"(IQR {q1:+.1f} to {q3:+.1f})")


if __name__ == "__main__":
    main()
