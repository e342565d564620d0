#!/usr/bin/env bash
# Issue 34, marked pixels: KF's six files at 1024x1024 on the GPU, each drawn with the default
# settings (handed-back pixels marked) and with the double-double middle tier (exact_redo.PROVED),
# printing pixels handed back, proved, marked, the frame's time and the tier's (tools/kf_marked.py);
# then the GPU tests of the exact pixels. From the repository root:
#   bash tools/gpu_issue34_marked.sh OUTPUT_DIR [SIZE]
source "${BUNDLE:-.device-lite}/activate.sh" && export PYTHONPATH=.:$PYTHONPATH NUMBA_CACHE_DIR=$PWD/.numba-cache
set -u
out=${1:?usage: gpu_issue34_marked.sh OUTPUT_DIR [SIZE]}
size=${2:-1024}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; git log -1 --oneline; } \
  > "$out/device.txt" 2>&1
cat "$out/device.txt"
# the default render of each file first (fast), then the middle tier (5e227: ~30,000 pixels of
# a few ms of a core each, ~10 s on 16 cores, plus ~1.3 s for its orbit and table)
python3 tools/kf_marked.py --backend cuda --size "$size" --skip-proved 2>&1 | tee "$out/marked-default.txt"
python3 tools/kf_marked.py --backend cuda --size "$size" 2>&1 | tee "$out/marked-proved.txt"
# the tier's parts timed alone on one core of the quiet host (orbit, table, ms a pixel)
python3 tools/kf_marked.py --backend cuda --size 256 --files 1e50,5e227 --tier-cost 2>&1 \
  | tee "$out/tier-cost.txt"
# every pixel the GPU's loop hands back at 256x256 also in MPFR on all cores (~4 min): the tier's
# proved-and-wrong must be 0
python3 tools/kf_marked.py --backend cuda --size 256 --files 1e50,5e227 --audit 2>&1 \
  | tee "$out/audit.txt"
python3 -m pytest -q tests/kernels/test_deep_exact_gpu.py tests/kernels/test_deep_exact.py \
  tests/cli/test_cli_exact_pixels.py 2>&1 | tail -15 | tee "$out/tests.txt"
