#!/usr/bin/env bash
# Issue 38's two-GPU poster (stop 47): a poster's bands listed from a thread of their own
# (services/poster_marks.py). One device call on two GPUs: the GPU tests of posters and pools; the
# whole 16384² KF 1e1086 .npy command with a render server on one GPU and on two, each replacing
# the last one's output as stop 46's measure did, then with the output removed beforehand; the warm
# in-process A/B against the marking before (tools/poster_profile.py --before); and the host side
# alone, fake GPUs on this machine's disk (tools/poster_host_bench.py).
#   source .device-av/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_session_p.sh "$OUT/p"
#   (carries .device-av and .numba-cache)
set -u
OUT=${1:?usage: gpu_session_p.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
export NUMBA_CACHE_DIR=$PWD/.numba-cache
SECONDS=0
nvidia-smi --query-gpu=index,name --format=csv,noheader
df -h /tmp | tail -1
python3 -m compileall -q -j 0 /tmp/site cli kernels services main.py > /dev/null 2>&1
timeout 110 python3 -m pytest -q -p no:cacheprovider -m gpu tests/cli tests/kernels \
  -k "poster or spread or band" > "$OUT/tests.txt" 2>&1
echo "gpu tests rc=$? (${SECONDS}s)"; grep -E "passed|failed|FAILED|^ERROR" "$OUT/tests.txt" | tail -6
KF="--backend cuda --size 16384x16384 --kf resources/kf-1e1086.kfr --out-ext npy --gpus 0 --gpus all"
timeout 110 python3 tools/serve_bench.py $KF --runs 3 --own-runs 1 --json "$OUT/poster.json" \
  > "$OUT/poster.txt" 2>&1
echo "poster, output replaced rc=$? (${SECONDS}s)"; cut -c1-300 "$OUT/poster.txt"
timeout 90 python3 tools/serve_bench.py $KF --runs 3 --own-runs 0 --fresh-out \
  --json "$OUT/poster_fresh.json" > "$OUT/poster_fresh.txt" 2>&1
echo "poster, output removed beforehand rc=$? (${SECONDS}s)"; cut -c1-300 "$OUT/poster_fresh.txt"
rm -rf /tmp/pp.npy*
timeout 150 python3 tools/poster_profile.py --location resources/kf-1e1086.kfr --size 16384x16384 \
  --out /tmp/pp.npy --gpus 0 --gpus all --before --runs 2 --top 12 > "$OUT/profile.txt" 2>&1
echo "profile rc=$? (${SECONDS}s)"
grep -vE "^ +[0-9/]+ +[0-9.]+ +[0-9.]+ " "$OUT/profile.txt" | grep -v 'note:' | cut -c1-200
rm -rf /tmp/pp.npy*
timeout 100 python3 tools/poster_host_bench.py --size 16384 --gpus 1,2 --repeats 2 --folder /tmp \
  > "$OUT/host.txt" 2>&1
echo "host side rc=$? (${SECONDS}s)"; cat "$OUT/host.txt"
echo "session done in ${SECONDS}s"
