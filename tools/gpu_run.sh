#!/usr/bin/env bash
# Everything one GPU check needs, on the GPU machine, from the repository root (see docs/CLI.md,
# "Developer tools and the GPU machine"):
#   source .device-bundle-qt/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_run.sh "$OUT" [tests|bench]
# (.device-bundle-qt: `bash ../shared/device/make-bundle.sh gmpy2`, renamed). One device call may
# run 10 minutes: `tests` runs the GPU tests, the window bench, the cancel check and a screenshot
# of every view; `bench` runs `main.py --bench` with JSON; no mode runs both.
set -u
out=${1:?usage: gpu_run.sh OUTPUT_DIR [tests|bench]}
mode=${2:-all}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv; } > "$out/device.txt" 2>&1
if [ "$mode" != bench ]; then
  echo "== GPU tests (real GPU)"
  timeout 330 python3 -m pytest -m gpu -q -p no:cacheprovider -ra > "$out/gpu_tests.log" 2>&1
  echo "gpu tests rc=$?"; grep -E "passed|failed|FAILED|^ERROR" "$out/gpu_tests.log" | tail -15
  echo "== window frame-rate bench"
  timeout 90 python3 main.py --bench --ui --backend cuda --json "$out/ui_bench.json" 2>&1 | grep -v Fontconfig | tail -5
  echo "== cancel check (deep iteration counts)"
  OUT=$out timeout 90 python3 tools/deep_cancel_check.py 2>&1 | tail -6
  echo "== a screenshot of every view on the GPU (first frame: a fresh process)"
  for v in mandelbrot distance throughput random; do
    QT_QPA_PLATFORM=offscreen timeout 60 python3 tools/screenshot.py "$out/shot-$v.png" --backend cuda --view $v --run 2>&1 | grep -E "wrote|first frame|no frame"
  done
fi
if [ "$mode" != tests ]; then
  echo "== bench"
  timeout 560 python3 main.py --bench --backend cuda --repeats ${REPEATS:-10} --json "$out/bench.json" > "$out/bench.txt" 2>&1
  echo "bench rc=$?"; tail -3 "$out/bench.txt"
fi
