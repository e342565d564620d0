#!/usr/bin/env bash
# Stop 49, issue 37, the last device time: the per-frame method's first minute and the whole
# 10-minute 1080p60 keyframe movie to 1e-1000 in one call (frames lent pinned), then the keyframe
# GPU tests (the lent frames against the ring's) as far as the time goes.
#   bash tools/device_head.sh pack; carry .device-av .device-head.tgz .numba-cache
set -u
OUT=${1:?usage: gpu_session_af.sh OUT}; mkdir -p "$OUT"
STAGES="warm perframe movie" DEADLINE=${DEADLINE:-445} bash tools/gpu_session_ac.sh "$OUT"
source .device-av/activate.sh
export PYTHONPATH=.:$PYTHONPATH NUMBA_CACHE_DIR=$PWD/.numba-cache
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/kernels/test_expmap_gpu.py > "$OUT/tests.txt" 2>&1
echo "test_expmap_gpu rc=$?: $(tail -1 "$OUT/tests.txt")"
