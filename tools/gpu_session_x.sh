#!/usr/bin/env bash
# Every view's first result on the GPU after the sweep and the random-numbers run measure their
# ceilings after their first results (stop 48, issue 38), timed by the gate and by CUPTI, and the
# GPU tests of what changed.
#   source .device-win/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_session_x.sh "$OUT/x"
set -u
OUT=${1:?usage: gpu_session_x.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
export NUMBA_CACHE_DIR=$PWD/.numba-cache
SECONDS=0
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site-cupti .device-cupti/*.whl
python3 -m compileall -q -j 16 /tmp/site /tmp/site-cupti . > /dev/null 2>&1
VIEWS=${VIEWS:-mandelbrot distance throughput random}
for v in $VIEWS; do
  timeout 120 python3 tools/first_start.py --backend cuda --view "$v" > "$OUT/cold-$v.txt" 2>&1
  echo "== cold $v rc=$? (${SECONDS}s)"; grep -v propagateSize "$OUT/cold-$v.txt" | tail -2
done
for mode in gate cupti; do
  case $mode in cupti) P=/tmp/site-cupti:$PYTHONPATH;; *) P=$PYTHONPATH;; esac
  for v in $VIEWS; do
    for i in 1 2 3 4 5; do
      PYTHONPATH=$P timeout 60 python3 tools/first_start.py --backend cuda --view "$v" \
        > "$OUT/$mode-$v-$i.txt" 2>&1
      echo "== $mode $v $i: $(grep -E 'window shown|first on_|frame [0-9]+×[0-9]+ ' "$OUT/$mode-$v-$i.txt" | tr -s ' ' | tr '\n' ';')"
    done
  done
done
FIRST_START_SAMPLE="$OUT/gate-random-sample.txt" timeout 60 \
  python3 tools/first_start.py --backend cuda --view random > /dev/null 2>&1
FIRST_START_SAMPLE="$OUT/gate-throughput-sample.txt" timeout 60 \
  python3 tools/first_start.py --backend cuda --view throughput > /dev/null 2>&1
timeout 400 python3 -m pytest -q -p no:cacheprovider tests/kernels/test_timing_gate.py \
  tests/kernels/test_vector_sweep.py tests/kernels/test_rng_gpu.py tests/kernels/test_rng.py \
  tests/explorer/test_random_view.py tests/explorer/test_throughput_view.py \
  > "$OUT/tests.txt" 2>&1
echo "tests rc=$? (${SECONDS}s)"; tail -3 "$OUT/tests.txt"
tar -C "$OUT" -czf "$OUT.tgz" . && rm -rf "$OUT"
echo "session done in ${SECONDS}s"
