#!/usr/bin/env bash
# Issue 22 (float32, roofline) and issue 21's KF workloads on one GPU, in one device call.
set -u
out=${1:?}; mkdir -p "$out"; export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$out/device.txt"
echo "== GPU tests (new files)"
timeout 300 python3 -m pytest -m gpu -q -p no:cacheprovider -ra tests/kernels/test_float32_gpu.py tests/kernels/test_deep_float32.py tests/kernels/test_roofs.py tests/kernels/test_counted_work.py tests/explorer/test_roofline_panel.py tests/kernels/test_kf_bench_gpu.py tests/kernels/test_mandelbrot_gpu.py > "$out/tests.log" 2>&1
echo "rc=$?"; grep -E "passed|failed|FAILED|^ERROR" "$out/tests.log" | tail -12
export GPU_EXPLORER_CACHE_DIR=$out/cache
echo "== roofs check"; timeout 90 python3 tools/roofs_check.py --backend cuda --json $out/roofs_check.json 2>&1 | tail -8
echo "== float32 bench"; timeout 120 python3 main.py --bench --backend cuda --only mandelbrot-float32 --repeats 20 --json $out/float32.json 2>&1 | tail -8
echo "== KF workloads (reference engine as merged so far)"; timeout 200 python3 main.py --bench --backend cuda --only deep-kf --repeats 3 --json $out/kf.json 2>&1 | tail -16
echo "== roofline shot"; QT_QPA_PLATFORM=offscreen timeout 100 python3 tools/roofline_shot.py $out/roofline.png --backend cuda --sweep --window $out/roofline-window.png 2>&1 | grep -v Fontconfig | tail -4
