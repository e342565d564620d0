#!/usr/bin/env bash
# Stop 50, issue 36: this tree's kernel times against 9f38667's (the tree the issue was filed on) on
# one card in one call, both timed by bare CUDA events (9f38667 knew no other method: this tree's
# CUPTI times are the kernel's own, so they are not comparable with its event spans), the float64
# frame and two KF places (a perturbation and an extended one); outputs packed in one file.
#   git archive 9f38667 kernels cli main.py services explorer resources | tar -x -C .ab-base9f
#   bash tools/device_head.sh pack; carry .device-av .device-head.tgz .numba-cache .ab-base9f
set -u
OUT=${1:?usage: gpu_session_ak.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
SECONDS=0
bash tools/device_head.sh unpack
source .device-av/activate.sh
export PYTHONPATH=.:$PYTHONPATH NUMBA_CACHE_DIR=$PWD/.numba-cache GPU_EXPLORER_TIMING=events
{ date -u; nvidia-smi --query-gpu=index,name --format=csv,noheader; echo "cores $(nproc)"; } > "$OUT/device.txt"
ROUNDS=${ROUNDS:-2} REPEATS=${REPEATS:-5} bash tools/gpu_ab.sh "$OUT/ab" .ab-base9f \
  mandelbrot-full deep-kf-5e113 deep-kf-4e533 2>&1 | tee "$OUT/ab.txt"
python3 tools/bench_diff.py "$OUT"/ab/new-*.json -- "$OUT"/ab/base-*.json 2>&1 | tee "$OUT/ab-diff.txt"
tar -C "$OUT" -czf "$OUT/ab.tgz" ab && rm -rf "$OUT/ab"
echo "done in ${SECONDS}s"
