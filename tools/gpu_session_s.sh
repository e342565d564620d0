#!/usr/bin/env bash
# The stop's last device call (stop 47): the Burning Ship's GPU tests after its extended loop kept
# δ a double down to 2^-900, its 1080p re-render against the Mandelbrot's at the same places
# (tools/ship_vs_mandelbrot.py), and the deep bench's Mandelbrot re-renders on the same card (the
# Mandelbrot's at the same depths).
#   source .device-av/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_session_s.sh "$OUT/s"
set -u
OUT=${1:?usage: gpu_session_s.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
export NUMBA_CACHE_DIR=$PWD/.numba-cache
SECONDS=0
nvidia-smi --query-gpu=index,name --format=csv,noheader
timeout 200 python3 -m pytest -q -p no:cacheprovider -rfs -m gpu tests/kernels \
  -k "ship or burning" > "$OUT/tests.txt" 2>&1
echo "gpu tests rc=$? (${SECONDS}s)"; grep -E "passed|failed|FAILED|^ERROR" "$OUT/tests.txt" | tail -6
timeout 150 python3 tools/ship_vs_mandelbrot.py --backend cuda --size 1920x1080 --repeats 5 \
  > "$OUT/ship.txt" 2>&1
echo "ship vs mandelbrot rc=$? (${SECONDS}s)"; cat "$OUT/ship.txt"
timeout 120 python3 -m kernels.mandelbrot.benches.bench --backend cuda --repeats 5 > "$OUT/deep.txt" 2>&1
echo "deep bench rc=$? (${SECONDS}s)"; grep -E "re-render|first frame" "$OUT/deep.txt" | cut -c1-160
echo "session done in ${SECONDS}s"
