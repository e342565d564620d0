#!/usr/bin/env bash
# The session's last GPU call (Qt bundle without fonts, plus gmpy2: .device-mix), most wanted first:
#  1. issue 34 with the new default (--render proves the pixels float64 cannot place): 5e227 and
#     1e50 at 1024² in one piece and in bands (--gpus 0) twice, compared value by value, with the
#     marked count; KF's other three files at 4096² the same way;
#  2. issue 39's window CPU sweep on two pinned cores at 2^20: as a window nobody touches (it
#     repaints when a point arrives), repainted every 16 ms, and with 8 ms of Python per repaint;
#  3. issue 33's window sweep on the GPU (16 cores) as the window repaints by itself;
#  4. the pageable copy's drift pinned to one core.        bash tools/gpu_session_g.sh OUT
set -u
FINAL=${1:?usage: gpu_session_g.sh OUT}; OUT=$FINAL/r; mkdir -p "$OUT" /tmp/r34
source ${BUNDLE:-.device-mix}/activate.sh
export PYTHONPATH=.:$PYTHONPATH NUMBA_CACHE_DIR=$PWD/.numba-cache PYTHONUNBUFFERED=1
SECONDS=0
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } 2>&1 | tee "$OUT/device.txt"
render() {  # name size cut
  local extra=(); case $3 in bands*) extra=(--gpus 0);; esac
  local t=$SECONDS
  timeout 150 python3 main.py --render mandelbrot --location resources/kf-$1.kfr --size "$2" \
    --backend cuda --out "/tmp/r34/$1-$2-$3.npy" "${extra[@]}" > "$OUT/$1-$2-$3.log" 2>&1
  echo "$1 $2 $3 rc=$? $((SECONDS - t)) s: $(grep -o '[0-9,]* pixels that.*' "$OUT/$1-$2-$3.log" | cut -c1-150)"
}
same() {  # name size
  for other in bands bands2; do
    python3 -c "import numpy as np,sys; a,b=(np.load(f) for f in sys.argv[1:]); print('$1 $2 one vs $other: values differing', int((a!=b).sum()))" \
      /tmp/r34/$1-$2-one.npy /tmp/r34/$1-$2-$other.npy
  done
}
{ for n in 5e227 1e50; do for c in one bands bands2; do render $n 1024x1024 $c; done; same $n 1024x1024; done
  for n in 1e14 5e113 4e533; do for c in one bands bands2; do render $n 4096x4096 $c; done; same $n 4096x4096; done
} 2>&1 | tee "$OUT/issue34.txt"
echo "== issue 34 (${SECONDS}s)"
q() { grep -v propagateSizeHints; }
cpus=$(lscpu -p=CPU,CORE | grep -v '^#' | sort -t, -k2,2n -u | head -2 | cut -d, -f1 | paste -sd,)
two="taskset -c $cpus"; echo "== two cores: CPUs $cpus"
export NUMBA_NUM_THREADS=2
for how in "--tick-ms 0" "--busy-ms 0" "--busy-ms 8"; do
  for op in add triad; do
    echo "-- $op $how"
    timeout 90 $two python3 tools/window_vs_bench.py --backend cpu --op $op --max-exp 20 $how \
      --out "$OUT/window-cpu-$op-${how// /}" 2>&1 | q | grep -E "kernel|within"
  done
done
unset NUMBA_NUM_THREADS
echo "== issue 39 (${SECONDS}s)"
timeout 150 python3 tools/window_vs_bench.py --backend cuda --op add --max-exp 24 --tick-ms 0 \
  --out "$OUT/window-cuda-add-tick0" 2>&1 | q | tail -24
echo "== issue 33 (${SECONDS}s)"
for cpu in 2 9; do timeout 40 taskset -c $cpu python3 tools/pageable_numa.py 2>&1 | tail -1; done
echo "== done (${SECONDS}s)"
tar -C "$FINAL" -czf "$FINAL/results.tgz" r && rm -rf "$OUT"
