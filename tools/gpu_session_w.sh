#!/usr/bin/env bash
# The window's first frames after the gates open before a module load and the context opens ahead
# (stop 48, issue 38): each view once cold, then warm starts timed by the gate and by CUPTI; the
# gate's tests on the GPU.
#   source .device-win/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_session_w.sh "$OUT/w"
set -u
OUT=${1:?usage: gpu_session_w.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
export NUMBA_CACHE_DIR=$PWD/.numba-cache
SECONDS=0
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site-cupti .device-cupti/*.whl
python3 -m compileall -q -j 16 /tmp/site /tmp/site-cupti . > /dev/null 2>&1
echo "bytecode (${SECONDS}s)"
VIEWS=${VIEWS:-mandelbrot distance throughput random}
for v in $VIEWS; do
  timeout 120 python3 tools/first_start.py --backend cuda --view "$v" > "$OUT/cold-$v.txt" 2>&1
  echo "== cold $v rc=$? (${SECONDS}s)"; grep -v propagateSize "$OUT/cold-$v.txt" | tail -2
done
for mode in gate cupti; do
  case $mode in cupti) P=/tmp/site-cupti:$PYTHONPATH;; *) P=$PYTHONPATH;; esac
  for v in $VIEWS; do
    for i in 1 2 3; do
      PYTHONPATH=$P timeout 60 python3 tools/first_start.py --backend cuda --view "$v" \
        > "$OUT/$mode-$v-$i.txt" 2>&1
      echo "== $mode $v $i rc=$?"; grep -v propagateSize "$OUT/$mode-$v-$i.txt" | grep -v "^load"
    done
  done
done
FIRST_START_SAMPLE="$OUT/gate-mandelbrot-sample.txt" timeout 60 \
  python3 tools/first_start.py --backend cuda > /dev/null 2>&1
PYTHONPATH=/tmp/site-cupti:$PYTHONPATH FIRST_START_SAMPLE="$OUT/cupti-mandelbrot-sample.txt" \
  timeout 60 python3 tools/first_start.py --backend cuda > /dev/null 2>&1
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/kernels/test_timing_gate.py \
  > "$OUT/gate-tests.txt" 2>&1
echo "gate tests rc=$? (${SECONDS}s)"; tail -3 "$OUT/gate-tests.txt"
tar -C "$OUT" -czf "$OUT.tgz" . && rm -rf "$OUT"
echo "session done in ${SECONDS}s"
