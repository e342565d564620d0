#!/usr/bin/env bash
# The Burning Ship off the real axis on the GPU (stop 47): its 1080p re-render at every place of
# tools/ship_vs_mandelbrot.py (locations.SHIP_447 added: its BLA holds there), and the deep bench's
# Mandelbrot re-renders on the same card.
#   source .device-av/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_session_t.sh "$OUT/t"
set -u
OUT=${1:?usage: gpu_session_t.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
export NUMBA_CACHE_DIR=$PWD/.numba-cache
SECONDS=0
nvidia-smi --query-gpu=index,name --format=csv,noheader
timeout 150 python3 tools/ship_vs_mandelbrot.py --backend cuda --size 1920x1080 --repeats 5 \
  > "$OUT/ship.txt" 2>&1
echo "ship vs mandelbrot rc=$? (${SECONDS}s)"; cat "$OUT/ship.txt"
timeout 100 python3 -m kernels.mandelbrot.benches.bench --backend cuda --repeats 5 > "$OUT/deep.txt" 2>&1
echo "deep bench rc=$? (${SECONDS}s)"; grep -E "re-render  " "$OUT/deep.txt" | cut -c1-160
echo "session done in ${SECONDS}s"
