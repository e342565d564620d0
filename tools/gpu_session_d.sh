#!/usr/bin/env bash
# One Qt call on the GPU machine (Qt bundle .device-qt), most wanted first, each part timed and
# capped so that what ran comes back: issue 33's window sweep against the headless runner (add and
# triad, every implementation and mode, the headless figure measured 3 times for its spread), the
# roofline after a sweep and a frame of every view, issue 39's CPU checks on two pinned cores
# (tools/gpu_issue39.sh's CPU part), then the window's GPU tests.   bash tools/gpu_session_d.sh OUT
set -u
FINAL=${1:?usage: gpu_session_d.sh OUT}; OUT=$FINAL/r; mkdir -p "$OUT"
source ${BUNDLE:-.device-qt}/activate.sh
export PYTHONPATH=.:$PYTHONPATH NUMBA_CACHE_DIR=$PWD/.numba-cache PYTHONUNBUFFERED=1
SECONDS=0
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  lscpu | grep -m1 "Model name"; } 2>&1 | tee "$OUT/device.txt"
q() { grep -v propagateSizeHints; }
for op in add triad; do
  timeout 150 python3 tools/window_vs_bench.py --backend cuda --op $op --max-exp 24 \
    --out "$OUT/window-cuda-$op" 2>&1 | q > "$OUT/window-cuda-$op.txt"
  echo "== window sweep $op rc=$? (${SECONDS}s)"; tail -14 "$OUT/window-cuda-$op.txt"
done
timeout 90 python3 tools/window_frame_vs_bench.py --backend cuda --size 1024x768 --iters 4000 \
  --frames 7 --json "$OUT/frame-cuda.json" 2>&1 | q | tail -4
echo "== window frame (${SECONDS}s)"
export GPU_EXPLORER_CACHE_DIR=$(mktemp -d)
timeout 120 python3 tools/roofline_shot.py "$OUT/roofline.png" --backend cuda --sweep 2>&1 | q | tail -8
echo "== roofline (${SECONDS}s)"
unset GPU_EXPLORER_CACHE_DIR
cpus=$(lscpu -p=CPU,CORE | grep -v '^#' | sort -t, -k2,2n -u | head -2 | cut -d, -f1 | paste -sd,)
two="taskset -c $cpus"; echo "== two cores: CPUs $cpus"
export NUMBA_NUM_THREADS=2
for n in 12 16 20; do
  timeout 60 $two python3 tools/busy_thread_bench.py --backend cpu --log2n $n --no-frames \
    --json "$OUT/busy-cpu-$n.json" 2>&1 | grep -E "cpu-numba|numpy"
done
for op in add triad; do
  timeout 90 $two python3 tools/window_vs_bench.py --backend cpu --op $op --max-exp 20 \
    --out "$OUT/window-cpu-$op" 2>&1 | q | tail -5
done
timeout 90 $two python3 tools/window_frame_vs_bench.py --backend cpu --size 800x600 --iters 500 \
  --frames 7 --json "$OUT/frame-cpu.json" 2>&1 | q | tail -4
unset NUMBA_NUM_THREADS
echo "== issue 39 done (${SECONDS}s)"
timeout $(( 530 - SECONDS > 30 ? 530 - SECONDS : 30 )) python3 -m pytest -q -p no:cacheprovider -m gpu \
  tests/explorer tests/faults --tb=short 2>&1 | grep -E "^E |FAILED|passed|failed|^tests.*:[0-9]+:" | head -30
echo "== window GPU tests (${SECONDS}s)"
# the device tool brings back 8 files: three pictures and one archive of the rest
for f in window-cuda-add.png roofline.png window-cpu-add.png; do [ -f "$OUT/$f" ] && mv "$OUT/$f" "$FINAL/"; done
tar -C "$FINAL" -czf "$FINAL/results.tgz" r && rm -rf "$OUT"
