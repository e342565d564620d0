#!/usr/bin/env bash
# One device call on two GPUs (stop 46, issue 38 with the render server): every KF file's whole
# `--render` at 1024² with a server and in its own process, the 16384² poster of KF's 1e1086 on
# one GPU and on two with a server, a served GPU picture against its own process's (same bytes),
# and where a keyframe's time goes with the kernels' own time beside it (issue 37).
#   source .device-av/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_session_k.sh "$OUT/k"
set -u
OUT=${1:?usage: gpu_session_k.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
export NUMBA_CACHE_DIR=$PWD/.numba-cache
SECONDS=0
{ date -u; nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader; echo "cores $(nproc)"; } \
  | tee "$OUT/device.txt"
# bytecode as a pip install leaves it (the bundle is unpacked without)
python3 -m compileall -q -j 0 /tmp/site cli kernels services main.py > /dev/null 2>&1
KF=""; for n in 1e14 1e50 5e113 5e227 4e533 1e1086; do KF="$KF --kf resources/kf-$n.kfr"; done
timeout 200 python3 tools/serve_bench.py --backend cuda --size 1024x1024 $KF --runs 5 --own-runs 3 \
  --json "$OUT/kf.json" > "$OUT/kf.txt" 2>&1
echo "kf rc=$? (${SECONDS}s)"; cat "$OUT/kf.txt" | cut -c1-260
timeout 150 python3 tools/serve_bench.py --backend cuda --size 16384x16384 --kf resources/kf-1e1086.kfr \
  --out-ext npy --gpus 0 --gpus all --runs 3 --own-runs 1 --json "$OUT/poster.json" > "$OUT/poster.txt" 2>&1
echo "poster rc=$? (${SECONDS}s)"; cat "$OUT/poster.txt" | cut -c1-260
# the same picture served and in its own process
export GPU_EXPLORER_RUN_DIR=/tmp/k-run
python3 main.py --serve --backend cuda --idle-minutes 5 > "$OUT/server.log" 2>&1 &
for i in $(seq 600); do grep -q ready "$OUT/server.log" && break; sleep 0.1; done
for how in served own; do
  extra=""; [ $how = own ] && extra=--no-server
  python3 main.py --render mandelbrot --size 1024x1024 --backend cuda --location resources/kf-5e227.kfr \
    --out /tmp/k-$how.png $extra > "$OUT/pixels-$how.txt" 2>&1
done
cmp /tmp/k-served.png /tmp/k-own.png && echo "served and own-process PNGs identical (kf-5e227 1024²)"
kill -TERM %1; wait; tail -4 "$OUT/server.log" | cut -c1-200
unset GPU_EXPLORER_RUN_DIR
timeout 60 python3 tools/keyframe_profile.py --backend cuda --each 2 --profile 4 --top 20 \
  > "$OUT/profile.txt" 2>&1
echo "profile rc=$? (${SECONDS}s)"; sed -n 1,10p "$OUT/profile.txt" | cut -c1-220
echo "session done in ${SECONDS}s"
