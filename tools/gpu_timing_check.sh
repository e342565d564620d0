#!/usr/bin/env bash
# Issue 33's GPU check in one call: the timing tests with and without CUPTI, then the busy-thread
# table (bare events, gate, CUPTI in one process). Run from the repo root on the GPU machine with
# a bundle carried (default .device-lite: make-bundle's wheels without Qt, plus cupti-python and
# pyelftools).
set -u
source ${BUNDLE:-.device-lite}/activate.sh
export PYTHONPATH=.:$PYTHONPATH NUMBA_CACHE_DIR=$PWD/.numba-cache
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"

echo "== timing tests, no CUPTI"

GPU_EXPLORER_TIMING=gate python3 -m pytest -q -p no:cacheprovider tests/kernels/test_timing_gate.py --tb=short 2>&1 | grep -v Deprecation | tail -40
echo "== timing tests, CUPTI"
python3 -m pytest -q -p no:cacheprovider tests/kernels/test_timing_gate.py --tb=short 2>&1 | grep -v Deprecation | tail -40
echo "== busy thread"
python3 tools/busy_thread_bench.py --backend cuda --json "$OUT/busy.json" "$@" 2>&1 | tail -40
echo "== first frame"
python3 tools/first_frame_split.py --backend cuda --size 1920x1080 --top 30 2>&1 | tail -50
