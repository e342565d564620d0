#!/usr/bin/env bash
# Issue 36's last GPU part: the window's and the fault suite's GPU tests on the real GPU (pytest -m
# gpu tests/explorer tests/faults), which stop 50 ran under the simulator only: the overlay
# pipeline, the renderer split, the layout and the warm-up's stand-in timer reach the window through
# them. Qt bundle, so no numba cache fits beside it (cold).
#   bash tools/device_win_bundle.sh; bash tools/device_head.sh pack; carry .device-win .device-head.tgz
set -u
OUT=${1:?usage: gpu_session_ao.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
SECONDS=0
bash tools/device_head.sh unpack
source .device-win/activate.sh
export PYTHONPATH=.:$PYTHONPATH NUMBA_CACHE_DIR=$PWD/.numba-cache QT_QPA_PLATFORM=offscreen
timeout ${SUITE_S:-560} python3 -m pytest -m gpu -q -p no:cacheprovider -rf tests/explorer tests/faults \
  --tb=short > "$OUT/window-gpu.txt" 2>&1
echo "window gpu tests rc=$? (${SECONDS}s): $(tail -1 "$OUT/window-gpu.txt")"
grep -E "^FAILED|^ERROR|^E " "$OUT/window-gpu.txt" | head -30
