#!/usr/bin/env bash
# The closing GPU run (Qt bundle): every GPU test, the float32 bench, the roofs check, the overlay
# bench, and screenshots of the roofline and the overlays (packed in one tar).
set -u
out=${1:?}; mkdir -p "$out"; export PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; echo "cores $(nproc)"; } > "$out/device.txt"; cat "$out/device.txt"
echo "== GPU tests"
timeout 380 python3 -m pytest -m gpu -q -p no:cacheprovider -ra > "$out/tests.log" 2>&1
echo "rc=$?"; grep -E "passed|failed|FAILED|^ERROR" "$out/tests.log" | tail -15
export GPU_EXPLORER_CACHE_DIR=$out/cache
echo "== float32"; timeout 60 python3 main.py --bench --backend cuda --only mandelbrot-float32 --repeats 20 --json $out/float32.json 2>&1 | grep -o "mandelbrot-float32 .*: float.. .*escape ms=[0-9.]*.*float32/float64=[0-9.]*" | cut -c1-60,200-400
echo "== roofs"; timeout 60 python3 tools/roofs_check.py --backend cuda --json $out/roofs_check.json 2>&1 | tail -6
echo "== overlays"; timeout 90 python3 tools/overlay_bench.py --backend cuda --repeats 20 --json $out/overlays.json 2>&1 | tail -16
mkdir -p /tmp/shots
QT_QPA_PLATFORM=offscreen timeout 60 python3 tools/overlay_shots.py /tmp/shots --backend cuda --size 1500x900 2>&1 | grep -c wrote
QT_QPA_PLATFORM=offscreen timeout 90 python3 tools/roofline_shot.py /tmp/shots/roofline.png --backend cuda --sweep --window /tmp/shots/roofline-window.png 2>&1 | grep -v Fontconfig | tail -3
tar -C /tmp -cf $out/shots.tar shots
