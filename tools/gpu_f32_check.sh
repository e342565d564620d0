#!/usr/bin/env bash
# Issue 22's float32 and roofs targets on one GPU, in one device call (under 5 minutes), from the
# repository root with the GPU environment active (as for tools/gpu_run.sh):
#   PYTHONPATH=.:$PYTHONPATH bash tools/gpu_f32_check.sh OUTDIR
# 1. the float32 bench (target: float32/float64 >= 1.8 on the whole set and the seahorse)
# 2. the roofs check (target: every ratio within 10 %)
# 3. the GPU tests of the float32 kernels, the roofs and the Mandelbrot kernels
# 4. a sweep of the float32 kernel's step grouping (GPU_EXPLORER_F32_BLOCK="steps,blocks",
#    kernels/mandelbrot/benches/escape_variants.py): one line per grouping, the same `counts` digest on every
#    line (else a grouping changed the counts), and the best grouping by the seahorse speed-up
set -u
out=${1:?usage: gpu_f32_check.sh OUTDIR}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$out/device.txt" 2>&1
cat "$out/device.txt"

echo "== float32 bench (default grouping)"
timeout 100 python3 main.py --bench --backend cuda --only mandelbrot-float32 --repeats 20 \
  --json "$out/float32.json" > "$out/float32.txt" 2>&1
echo "rc=$? (${SECONDS}s)"; grep -v "^#" "$out/float32.txt" | tail -8

echo "== roofs check"
GPU_EXPLORER_CACHE_DIR="$out/cache" timeout 50 python3 tools/roofs_check.py --backend cuda \
  --json "$out/roofs_check.json" 2>&1 | tail -7
echo "(${SECONDS}s)"

echo "== GPU tests"
timeout 100 python3 -m pytest -m gpu -q -p no:cacheprovider -ra tests/kernels/test_float32_gpu.py \
  tests/kernels/test_roofs.py tests/kernels/test_mandelbrot_gpu.py > "$out/tests.log" 2>&1
echo "rc=$? (${SECONDS}s)"; grep -E "passed|failed|FAILED|^ERROR" "$out/tests.log" | tail -10

echo "== float32 step-grouping sweep (escape-kernel ms, float32 speed-up on the same frame)"
rm -f "$out/sweep.jsonl"
for kb in 16,2 8,2 16,1 32,1 16,4 8,4 32,2 8,1; do
  if [ $SECONDS -gt 265 ]; then echo "sweep stopped at $kb: time"; break; fi
  GPU_EXPLORER_F32_BLOCK=$kb timeout 30 python3 tools/f32_block_sweep.py --repeats 10 \
    --json "$out/sweep.jsonl" 2>&1 | grep -E "^f32 block|Error|error" | tail -2
done
python3 - "$out/sweep.jsonl" <<'EOF'
import json, sys
try:
    pts = [json.loads(line) for line in open(sys.argv[1])]
except OSError:
    sys.exit("no sweep points")
pts = [p for p in pts if p["frames"]["seahorse"]["float32/float64"]]
if pts:
    best = max(pts, key=lambda p: p["frames"]["seahorse"]["float32/float64"])
    print("best by seahorse speed-up: GPU_EXPLORER_F32_BLOCK=%d,%d (x%.2f seahorse, x%.2f whole set)"
          % (best["steps"], best["blocks"], best["frames"]["seahorse"]["float32/float64"],
             best["frames"]["whole set"]["float32/float64"]))
    print("counts digests:", sorted({p["counts sha1"] for p in pts}), "(one digest: counts unchanged)")
EOF
echo "done in ${SECONDS}s"
