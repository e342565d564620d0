#!/usr/bin/env bash
# One device call on two GPUs (stop 46): the GPU tests the buffer pool's views touch, where a
# keyframe's time goes now (issue 37), the busy-thread check owed since stop 45 (issue 33's), a
# 16384² poster of KF's 1e1086 as a whole command on one GPU and on two (issue 38), and the deep
# bench's first frames in five separate processes (issue 38).
#   source .device-av/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_session_j.sh "$OUT/j"
set -u
OUT=${1:?usage: gpu_session_j.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
export NUMBA_CACHE_DIR=$PWD/.numba-cache
SECONDS=0
{ date -u; nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader; echo "cores $(nproc)"; } \
  | tee "$OUT/device.txt"
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/kernels/test_buffers.py \
  tests/kernels/test_expmap_gpu.py tests/kernels/test_deep_gpu.py tests/cli/test_poster.py \
  > "$OUT/tests.txt" 2>&1
echo "tests rc=$? (${SECONDS}s)"; grep -E "passed|failed|FAILED|^ERROR" "$OUT/tests.txt" | tail -4
timeout 60 python3 tools/keyframe_profile.py --backend cuda --each 2 --profile 4 --top 25 \
  > "$OUT/profile.txt" 2>&1
echo "profile rc=$? (${SECONDS}s)"; sed -n 1,10p "$OUT/profile.txt" | cut -c1-200
timeout 80 python3 tools/busy_thread_bench.py --backend cuda --json "$OUT/busy.json" > "$OUT/busy.txt" 2>&1
echo "busy rc=$? (${SECONDS}s)"; tail -14 "$OUT/busy.txt" | cut -c1-160
P="python3 tools/startup_profile.py --backend cuda --size 16384x16384 --location resources/kf-1e1086.kfr --out /tmp/poster.npy --runs 2 --top 5"
timeout 60 python3 main.py --render mandelbrot --size 1024x1024 --backend cuda --location resources/kf-1e1086.kfr \
  --out /tmp/first.png > "$OUT/first.txt" 2>&1; echo "first (reference to disk) rc=$? (${SECONDS}s)"
for g in 0 all; do
  timeout 100 $P --json "$OUT/poster-$g.json" -- --gpus $g > "$OUT/poster-$g.txt" 2>&1
  echo "poster --gpus $g rc=$? (${SECONDS}s): $(grep -m1 'whole command' "$OUT/poster-$g.txt")"
done
for i in 1 2 3 4 5; do
  timeout 40 python3 -m kernels.mandelbrot.benches.bench --backend cuda --repeats 2 --json "$OUT/deep-$i.json" \
    > "$OUT/deep-$i.txt" 2>&1
  echo "deep bench call $i rc=$? (${SECONDS}s)"; [ $i = 1 ] && grep -E "^deep" "$OUT/deep-1.txt" | head -3 | cut -c1-120
done
grep -h -E "^deep-1e[0-9]+ +first" "$OUT"/deep-*.txt | cut -c1-120
echo "session done in ${SECONDS}s"
