#!/usr/bin/env bash
# The last device call of stop 46 (two GPUs): the GPU tests of what this stop changed (the pool's
# views, the proved pixels' pool buffers, the targets' build, CUPTI's claims, posters on two
# GPUs, the served render's pixels), and a keyframe timed by CUPTI against events after the claim
# fix (the kernels' own ms must agree).
#   source .device-av/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_session_n.sh "$OUT/n"
set -u
OUT=${1:?usage: gpu_session_n.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
export NUMBA_CACHE_DIR=$PWD/.numba-cache
SECONDS=0
nvidia-smi --query-gpu=index,name --format=csv,noheader
timeout 240 python3 -m pytest -q -p no:cacheprovider -rs tests/kernels/test_buffers.py \
  tests/kernels/test_deep_targets.py tests/kernels/test_cupti_claims.py tests/kernels/test_timing_gate.py \
  tests/kernels/test_deep_exact_gpu.py tests/kernels/test_deep_gpu.py tests/kernels/test_expmap_gpu.py \
  tests/kernels/test_distance_gpu.py tests/kernels/test_rng_gpu.py tests/cli/test_poster.py \
  tests/cli/test_render_pixels.py tests/cli/test_cli_exact_pixels.py > "$OUT/tests.txt" 2>&1
echo "tests rc=$? (${SECONDS}s)"; grep -E "passed|failed|FAILED|^ERROR" "$OUT/tests.txt" | tail -8
for m in cupti events; do
  timeout 45 python3 tools/keyframe_profile.py --backend cuda --each 2 --profile 1 --top 3 \
    --at 0.25,0.5,0.98 --timing $m > "$OUT/profile-$m.txt" 2>&1
  echo "profile $m rc=$? (${SECONDS}s)"; grep -E "^at |^timing" "$OUT/profile-$m.txt" | cut -c1-200
done
echo "session done in ${SECONDS}s"
