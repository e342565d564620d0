#!/usr/bin/env bash
# Issue 12 on a machine with two GPUs (nvidia-h200-x2), from the repository root:
#   source .device-bundle-spread/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_spread.sh "$OUT"
# (.device-bundle-spread: `bash ../shared/device/make-bundle.sh --no-qt gmpy2 dask distributed av
# pyqtgraph`, renamed; pyqtgraph for its colour-map files only). Runs the spreading tests on the real
# GPUs, the poster and movie scaling (tools/spread_bench.py) and the whole 1080p60 zoom movie with
# one GPU and with two.
set -u
out=${1:?usage: gpu_spread.sh OUTPUT_DIR}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.max.sm --format=csv; echo "cores: $(nproc)"; } > "$out/device.txt" 2>&1
cat "$out/device.txt"
echo "== spreading tests on the real GPUs"
timeout 240 python3 -m pytest -q -p no:cacheprovider -ra tests/kernels/test_spread.py tests/cli/test_poster.py tests/cli/test_movie.py > "$out/spread_tests.log" 2>&1
echo "tests rc=$?"; grep -E "passed|failed|FAILED|^ERROR|SKIPPED" "$out/spread_tests.log" | tail -8
echo "== poster and movie scaling"
timeout 330 python3 tools/spread_bench.py --json "$out/spread.json" --repeats 2 2>&1 | grep -vE "^INFO|distributed\.|^  " | tail -30
echo "== the whole movie (1920x1080, 60 fps, 30 s to 1e-12): one GPU, then two"
for g in 0 0,1; do
  t0=$(date +%s.%N)
  timeout 200 python3 main.py --movie /tmp/spread-movie.mp4 --backend cuda --gpus $g --size 1920x1080 --fps 60 --seconds 30 \
    --center -0.743643887037158704752191506114774,0.131825904205311970493132056385139 --width 1e-12 --restart 2>&1 | tail -2
  echo "-- --gpus $g: whole command $(python3 -c "print(f'{$(date +%s.%N) - $t0:.1f}')") s"
done
