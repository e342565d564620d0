#!/usr/bin/env bash
# Whether huge-page-aligned host buffers (kernels/buffers.huge_page_empty) steady the CPU and
# pageable points the window and the headless runner measure: on two pinned cores, the window's
# CPU sweep at 2^20 (add, triad; as left alone and with 8 ms of Python a repaint) with
# GPU_EXPLORER_HUGE_PAGES=0 then 1; the window's CPU frame; the GPU window as left alone; the
# pageable copy pinned to one core.          bash tools/gpu_session_h.sh OUT   (bundle .device-mix)
set -u
FINAL=${1:?usage: gpu_session_h.sh OUT}; OUT=$FINAL/r; mkdir -p "$OUT"
source ${BUNDLE:-.device-mix}/activate.sh
export PYTHONPATH=.:$PYTHONPATH NUMBA_CACHE_DIR=$PWD/.numba-cache PYTHONUNBUFFERED=1
SECONDS=0
grep -h . /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag
q() { grep -v -e propagateSizeHints -e Fontconfig; }
cpus=$(lscpu -p=CPU,CORE | grep -v '^#' | sort -t, -k2,2n -u | head -2 | cut -d, -f1 | paste -sd,)
two="taskset -c $cpus"; echo "== two cores: CPUs $cpus"
export NUMBA_NUM_THREADS=2
for round in 1 2; do
  for hp in 0 1; do
    for how in "--tick-ms 0" "--busy-ms 8"; do
      for op in add triad; do
        echo "-- huge pages $hp, $op $how, round $round"
        GPU_EXPLORER_HUGE_PAGES=$hp timeout 60 $two python3 tools/window_vs_bench.py --backend cpu \
          --op $op --max-exp 20 $how --out "$OUT/w-$hp-$op-${how// /}-$round" 2>&1 | q | grep -E "kernel"
      done
    done
  done
  echo "(${SECONDS}s)"; [ $SECONDS -gt 200 ] && break
done
for hp in 0 1; do
  echo "-- frame, huge pages $hp, repaints alone"
  GPU_EXPLORER_HUGE_PAGES=$hp timeout 60 $two python3 tools/window_frame_vs_bench.py --backend cpu \
    --size 800x600 --iters 500 --frames 7 --busy-ms 0 2>&1 | q | tail -3
done
unset NUMBA_NUM_THREADS
echo "== (${SECONDS}s)"
for hp in 0 1; do
  GPU_EXPLORER_HUGE_PAGES=$hp timeout 40 taskset -c 2 python3 tools/pageable_numa.py 2>&1 | tail -1 | sed "s/^/huge pages $hp: /"
done
GPU_EXPLORER_HUGE_PAGES=1 timeout 120 python3 tools/window_vs_bench.py --backend cuda --op add --max-exp 24 \
  --tick-ms 0 --out "$OUT/window-cuda-add-hp" 2>&1 | q | tail -23
echo "== done (${SECONDS}s)"
tar -C "$FINAL" -czf "$FINAL/results.tgz" r && rm -rf "$OUT"
