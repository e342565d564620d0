#!/usr/bin/env bash
# Everything one GPU check needs, in one command on the GPU machine (see docs/PERFORMANCE.md):
#   source .device-bundle/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_run.sh "$OUT"
# Writes logs and JSON into the folder given (the device tool brings back at most 8 files).
set -u
out=${1:?usage: gpu_run.sh OUTPUT_DIR}
mkdir -p "$out"
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; } > "$out/device.txt" 2>&1
echo "== GPU tests (real GPU)"
python3 -m pytest -m gpu -q -p no:cacheprovider > "$out/gpu_tests.log" 2>&1; echo "gpu tests rc=$?"; tail -3 "$out/gpu_tests.log"
echo "== bench"
python3 main.py --bench --backend cuda --json "$out/bench.json" > "$out/bench.txt" 2>&1; echo "bench rc=$?"
echo "== window frame-rate bench"
python3 main.py --bench --ui --backend cuda --json "$out/ui_bench.json" > "$out/ui_bench.txt" 2>&1; echo "ui bench rc=$?"
tail -25 "$out/ui_bench.txt"
cat "$out/bench.txt" | cut -c1-200
