#!/usr/bin/env bash
# GPU leg without Qt (lite bundle: numpy, gmpy2, PyCUDA, pyqtgraph's colour maps, cupti-python):
# the GPU tests of kernels/, services/ and cli/, then the first frame's split and the roofs
# against the vector bench. Output files go to $OUT.
set -u
source ${BUNDLE:-.device-lite}/activate.sh
export PYTHONPATH=.:$PYTHONPATH NUMBA_CACHE_DIR=$PWD/.numba-cache
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
python3 -m pytest -q -p no:cacheprovider -m gpu tests/kernels tests/services tests/cli -x -q 2>&1 \
  | grep -v "Deprecation\|launch.py:6\|_launch_prepared\|^  " | tail -25
echo "gpu tests: $(( $(date +%s) - t0 )) s"
python3 tools/first_frame_split.py --backend cuda --size 1920x1080 --top 0 2>&1 | head -5
export GPU_EXPLORER_CACHE_DIR=$(mktemp -d)
python3 main.py --bench --backend cuda --only vector --json "$OUT/bench_vector.json" 2>&1 | tail -12
python3 tools/roofs_vs_bench.py "$OUT/bench_vector.json" 2>&1 | tail -15
