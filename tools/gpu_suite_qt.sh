#!/usr/bin/env bash
# The Qt leg on the GPU machine (Qt bundle .device-qt: no PyCUDA or gmpy2): the window's GPU tests,
# the roofline after a sweep and a frame of every view, and the throughput sweep against the
# headless runner while the window repaints. Pictures and JSON go to $OUT.
set -u
source ${BUNDLE:-.device-qt}/activate.sh
export PYTHONPATH=.:$PYTHONPATH NUMBA_CACHE_DIR=$PWD/.numba-cache
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
t0=$(date +%s)
python3 -m pytest -q -p no:cacheprovider -m gpu tests/explorer tests/faults --tb=short 2>&1 \
  | grep -E "^E |FAILED|passed|failed|^tests.*:[0-9]+:" | head -40
echo "window gpu tests: $(( $(date +%s) - t0 )) s"
export GPU_EXPLORER_CACHE_DIR=$(mktemp -d)
python3 tools/roofline_shot.py "$OUT/roofline_after.png" --backend cuda --sweep --window "$OUT/window_after.png" 2>&1 | grep -v propagateSizeHints | tail -15
python3 tools/window_vs_bench.py --backend cuda --op add --max-exp 24 --out "$OUT/window-add" 2>&1 | grep -v propagateSizeHints | tail -24
