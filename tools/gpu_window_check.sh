#!/usr/bin/env bash
# Issue 33's window check on the GPU machine: the throughput view's sweep driven offscreen while
# the GUI thread repaints, against the headless runner at N = 2^24, for every mode. Carry a Qt
# bundle (default .device-qt: make-bundle's, without PyCUDA and gmpy2 to stay under 64 MiB).
set -u
source ${BUNDLE:-.device-qt}/activate.sh
export PYTHONPATH=.:$PYTHONPATH NUMBA_CACHE_DIR=$PWD/.numba-cache
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for op in add triad; do
  python3 tools/window_vs_bench.py --backend cuda --op $op --max-exp 24 --out "$OUT/window-$op" "$@" 2>&1 | grep -v propagateSizeHints | tail -30
done
