#!/usr/bin/env bash
# Issue 22's overlay target on one GPU, in one device call (about 3-4 minutes), from the
# repository root with the GPU environment active (as for tools/gpu_run.sh):
#   PYTHONPATH=.:$PYTHONPATH bash tools/gpu_overlay_check.sh OUTDIR [BASE_DIR]
# 1. the overlay bench at 1080p, 20 rounds interleaved (target: every overlay at most 15 % over
#    off in GPU time and in the frame's wall time; aim <= 10 %), with where the GPU time goes
# 2. the overlay GPU tests (float64 and deep)
# 3. the off path unchanged: kernel fingerprints (registers, PTX instruction counts) of the
#    seahorse and deep 1e-100 bench workloads, compiled afresh in this tree and in BASE_DIR (a copy
#    of the base commit's kernels/: git archive REV kernels | tar -x -C BASE_DIR; without it, made
#    here from $OVERLAY_BASE_REV, default main's 3562a75, where git history is at hand), then
#    compared: every kernel identical, none only in one tree.
set -u
out=${1:?usage: gpu_overlay_check.sh OUTDIR [BASE_DIR]}
base=${2:-}
mkdir -p "$out"
out=$(cd "$out" && pwd)
export PYTHONUNBUFFERED=1
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$out/device.txt" 2>&1
cat "$out/device.txt"

echo "== overlay bench (1920x1080, 20 rounds; gpu ms and wall ms against off)"
timeout 150 python3 tools/overlay_bench.py --backend cuda --repeats 20 \
  --json "$out/overlay_bench.json" > "$out/overlay_bench.txt" 2>&1
echo "rc=$? (${SECONDS}s)"
grep -v "^# .*gpu ms by part" "$out/overlay_bench.txt" | grep -E "^#|^float64|^deep|^frame|Error" | tail -14
grep "^# float64.*gpu ms by part" "$out/overlay_bench.txt"

echo "== overlay GPU tests"
timeout 100 python3 -m pytest -m gpu -q -p no:cacheprovider -ra tests/kernels/test_overlays.py \
  tests/kernels/test_overlays_deep.py > "$out/tests.log" 2>&1
echo "rc=$? (${SECONDS}s)"; grep -E "passed|failed|FAILED|^ERROR" "$out/tests.log" | tail -8

echo "== off path: kernel fingerprints, this tree against the base"
if [ -z "$base" ] && git rev-parse --git-dir > /dev/null 2>&1; then
  base="$out/base-tree"; mkdir -p "$base"
  git archive "${OVERLAY_BASE_REV:-3562a75}" kernels | tar -x -C "$base" || base=""
fi
workloads=mandelbrot-seahorse,mandelbrot-deep-1e100
if [ -z "$base" ]; then
  echo "no BASE_DIR and no git history here: fingerprinting this tree only ($out/fp-new.json)"
fi
for tree in new base; do
  dir=$PWD; [ "$tree" = base ] && dir=$base
  [ -z "$dir" ] && continue
  left=$((230 - SECONDS)); [ $left -lt 20 ] && { echo "fingerprint $tree skipped: time"; continue; }
  # an empty cache: every kernel compiled here, device functions included, in both trees alike
  rm -rf "$out/cache-$tree"; mkdir -p "$out/cache-$tree"
  NUMBA_CACHE_DIR="$out/cache-$tree" timeout $left python3 tools/kernel_fingerprint.py \
    --tree "$dir" --workloads $workloads --json "$out/fp-$tree.json" > "$out/fp-$tree.txt" 2>&1
  echo "$tree: rc=$? $(tail -1 "$out/fp-$tree.txt") (${SECONDS}s)"
  rm -rf "$out/cache-$tree"
done
if [ -s "$out/fp-new.json" ] && [ -s "$out/fp-base.json" ]; then
  python3 tools/fingerprint_diff.py "$out/fp-new.json" "$out/fp-base.json" | tail -12
fi
echo "done in ${SECONDS}s"
