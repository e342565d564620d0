#!/usr/bin/env bash
# Stop 48's last call: every view's first result with the views built as needed and the rng
# kernels served by numba's cache (issue 38; gate timing), the rng GPU tests (every kernel from the
# disk in a second process), then as many GPU tests of issue 36's folded loops (float64, float32,
# Burning Ship, deep, overlays) as the call's time leaves, each file in turn.
#   source .device-win/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_session_aa.sh "$OUT/aa"
set -u
OUT=${1:?usage: gpu_session_aa.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
export NUMBA_CACHE_DIR=$PWD/.numba-cache
SECONDS=0
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
python3 -m compileall -q -j 16 /tmp/site . > /dev/null 2>&1
for v in mandelbrot random distance throughput; do
  timeout 60 python3 tools/first_start.py --backend cuda --view "$v" > "$OUT/cold-$v.txt" 2>&1
  echo "== cold $v rc=$? (${SECONDS}s): $(grep -E 'first on_|frame [0-9]+×' "$OUT/cold-$v.txt" | tail -1)"
done
for v in mandelbrot random distance throughput; do
  n=5; case $v in distance|throughput) n=3;; esac
  for i in $(seq $n); do
    timeout 40 python3 tools/first_start.py --backend cuda --view "$v" > "$OUT/gate-$v-$i.txt" 2>&1
    echo "== gate $v $i: $(grep -E 'window shown|first on_|frame [0-9]+×[0-9]+ ' "$OUT/gate-$v-$i.txt" | tr -s ' ' | tr '\n' ';')"
  done
done
echo "window done (${SECONDS}s)"
timeout 70 python3 -m pytest -q -p no:cacheprovider tests/kernels/test_rng_gpu.py -k "disk or warmup or timings" \
  > "$OUT/rng-tests.txt" 2>&1
echo "rng tests rc=$? (${SECONDS}s)"; tail -2 "$OUT/rng-tests.txt"
for f in test_mandelbrot_gpu test_float32_gpu test_burning_ship_gpu test_deep_gpu test_deep_ship_gpu \
         test_overlays test_deep_float32 test_expmap_gpu; do
  left=$((235 - SECONDS)); [ "$left" -lt 15 ] && { echo "no time left for $f"; continue; }
  timeout "$left" python3 -m pytest -q -p no:cacheprovider -m gpu "tests/kernels/$f.py" > "$OUT/$f.txt" 2>&1
  echo "$f rc=$? (${SECONDS}s): $(tail -1 "$OUT/$f.txt")"
done
tar -C "$OUT" -czf "$OUT.tgz" . && rm -rf "$OUT"
echo "session done in ${SECONDS}s"
