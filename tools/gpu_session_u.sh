#!/usr/bin/env bash
# The window's first picture on the GPU, every view (stop 48, issue 38): a cold start fills numba's
# cache, then warm starts with their timelines, one of each sampled (tools/thread_sampler.py).
# Bytecode compiled first, as a pip install does.
#   source .device-win/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_session_u.sh "$OUT/u"
set -u
OUT=${1:?usage: gpu_session_u.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
export NUMBA_CACHE_DIR=$PWD/.numba-cache
SECONDS=0
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader; nproc
python3 -m compileall -q -j 16 /tmp/site . > /dev/null 2>&1
echo "bytecode (${SECONDS}s)"
VIEWS=${VIEWS:-mandelbrot distance throughput random}
WARM=${WARM:-3}
for v in $VIEWS; do
  timeout 120 python3 tools/first_start.py --backend cuda --view "$v" > "$OUT/$v-cold.txt" 2>&1
  echo "== $v cold rc=$? (${SECONDS}s)"; grep -v propagateSize "$OUT/$v-cold.txt" | tail -4
  for i in $(seq "$WARM"); do
    timeout 60 python3 tools/first_start.py --backend cuda --view "$v" > "$OUT/$v-warm$i.txt" 2>&1
    echo "== $v warm $i rc=$?"; grep -v propagateSize "$OUT/$v-warm$i.txt" | grep -v "^load"
  done
  FIRST_START_SAMPLE="$OUT/$v-sample.txt" timeout 60 python3 tools/first_start.py --backend cuda \
    --view "$v" > "$OUT/$v-sampled.txt" 2>&1
  echo "== $v sampled rc=$?"; tail -3 "$OUT/$v-sampled.txt"
done
timeout 60 python3 -X importtime tools/first_start.py --backend cuda > /dev/null 2> "$OUT/importtime.txt"
echo "session done in ${SECONDS}s"
