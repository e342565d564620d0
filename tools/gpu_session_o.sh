#!/usr/bin/env bash
# Issue 38's window figure on the GPU machine (stop 46): the window's first pictures on the GPU
# (tools/first_start.py), a cold start that fills an empty numba cache, then three warm ones.
#   bash tools/gpu_session_o.sh "$OUT/o"      (carries .device-qt: PyQt6 and pyqtgraph)
set -u
OUT=${1:?usage: gpu_session_o.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
source .device-qt/activate.sh
export PYTHONPATH=.:$PYTHONPATH NUMBA_CACHE_DIR=/tmp/o-numba-cache
SECONDS=0
nvidia-smi --query-gpu=index,name --format=csv,noheader
timeout 240 python3 tools/first_start.py --backend cuda > "$OUT/cold.txt" 2>&1
echo "cold rc=$? (${SECONDS}s)"; grep -vE "propagateSizeHints" "$OUT/cold.txt" | tail -8
for i in 1 2 3; do
  timeout 60 python3 tools/first_start.py --backend cuda > "$OUT/warm$i.txt" 2>&1
  echo "warm $i rc=$? (${SECONDS}s)"; grep -vE "propagateSizeHints" "$OUT/warm$i.txt" | tail -7
done
echo "session done in ${SECONDS}s"
