#!/usr/bin/env bash
# The window's first frames with the driver's lazy and eager module loading, timed by the gate and
# by CUPTI (stop 48, issue 38): under lazy loading, a kernel's first launch behind the gate's
# spinning kernel waits for the gate's timeout. Warm numba cache (tools/gpu_session_u.sh first).
#   source .device-win/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_session_v.sh "$OUT/v"
set -u
OUT=${1:?usage: gpu_session_v.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
export NUMBA_CACHE_DIR=$PWD/.numba-cache
SECONDS=0
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site-cupti .device-cupti/*.whl
python3 -m compileall -q -j 16 /tmp/site-cupti > /dev/null 2>&1
VIEWS=${VIEWS:-mandelbrot distance throughput random}
for mode in lazy-gate eager-gate lazy-cupti eager-cupti; do
  case $mode in lazy-*) L=LAZY;; *) L=EAGER;; esac
  case $mode in *-cupti) P=/tmp/site-cupti:$PYTHONPATH;; *) P=$PYTHONPATH;; esac
  for v in $VIEWS; do
    [ "$mode" = lazy-cupti ] || [ "$mode" = lazy-gate ] && [ "$v" != mandelbrot ] && continue
    for i in 1 2; do
      CUDA_MODULE_LOADING=$L PYTHONPATH=$P timeout 60 python3 tools/first_start.py --backend cuda \
        --view "$v" > "$OUT/$mode-$v-$i.txt" 2>&1
      echo "== $mode $v $i rc=$?"; grep -v propagateSize "$OUT/$mode-$v-$i.txt" | grep -v "^load"
    done
  done
done
CUDA_MODULE_LOADING=EAGER FIRST_START_SAMPLE="$OUT/eager-mandelbrot-sample.txt" timeout 60 \
  python3 tools/first_start.py --backend cuda > /dev/null 2>&1
CUDA_MODULE_LOADING=EAGER FIRST_START_SAMPLE="$OUT/eager-throughput-sample.txt" timeout 60 \
  python3 tools/first_start.py --backend cuda --view throughput > /dev/null 2>&1
tar -C "$OUT" -czf "$OUT.tgz" . && rm -rf "$OUT"
echo "session done in ${SECONDS}s"
