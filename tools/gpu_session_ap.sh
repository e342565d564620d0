#!/usr/bin/env bash
# The whole GPU suite on the final tree of issue 36 (every test marked gpu, cold: no numba cache fits
# beside the Qt bundle), services and the window first so that a cut at the time limit falls on the
# kernels' tests, which ran warm in stop 50 (`am`). Verbose, so a cut run still says what passed.
#   bash tools/device_win_bundle.sh; bash tools/device_head.sh pack; carry .device-win .device-head.tgz
set -u
OUT=${1:?usage: gpu_session_ap.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
SECONDS=0
bash tools/device_head.sh unpack
source .device-win/activate.sh
export PYTHONPATH=.:$PYTHONPATH NUMBA_CACHE_DIR=$PWD/.numba-cache QT_QPA_PLATFORM=offscreen
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
timeout ${SUITE_S:-560} python3 -m pytest -m gpu -v -p no:cacheprovider -rfs --tb=short \
  tests/services tests/cli tests/explorer tests/faults tests/kernels > "$OUT/gpu-suite.txt" 2>&1
echo "gpu suite rc=$? (${SECONDS}s): $(tail -1 "$OUT/gpu-suite.txt")"
grep -cE " PASSED" "$OUT/gpu-suite.txt"; grep -E "FAILED|ERROR|^E " "$OUT/gpu-suite.txt" | head -30
