#!/usr/bin/env bash
# Stop 50, issue 37 on two H200s: the zoom's deepest 400 keyframes on one GPU then two, the whole
# 10-minute 1080p60 movie to 1e-1000 on both, then (GPU 0) the 12-frame quality check at 1080p
# with pixels checked against one-pixel frames at their own sample points, as far as time goes.
#   bash tools/device_head.sh pack; carry .device-av .device-head.tgz .numba-cache
set -u
OUT=${1:?usage: gpu_session_ai.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
SECONDS=0
bash tools/device_head.sh unpack
nvidia-smi --query-gpu=timestamp,index,utilization.gpu --format=csv -lms 1000 > "$OUT/gpu-util.csv" 2>&1 &
smi=$!
STAGES="warm two movie2" BUNDLE=.device-av bash tools/gpu_keyframes.sh "$OUT"
kill $smi 2>/dev/null
source .device-av/activate.sh
export PYTHONPATH=.:$PYTHONPATH NUMBA_CACHE_DIR=$PWD/.numba-cache
left=$(( ${QUALITY_END:-570} - SECONDS ))
if [ "$left" -gt 30 ]; then
  timeout "$left" python3 tools/keyframes_bench.py quality --out /tmp/kf --backend cuda \
    --seconds 600 --sample-pixels ${SAMPLE_PIXELS:-128} --json "$OUT/quality.json" > "$OUT/quality.txt" 2>&1
  echo "quality rc=$? (${SECONDS}s)"; grep -E "^\{|^quality" "$OUT/quality.txt" | cut -c1-400
fi
tar -C . -czf "$OUT/numba-cache.tgz" .numba-cache
echo "done in ${SECONDS}s"
