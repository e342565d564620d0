#!/usr/bin/env bash
# Stop 50, issue 37: the whole 10-minute 1080p60 keyframe movie to 1e-1000 with keyframes queued
# beside their frames (KeyframeGroup) and keyframes copied into pinned lent arrays, the per-frame
# method's first minute in the same call, then the keyframe GPU tests as far as the time goes.
#   bash tools/device_head.sh pack; carry .device-av .device-head.tgz .numba-cache
set -u
OUT=${1:?usage: gpu_session_ah.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
SECONDS=0
STAGES="warm perframe movie" DEADLINE=${DEADLINE:-540} bash tools/gpu_session_ac.sh "$OUT"
source .device-av/activate.sh
export PYTHONPATH=.:$PYTHONPATH NUMBA_CACHE_DIR=$PWD/.numba-cache
left=$(( ${TESTS_END:-585} - SECONDS ))
if [ "$left" -gt 20 ]; then
  timeout "$left" python3 -m pytest -q -p no:cacheprovider tests/kernels/test_expmap_gpu.py \
    tests/kernels/test_expmap_one_launch.py tests/cli/test_movie_keyframes.py > "$OUT/tests.txt" 2>&1
  echo "keyframe tests rc=$? (${SECONDS}s): $(tail -1 "$OUT/tests.txt")"
fi
tar -C . -czf "$OUT/numba-cache.tgz" .numba-cache
echo "done in ${SECONDS}s"
