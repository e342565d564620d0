#!/usr/bin/env bash
# Everything one GPU check needs, in one command on the GPU machine (see docs/PERFORMANCE.md):
#   source .device-bundle/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_run.sh "$OUT"
# Writes at most 8 files into the folder given (what the device tool brings back).
set -u
out=${1:?usage: gpu_run.sh OUTPUT_DIR}
mkdir -p "$out"
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv; } > "$out/device.txt" 2>&1
echo "== GPU tests (real GPU)"
python3 -m pytest -m gpu -q -p no:cacheprovider > "$out/gpu_tests.log" 2>&1; echo "gpu tests rc=$?"; tail -4 "$out/gpu_tests.log"
echo "== bench"
python3 main.py --bench --backend cuda --json "$out/bench.json" > "$out/bench.txt" 2>&1; echo "bench rc=$?"
echo "== window frame-rate bench"
python3 main.py --bench --ui --backend cuda --json "$out/ui_bench.json" 2>&1 | grep -v Fontconfig | tail -16
echo "== throughput view sweep on the GPU"
python3 tools/throughput_shot.py --backend cuda --op add --max-exp 26 --out "$out/throughput" 2>&1 | tail -25
echo "== start-up: first GPU frame of a fresh process (the first run compiles or loads the disk cache)"
for i in 1 2; do QT_QPA_PLATFORM=offscreen python3 tools/screenshot.py /tmp/startup.png --backend cuda --frames 1 2>&1 | grep -E "first frame|no frame"; done
