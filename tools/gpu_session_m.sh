#!/usr/bin/env bash
# One device call on two GPUs (stop 46): the GPU suite (kernels and CLI) after the pool's views and
# the proved pixels' pool buffers, then the 16384² poster of KF's 1e1086 as whole commands with a
# render server and in its own process, and where a warm one's time goes (tools/poster_profile.py).
#   source .device-av/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_session_m.sh "$OUT/m"
set -u
OUT=${1:?usage: gpu_session_m.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
export NUMBA_CACHE_DIR=$PWD/.numba-cache
SECONDS=0
nvidia-smi --query-gpu=index,name --format=csv,noheader
python3 -m compileall -q -j 0 /tmp/site cli kernels services main.py > /dev/null 2>&1
timeout 300 python3 -m pytest -q -p no:cacheprovider -m gpu tests/kernels tests/cli \
  --ignore tests/kernels/test_vector_ops.py > "$OUT/tests.txt" 2>&1
echo "gpu tests rc=$? (${SECONDS}s)"; grep -E "passed|failed|FAILED|^ERROR" "$OUT/tests.txt" | tail -6
timeout 120 python3 tools/serve_bench.py --backend cuda --size 16384x16384 --kf resources/kf-1e1086.kfr \
  --out-ext npy --gpus 0 --gpus all --runs 3 --own-runs 2 --json "$OUT/poster.json" > "$OUT/poster.txt" 2>&1
echo "poster rc=$? (${SECONDS}s)"; cut -c1-260 "$OUT/poster.txt"
rm -rf /tmp/pp.npy*
timeout 70 python3 tools/poster_profile.py --location resources/kf-1e1086.kfr --size 16384x16384 \
  --out /tmp/pp.npy --gpus 0 --gpus all --top 12 > "$OUT/profile.txt" 2>&1
echo "profile rc=$? (${SECONDS}s)"; grep -vE "^ +[0-9/]+ +[0-9.]+ +[0-9.]+ " "$OUT/profile.txt" | grep -v '^main.py: note' | cut -c1-200
echo "session done in ${SECONDS}s"
