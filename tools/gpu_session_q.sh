#!/usr/bin/env bash
# Issue 36's Burning Ship on the GPU and issue 37's keyframe streams (stop 47): the GPU tests of
# the formula (deep ship against MPFR and its CPU twin, the float64 ship's kernels, the Mandelbrot
# deep and exact tests), of posters, bands and keyframes; the ship's 1080p re-render against the
# Mandelbrot's at the same places (tools/ship_vs_mandelbrot.py); keyframes on 1, 2 and 4 streams
# (tools/keyframe_profile.py --streams, which checks their values bit for bit).
#   source .device-av/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_session_q.sh "$OUT/q"
set -u
OUT=${1:?usage: gpu_session_q.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
export NUMBA_CACHE_DIR=$PWD/.numba-cache
SECONDS=0
nvidia-smi --query-gpu=index,name --format=csv,noheader
timeout 280 python3 -m pytest -q -p no:cacheprovider -rfs -m gpu tests/kernels tests/cli \
  -k "ship or formula or burning or deep_exact or deep_gpu or mandelbrot_gpu or poster or expmap" \
  > "$OUT/tests.txt" 2>&1
echo "gpu tests rc=$? (${SECONDS}s)"; grep -E "passed|failed|FAILED|^ERROR" "$OUT/tests.txt" | tail -12
timeout 120 python3 tools/ship_vs_mandelbrot.py --backend cuda --size 1920x1080 --repeats 5 \
  > "$OUT/ship.txt" 2>&1
echo "ship vs mandelbrot rc=$? (${SECONDS}s)"; cat "$OUT/ship.txt"
timeout 150 python3 tools/keyframe_profile.py --backend cuda --streams 1,2,4 --at 0.25,0.5,0.75,0.98 \
  --each 4 --profile 0 > "$OUT/streams.txt" 2>&1
echo "keyframe streams rc=$? (${SECONDS}s)"; grep -vE "^ +[0-9/]+ +[0-9.]+ " "$OUT/streams.txt" | tail -30 | cut -c1-220
echo "session done in ${SECONDS}s"
