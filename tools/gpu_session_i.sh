#!/usr/bin/env bash
# One device call (issue 37 after the keyframes' waits went): the GPU tests of what changed, where a
# keyframe's time goes now, then the 10-minute 1080p60 keyframe movie to 1e-1000 timed whole and
# the per-frame method on its first minute (tools/gpu_keyframes.sh's movie and perframe stages).
#   source .device-av/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_session_i.sh "$OUT/i"
set -u
OUT=${1:?usage: gpu_session_i.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
export NUMBA_CACHE_DIR=$PWD/.numba-cache
SECONDS=0
timeout 75 python3 -m pytest -q -p no:cacheprovider tests/kernels/test_deep_exact_gpu.py \
  tests/kernels/test_expmap_gpu.py tests/kernels/test_deep_gpu.py > "$OUT/tests.txt" 2>&1
echo "tests rc=$? (${SECONDS}s)"; grep -E "passed|failed|FAILED|^ERROR" "$OUT/tests.txt" | tail -4
timeout 45 python3 tools/keyframe_profile.py --backend cuda --each 2 --profile 4 --top 25 \
  > "$OUT/profile.txt" 2>&1
echo "profile rc=$? (${SECONDS}s)"; sed -n 1,9p "$OUT/profile.txt" | cut -c1-200
left=$(( ${END_S:-570} - SECONDS - ${PERFRAME_S:-150} ))
STAGES=movie DEADLINE=$left BUNDLE=${BUNDLE:-.device-av} bash tools/gpu_keyframes.sh "$OUT/k" 2>&1 \
  | grep -vE "^WARNING" | tail -12
left=$(( ${END_S:-570} - SECONDS ))
STAGES=perframe PER_FRAME_SECONDS=60 BUNDLE=${BUNDLE:-.device-av} PACK_CACHE=1 \
  timeout $left bash tools/gpu_keyframes.sh "$OUT/k" 2>&1 | grep -E "^perframe|rc=" | tail -10
echo "session done in ${SECONDS}s"
