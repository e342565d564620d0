#!/usr/bin/env bash
# Stop 48, the remaining device time: more starts of the window on the Mandelbrot view (issue 38),
# then the deep GPU tests of issue 36's folded deep loops (with gmpy2), as far as the time goes.
#   source .device-win/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_session_ab.sh "$OUT/ab"
set -u
OUT=${1:?usage: gpu_session_ab.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
export NUMBA_CACHE_DIR=$PWD/.numba-cache
SECONDS=0
tar -C /tmp/site -xJf .device-gmp/gmpy2.tar.xz
python3 -m compileall -q -j 16 /tmp/site . > /dev/null 2>&1
timeout 40 python3 tools/first_start.py --backend cuda > "$OUT/cold.txt" 2>&1
for i in $(seq 8); do
  timeout 30 python3 tools/first_start.py --backend cuda > "$OUT/gate-$i.txt" 2>&1
  echo "== gate mandelbrot $i: $(grep -E 'window shown|frame [0-9]+×[0-9]+ ' "$OUT/gate-$i.txt" | tr -s ' ' | tr '\n' ';')"
done
for f in test_deep_gpu test_deep_ship_gpu test_expmap_gpu; do
  left=$((105 - SECONDS)); [ "$left" -lt 10 ] && { echo "no time left for $f"; continue; }
  timeout "$left" python3 -m pytest -q -p no:cacheprovider -x -m gpu "tests/kernels/$f.py" > "$OUT/$f.txt" 2>&1
  echo "$f rc=$? (${SECONDS}s): $(tail -1 "$OUT/$f.txt")"
done
tar -C "$OUT" -czf "$OUT.tgz" . && rm -rf "$OUT"
echo "session done in ${SECONDS}s"
