#!/usr/bin/env bash
# Issue 39's CPU checks on a quiet machine: the GPU host pinned to two of its cores (taskset,
# NUMBA_NUM_THREADS=2) stands in for the 2-core laptop. Kernels compile first on every core;
# then, on two: the busy-thread table at N = 2^12, 2^16, 2^20, its test, the window's CPU sweep
# against the headless runner, the window's CPU Mandelbrot frame against a headless one (with
# the longest repaint gap). Then issue 33's GPU window check for `add` if a GPU is there.
# Carry a Qt bundle (default .device-qt).   bash tools/gpu_issue39.sh OUT
set -u
OUT=${1:?usage: gpu_issue39.sh OUT}; mkdir -p "$OUT"
source ${BUNDLE:-.device-qt}/activate.sh
export PYTHONPATH=.:$PYTHONPATH NUMBA_CACHE_DIR=$PWD/.numba-cache PYTHONUNBUFFERED=1
nproc; lscpu | grep -m1 "Model name"
python3 tools/busy_thread_bench.py --backend cpu --log2n 12 --no-frames --repeats 1 > /dev/null 2>&1
python3 tools/window_frame_vs_bench.py --backend cpu --size 200x150 --frames 1 > /dev/null 2>&1
# two CPUs on two different physical cores (not hyperthreads of one)
cpus=$(lscpu -p=CPU,CORE | grep -v '^#' | sort -t, -k2,2n -u | head -2 | cut -d, -f1 | paste -sd,)
lscpu -p=CPU,CORE | grep -v '^#' | head -4 | paste -sd' '; echo "pinned to CPUs $cpus"
two="taskset -c $cpus"
export NUMBA_NUM_THREADS=2
echo "== busy thread, two cores"
for n in 12 16 20; do
  $two python3 tools/busy_thread_bench.py --backend cpu --log2n $n --no-frames --json "$OUT/busy-cpu-$n.json" 2>&1 | grep -E "cores|cpu-numba|numpy"
done
echo "== its test, two cores"
$two python3 -m pytest -q -p no:cacheprovider tests/kernels/test_cpu_busy_thread.py 2>&1 | tail -3
echo "== window sweep vs headless, two cores"
for op in add triad; do
  $two python3 tools/window_vs_bench.py --backend cpu --op $op --max-exp 20 --out "$OUT/window-cpu-$op" 2>&1 | grep -v propagateSize | tail -5
done
echo "== window frame vs headless, two cores"
$two python3 tools/window_frame_vs_bench.py --backend cpu --size 800x600 --iters 500 --frames 7 --json "$OUT/frame-cpu.json" 2>&1 | grep -v propagateSize | tail -4
unset NUMBA_NUM_THREADS
echo "== busy thread, every core ($(nproc))"
python3 tools/busy_thread_bench.py --backend cpu --log2n 20 --no-frames 2>&1 | grep -E "cpu-numba|numpy"
if nvidia-smi > /dev/null 2>&1; then
  echo "== GPU window sweep vs headless (issue 33)"
  python3 tools/window_vs_bench.py --backend cuda --op add --max-exp 24 --out "$OUT/window-cuda-add" 2>&1 | grep -v propagateSize | tail -14
  python3 tools/window_frame_vs_bench.py --backend cuda --size 1024x768 --iters 4000 --frames 7 2>&1 | grep -v propagateSize | tail -4
fi
