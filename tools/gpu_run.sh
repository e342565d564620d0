#!/usr/bin/env bash
# Everything one GPU check needs, in one command on the GPU machine (see docs/PERFORMANCE.md):
#   source .device-bundle-qt/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_run.sh "$OUT"
# (.device-bundle-qt: `bash ../shared/device/make-bundle.sh gmpy2`, renamed; see the README)
set -u
out=${1:?usage: gpu_run.sh OUTPUT_DIR}
mkdir -p "$out"
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv; } > "$out/device.txt" 2>&1
echo "== GPU tests (real GPU)"
timeout 300 python3 -m pytest -m gpu -q -p no:cacheprovider -ra > "$out/gpu_tests.log" 2>&1
echo "gpu tests rc=$?"; grep -E "passed|failed|FAILED|Error" "$out/gpu_tests.log" | tail -12
echo "== bench"
timeout 420 python3 main.py --bench --backend cuda --json "$out/bench.json" > "$out/bench.txt" 2>&1; echo "bench rc=$?"
[ "${2:-all}" = "tests-bench" ] && exit 0
echo "== window frame-rate bench"
timeout 120 python3 main.py --bench --ui --backend cuda --json "$out/ui_bench.json" 2>&1 | grep -v Fontconfig | tail -16
echo "== start-up: first GPU frame of a fresh process (the first run compiles or loads the disk cache)"
for i in 1 2; do QT_QPA_PLATFORM=offscreen timeout 120 python3 tools/screenshot.py "$out/shot-mandelbrot.png" --backend cuda --frames 1 2>&1 | grep -E "first frame|no frame"; done
for v in distance throughput; do QT_QPA_PLATFORM=offscreen timeout 120 python3 tools/screenshot.py "$out/shot-$v.png" --backend cuda --view $v --frames 1 2>&1 | grep -E "first frame|no frame"; done
