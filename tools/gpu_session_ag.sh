#!/usr/bin/env bash
# For the next device call (issue 36 after stop 49): the GPU tests of everything stop 49 changed
# without a GPU (the overlay pipeline, the float32 target's hook, the renderer split, the ship's
# BLA in the extended loop, the package layout), then the ship's 1080p re-render past 1e-300
# against the Mandelbrot's minibrot at the same width (SHIP_662), in one call.
#   bash tools/device_head.sh pack; carry .device-av .device-head.tgz (and .numba-cache if warm)
#   bash tools/gpu_session_ag.sh "$OUT/ag"
set -u
OUT=${1:?usage: gpu_session_ag.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
bash tools/device_head.sh unpack
source .device-av/activate.sh
export PYTHONPATH=.:$PYTHONPATH NUMBA_CACHE_DIR=$PWD/.numba-cache
SECONDS=0
for f in test_mandelbrot_gpu test_float32_gpu test_overlays test_overlays_deep test_burning_ship_gpu \
         test_deep_gpu test_deep_ship_gpu test_expmap_gpu test_expmap_one_launch; do
  left=$((${TESTS_S:-420} - SECONDS)); [ "$left" -lt 15 ] && { echo "no time left for $f"; continue; }
  timeout "$left" python3 -m pytest -q -p no:cacheprovider "tests/kernels/$f.py" > "$OUT/$f.txt" 2>&1
  echo "$f rc=$? (${SECONDS}s): $(tail -1 "$OUT/$f.txt")"
done
timeout 150 python3 tools/ship_vs_mandelbrot.py --backend cuda --size 1920x1080 --place p662 --repeats 3 \
  > "$OUT/ship.txt" 2>&1
echo "ship_vs_mandelbrot rc=$? (${SECONDS}s)"; tail -8 "$OUT/ship.txt"
tar -C .  -czf "$OUT/numba-cache.tgz" .numba-cache
echo "done in ${SECONDS}s"
