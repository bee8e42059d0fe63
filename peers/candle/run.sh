#!/usr/bin/env bash
# On the GPU machine, in the bundle of `cargo xtask peer-candle`:
#   bash run.sh [EAGER] [LAZY] [probe]     (all three when none is named)
# runs every test executable of candle-core's two builds (candle's kernels
# from nvcc, and from cuda-build) in the named CUDA_MODULE_LOADING modes,
# and the probe of each build in ABBA order; then compare.py reports the
# passing sets, the probe's bitwise comparison and its GPU times.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
results="${RESULTS:-$here/results}"
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(EAGER LAZY probe)
mkdir -p "$results"
cd "$here"
[ -d bin ] || tar xJf bin.tar.xz
export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$results/gpu.txt"
# The tests read their data files (tests/test.npy...) from here.
cd "$here/candle-core"
for step in "${steps[@]}"; do
  # A step's results replace those of an earlier run of it.
  rm -f "$results/$step".*.txt "$results/exits.$step.txt"
  case "$step" in
    EAGER|LAZY)
      for variant in nvcc ours; do
        for test in "$here"/bin/*."$variant"; do
          name=$(basename "$test" ."$variant")
          [ "$name" = probe ] && continue
          CUDA_MODULE_LOADING=$step timeout 300 "$test" --test-threads 8 \
            > "$results/$step.$variant.$name.txt" 2>&1
          echo "$variant $name $?" >> "$results/exits.$step.txt"
        done
      done ;;
    probe)
      rm -rf "$results/probe"
      mkdir -p "$results/probe"
      round=0
      for variant in nvcc ours ours nvcc nvcc ours; do
        round=$((round + 1))
        "$here/bin/probe.$variant" "$results/probe/$variant" \
          > "$results/probe/$variant.$round.txt" 2>&1
        echo "$variant probe $?" >> "$results/exits.$step.txt"
      done ;;
    *)
      echo "run.sh: unknown step $step (EAGER, LAZY or probe)" >&2
      exit 2 ;;
  esac
done
python3 "$here/compare.py" "$results"
