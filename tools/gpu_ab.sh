#!/usr/bin/env bash
# Kernel times of two trees on one card in one call, so that a refactor's "same speed" is a
# measured ratio rather than a comparison across machines. BASE is a copy of an earlier commit's
# kernels/, cli/ and main.py (git archive REV kernels cli main.py | tar -x -C BASE); each workload
# prefix is benched new, base, new, base (ROUNDS pairs, default 2) so that drift shows as spread.
# On the GPU machine:
#   source .device-bundle/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_ab.sh "$OUT" BASE mandelbrot rng vector
# then: python3 tools/bench_diff.py OUT/new-*.json -- OUT/base-*.json
set -u
out=${1:?usage: gpu_ab.sh OUTPUT_DIR BASE_DIR PREFIX...}; base=$(cd "${2:?}" && pwd); shift 2
here=$PWD
mkdir -p "$out"
export PYTHONUNBUFFERED=1
for p in "$@"; do
  for round in $(seq "${ROUNDS:-2}"); do
    for tree in new base; do
      dir=$here; [ "$tree" = base ] && dir=$base
      (cd "$dir" && PYTHONPATH="$dir:${PYTHONPATH#.:}" timeout 280 python3 main.py --bench --backend cuda \
         --only "$p" --repeats "${REPEATS:-5}" --json "$out/$tree-$p-$round.json" > "$out/$tree-$p-$round.txt" 2>&1)
      echo "$tree $p round $round rc=$?"
    done
  done
done
