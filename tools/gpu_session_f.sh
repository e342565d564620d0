#!/usr/bin/env bash
# A headless call (light bundle): the 5e227 pixels the default render marks, drawn with
# --proved-pixels and audited in MPFR; the GPU tests without Qt; then the deep bench of this tree
# against BASE (default .ab-base: `git archive REV kernels cli services main.py resources`) through
# tools/gpu_ab.sh, so the cost of issue 34's and 36's changes is a ratio on one card.
#   bash tools/gpu_session_f.sh OUT [BASE]
set -u
FINAL=${1:?usage: gpu_session_f.sh OUT [BASE]}; OUT=$FINAL/r; mkdir -p "$OUT" /tmp/r34
BASE=${2:-.ab-base}
source ${BUNDLE:-.device-lite}/activate.sh
export PYTHONPATH=.:$PYTHONPATH NUMBA_CACHE_DIR=$PWD/.numba-cache PYTHONUNBUFFERED=1
SECONDS=0
{ lscpu | grep -iE "numa|model name"; nvidia-smi topo -m | head -4; } 2>&1 | tee "$OUT/topo.txt"
# issue 33's pageable points: one process, several measurements, then pinned to each NUMA node
timeout 40 python3 tools/pageable_numa.py 2>&1 | tail -1
for node in $(lscpu -p=NODE | grep -v '^#' | sort -u); do
  cpus=$(lscpu -p=CPU,NODE | grep -v '^#' | awk -F, -v n=$node '$2==n {print $1}' | paste -sd,)
  timeout 40 taskset -c $cpus python3 tools/pageable_numa.py 2>&1 | tail -1
done
echo "(${SECONDS}s)"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } 2>&1 | tee "$OUT/device.txt"
f=resources/kf-5e227.kfr
for how in default proved; do
  extra=(); [ $how = proved ] && extra=(--proved-pixels)
  timeout 120 python3 main.py --render mandelbrot --location $f --size 1024x1024 --backend cuda \
    --out /tmp/r34/5e227-$how.npy "${extra[@]}" > "$OUT/5e227-$how.log" 2>&1
  echo "5e227 $how rc=$? (${SECONDS}s)"; tail -3 "$OUT/5e227-$how.log" | cut -c1-250
done
# 300 random pixels and 32 past the reference's escape (with the default render as a second
# file every pixel the tier changed would count as disputed: ~28,000 MPFR runs)
timeout 150 python3 tools/deep_audit.py --location $f --size 1024x1024 /tmp/r34/5e227-proved.npy \
  --random 300 --past auto --threads $(nproc) > "$OUT/audit-5e227.txt" 2>&1
echo "audit rc=$? (${SECONDS}s)"; head -14 "$OUT/audit-5e227.txt" | cut -c1-200
timeout 280 python3 -m pytest -q -p no:cacheprovider -m gpu tests/kernels tests/services tests/cli \
  > "$OUT/gpu-tests.log" 2>&1
echo "gpu tests rc=$? (${SECONDS}s)"
grep -E "^E |FAILED|ERROR|passed|failed" "$OUT/gpu-tests.log" | head -30
base=$(cd "$BASE" && pwd)
left=$(( 560 - SECONDS ))
if [ $left -gt 60 ]; then
  for tree in new base new base; do
    [ $(( 560 - SECONDS )) -lt 40 ] && break
    dir=$PWD; [ $tree = base ] && dir=$base
    t=$SECONDS
    (cd "$dir" && PYTHONPATH="$dir:${PYTHONPATH#.:}" timeout $(( 560 - SECONDS )) python3 main.py --bench \
       --backend cuda --only mandelbrot-deep --repeats 5 --json "$OUT/$tree-$t.json" > "$OUT/$tree-$t.txt" 2>&1)
    echo "bench $tree rc=$? $((SECONDS - t)) s"
  done
  python3 tools/bench_diff.py $OUT/new-*.json -- $OUT/base-*.json 2>&1 | tail -25
fi
echo "== done (${SECONDS}s)"
tar -C "$FINAL" -czf "$FINAL/results.tgz" r && rm -rf "$OUT"
