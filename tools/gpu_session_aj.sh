#!/usr/bin/env bash
# Stop 50, issue 36 on two H200s at once: GPU 1 benches this tree's kernels against 9f38667's (the
# tree the issue was filed on; tools/gpu_ab.sh, a copy in .ab-base9f) while GPU 0 runs the ship's
# 1080p re-render past 1e-300 against the Mandelbrot's, then the GPU tests of everything issue 36
# changed since its last GPU run, as far as the time goes.
#   git archive 9f38667 kernels cli main.py services explorer | tar -x -C .ab-base9f
#   bash tools/device_head.sh pack; carry .device-av .device-head.tgz .numba-cache .ab-base9f
set -u
OUT=${1:?usage: gpu_session_aj.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
SECONDS=0
bash tools/device_head.sh unpack
source .device-av/activate.sh
export PYTHONPATH=.:$PYTHONPATH NUMBA_CACHE_DIR=$PWD/.numba-cache
{ date -u; nvidia-smi --query-gpu=index,name --format=csv,noheader; echo "cores $(nproc)"; } > "$OUT/device.txt"
( export CUDA_VISIBLE_DEVICES=1; ROUNDS=${ROUNDS:-2} REPEATS=${REPEATS:-3} \
    bash tools/gpu_ab.sh "$OUT/ab" .ab-base9f mandelbrot-full deep-1e100 deep-1e1000 > "$OUT/ab.txt" 2>&1 ) &
ab=$!
export CUDA_VISIBLE_DEVICES=0
timeout 150 python3 tools/ship_vs_mandelbrot.py --backend cuda --size 1920x1080 --place p662 --repeats 3 \
  > "$OUT/ship.txt" 2>&1
echo "ship_vs_mandelbrot rc=$? (${SECONDS}s)"; tail -8 "$OUT/ship.txt"
for f in test_mandelbrot_gpu test_warm_timer test_overlays test_overlays_deep test_float32_gpu test_burning_ship_gpu \
         test_deep_ship_gpu test_expmap_one_launch test_timing test_frame_launches test_deep_gpu; do
  [ -f "tests/kernels/$f.py" ] || { echo "no $f"; continue; }
  left=$((${TESTS_END:-540} - SECONDS)); [ "$left" -lt 20 ] && { echo "no time left for $f"; continue; }
  timeout "$left" python3 -m pytest -q -p no:cacheprovider "tests/kernels/$f.py" > "$OUT/$f.txt" 2>&1
  echo "$f rc=$? (${SECONDS}s): $(tail -1 "$OUT/$f.txt")"
done
left=$(( 575 - SECONDS )); [ "$left" -gt 0 ] && timeout "$left" bash -c "wait $ab" 2>/dev/null; kill $ab 2>/dev/null
cat "$OUT/ab.txt"
python3 tools/bench_diff.py "$OUT"/ab/new-*.json -- "$OUT"/ab/base-*.json > "$OUT/ab-diff.txt" 2>&1
tail -15 "$OUT/ab-diff.txt"
tar -C . -czf "$OUT/numba-cache.tgz" .numba-cache
echo "done in ${SECONDS}s"
