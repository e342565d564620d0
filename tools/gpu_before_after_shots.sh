#!/usr/bin/env bash
# Issue 33's pictures: the throughput view and the roofline after a sweep on the GPU, timed the old
# way (bare CUDA events, GPU_EXPLORER_TIMING=events) and the new (auto: CUPTI, else the gate), each
# while the GUI thread repaints (tools/window_vs_bench.py). Qt bundle (.device-qt). Output in $OUT.
set -u
source ${BUNDLE:-.device-qt}/activate.sh
export PYTHONPATH=.:$PYTHONPATH NUMBA_CACHE_DIR=$PWD/.numba-cache
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
for how in events auto; do
  export GPU_EXPLORER_CACHE_DIR=$(mktemp -d) GPU_EXPLORER_TIMING=$how
  python3 tools/window_vs_bench.py --backend cuda --op add --max-exp 24 --out "$OUT/throughput-$how" 2>&1 \
    | grep -v propagateSizeHints | tail -26
  python3 tools/roofline_shot.py "$OUT/roofline-$how.png" --backend cuda --sweep 2>&1 | grep -v propagateSizeHints | head -4
done
