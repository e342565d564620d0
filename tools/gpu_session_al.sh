#!/usr/bin/env bash
# Stop 50, issue 36: this tree's kernels against 9f38667's kernel by kernel, each launch's own GPU
# time from CUPTI's records (tools/cupti_kernel_census.py), the same bench workloads run by both
# trees alternately in one call: tools/gpu_session_ak.sh's bare event spans hold the host's launch
# work, which is most of a 0.2 ms float64 frame's span.
#   git archive 9f38667 kernels cli main.py services explorer resources | tar -x -C .ab-base9f
#   bash tools/device_head.sh pack; carry .device-av .device-head.tgz .numba-cache .ab-base9f
set -u
OUT=${1:?usage: gpu_session_al.sh OUT}; mkdir -p "$OUT/al"; export PYTHONUNBUFFERED=1
SECONDS=0
bash tools/device_head.sh unpack
source .device-av/activate.sh
here=$PWD base=$(cd .ab-base9f && pwd)
export NUMBA_CACHE_DIR=$PWD/.numba-cache GPU_EXPLORER_TIMING=events
{ date -u; nvidia-smi --query-gpu=index,name --format=csv,noheader; echo "cores $(nproc)"; } > "$OUT/device.txt"
for p in ${PREFIXES:-mandelbrot-full deep-kf-5e113 deep-kf-4e533}; do
  for round in $(seq "${ROUNDS:-2}"); do
    for tree in new base; do
      dir=$here; [ "$tree" = base ] && dir=$base
      (cd "$dir" && PYTHONPATH="$dir:${PYTHONPATH:-}" timeout 200 python3 "$here/tools/cupti_kernel_census.py" \
         "$OUT/al/$tree-$p-$round.json" -- --bench --backend cuda --only "$p" --repeats "${REPEATS:-5}" \
         > "$OUT/al/$tree-$p-$round.txt" 2>&1)
      echo "$tree $p round $round rc=$? (${SECONDS}s)"
    done
  done
  echo "== $p"
  python3 tools/cupti_kernel_census.py --compare "$OUT"/al/new-$p-*.json -- "$OUT"/al/base-$p-*.json | head -14
done 2>&1 | tee "$OUT/al.txt"
tar -C "$OUT" -czf "$OUT/al.tgz" al && rm -rf "$OUT/al"
echo "done in ${SECONDS}s"
