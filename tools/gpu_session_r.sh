#!/usr/bin/env bash
# Issue 36's "kernel times within noise of today's on the same card in one call" (stop 47): this
# tree's Mandelbrot workloads against stop 46's (BASE = git archive 77b17b2 kernels cli main.py
# services explorer, in .ab-base), new and base alternating (tools/gpu_ab.sh); then the GPU tests
# of spreading and bands that the first call's time limit cut short.
#   source .device-av/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_session_r.sh "$OUT/r"
set -u
OUT=${1:?usage: gpu_session_r.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
export NUMBA_CACHE_DIR=$PWD/.numba-cache
SECONDS=0
nvidia-smi --query-gpu=index,name --format=csv,noheader
ROUNDS=2 REPEATS=5 timeout 400 bash tools/gpu_ab.sh "$OUT/ab" .ab-base mandelbrot-full \
  mandelbrot-deep-1e100 mandelbrot-deep-1e1000
echo "ab done (${SECONDS}s)"
python3 tools/bench_diff.py "$OUT"/ab/new-*.json -- "$OUT"/ab/base-*.json > "$OUT/ab.txt" 2>&1
cat "$OUT/ab.txt" | tail -30 | cut -c1-220
timeout 150 python3 -m pytest -q -p no:cacheprovider -rfs -m gpu tests/kernels tests/cli \
  -k "spread or band" > "$OUT/tests.txt" 2>&1
echo "gpu tests rc=$? (${SECONDS}s)"; grep -E "passed|failed|FAILED|^ERROR" "$OUT/tests.txt" | tail -12
echo "session done in ${SECONDS}s"
