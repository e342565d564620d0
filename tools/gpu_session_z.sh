#!/usr/bin/env bash
# Stop 48: every view's first result on the GPU with the rng kernels served by numba's cache (issue 38;
# gate timing: no cupti-python carried) and the GPU tests of what changed.
#   source .device-win/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_session_z.sh "$OUT/y"
set -u
OUT=${1:?usage: gpu_session_z.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
export NUMBA_CACHE_DIR=$PWD/.numba-cache
SECONDS=0
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
python3 -m compileall -q -j 16 /tmp/site . > /dev/null 2>&1
for v in mandelbrot distance throughput random; do
  timeout 120 python3 tools/first_start.py --backend cuda --view "$v" > "$OUT/cold-$v.txt" 2>&1
  echo "== cold $v rc=$? (${SECONDS}s)"; grep -v propagateSize "$OUT/cold-$v.txt" | tail -2
done
for v in mandelbrot random throughput distance; do
  for i in 1 2 3 4 5; do
    timeout 60 python3 tools/first_start.py --backend cuda --view "$v" > "$OUT/gate-$v-$i.txt" 2>&1
    echo "== gate $v $i: $(grep -E 'window shown|first on_|frame [0-9]+×[0-9]+ ' "$OUT/gate-$v-$i.txt" | tr -s ' ' | tr '\n' ';')"
  done
done
FIRST_START_SAMPLE="$OUT/gate-random-sample.txt" timeout 60 \
  python3 tools/first_start.py --backend cuda --view random > /dev/null 2>&1
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/kernels/test_timing_gate.py \
  tests/kernels/test_rng_gpu.py tests/kernels/test_rng.py tests/explorer/test_random_view.py \
  tests/kernels/test_vector_sweep.py tests/explorer/test_throughput_view.py \
  > "$OUT/tests.txt" 2>&1
echo "tests rc=$? (${SECONDS}s)"; tail -3 "$OUT/tests.txt"
tar -C "$OUT" -czf "$OUT.tgz" . && rm -rf "$OUT"
echo "session done in ${SECONDS}s"
