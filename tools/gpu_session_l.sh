#!/usr/bin/env bash
# One device call on two GPUs (stop 46): a keyframe's time under each GPU timing method (CUPTI was
# K's: the kernels' own time a tenth of the keyframe's), where a warm poster command's own time
# goes on one GPU and two (tools/poster_profile.py), and the GPU tests of the targets' fix.
#   source .device-av/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_session_l.sh "$OUT/l"
set -u
OUT=${1:?usage: gpu_session_l.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
export NUMBA_CACHE_DIR=$PWD/.numba-cache
SECONDS=0
nvidia-smi --query-gpu=index,name --format=csv,noheader
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/kernels/test_deep_targets.py \
  tests/cli/test_poster.py > "$OUT/tests.txt" 2>&1
echo "tests rc=$? (${SECONDS}s)"; grep -E "passed|failed|FAILED|^ERROR" "$OUT/tests.txt" | tail -4
for m in events gate; do
  timeout 50 python3 tools/keyframe_profile.py --backend cuda --each 2 --profile 2 --top 12 --timing $m \
    > "$OUT/profile-$m.txt" 2>&1
  echo "profile $m rc=$? (${SECONDS}s)"; sed -n 1,10p "$OUT/profile-$m.txt" | cut -c1-200
done
rm -rf /tmp/pp.npy*
timeout 100 python3 tools/poster_profile.py --location resources/kf-1e1086.kfr --size 16384x16384 \
  --out /tmp/pp.npy --gpus 0 --gpus all --top 30 > "$OUT/poster.txt" 2>&1
echo "poster rc=$? (${SECONDS}s)"; grep -vE "^ +[0-9]+ +[0-9.]+ +[0-9.]+ " "$OUT/poster.txt" | cut -c1-200
rm -rf /tmp/pp.npy*
timeout 80 python3 tools/poster_profile.py --location resources/kf-1e1086.kfr --size 16384x16384 \
  --out /tmp/pp.npy --gpus 0 --gpus all --extra=--marked-pixels --top 5 > "$OUT/poster-marked.txt" 2>&1
echo "poster marked rc=$? (${SECONDS}s)"; grep -E "^--gpus|^wrote" "$OUT/poster-marked.txt" | cut -c1-200
echo "session done in ${SECONDS}s"
