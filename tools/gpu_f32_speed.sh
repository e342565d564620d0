#!/usr/bin/env bash
# Issue 22's float32 speed target on one GPU, in one device call (about 4 minutes, 10 at most),
# from the repository root with the GPU environment active (as for tools/gpu_run.sh):
#   PYTHONPATH=.:$PYTHONPATH bash tools/gpu_f32_speed.sh OUTDIR
# 1. the app's float32 kernel (branch-free blocks, 16 steps x 4 blocks, refill at 16 idle lanes)
#    against the same kernel at the float64 kernel's threshold (16,4/8), side by side in one
#    process (tools/f32_block_sweep.py: alternating rounds, 1920x1080 and 3840x2160):
#    escape ms per frame and float32/float64 (target >= 1.8), then the escape kernel alone
#    (launched back to back: the frame's launch gaps and finish kernel left out); the counts
#    digest must read "same" on every line
# 2. the deep pair (1e-25, 10,000 iterations, 1080p; float64 vs float32 deltas, alternating
#    rounds; steps, ps a step, registers): before (make_walk's float32 loop,
#    GPU_EXPLORER_F32_DEEP_INT=64) and after (the float32 walk, make_walk(load4=): 32-bit integers, one load a step)
# 3. the bench rows as the app runs them (main.py --bench --only mandelbrot-float32)
# 4. the float32 GPU tests (plain, groupings, deep) and the PTX/SASS-count tests
set -u
out=${1:?usage: gpu_f32_speed.sh OUTDIR}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
SECONDS=0
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader; } \
  > "$out/device.txt" 2>&1
cat "$out/device.txt"

echo "== 1. float32 kernels (escape ms; xRATIO = float32/float64 on the same frame, median of rounds)"
timeout 150 python3 tools/f32_block_sweep.py --rounds 3 --repeats 5 --alone 20 \
  --sizes 1920x1080 3840x2160 --json "$out/variants.jsonl" \
  --variants 16,4 16,4/8 > "$out/variants.txt" 2>&1
echo "rc=$? (${SECONDS}s)"
if grep -q "^== summary" "$out/variants.txt"; then sed -n '/^== summary/,$p' "$out/variants.txt"
else grep -E "^(whole set|seahorse)" "$out/variants.txt" | cut -c1-600; tail -3 "$out/variants.txt"; fi

for deep in 64 32; do
  if [ $deep = 64 ]; then label="before (make_walk's loop)"; else label="after (the float32 walk)"; fi
  echo "== 2. deep pair, float32 loop $label (${SECONDS}s)"
  GPU_EXPLORER_F32_DEEP_INT=$deep timeout 100 python3 tools/deep_f32_pair.py --rounds 3 --repeats 3 \
    > "$out/deep-$deep.txt" 2>&1
  echo "rc=$?"; grep -vE "Warning|warn\(|^\s*$" "$out/deep-$deep.txt" | tail -5 | cut -c1-400
done

echo "== 3. bench mandelbrot-float32 as the app runs it (${SECONDS}s)"
timeout 80 python3 main.py --bench --backend cuda --only mandelbrot-float32 --repeats 20 \
  --json "$out/bench.json" > "$out/bench.txt" 2>&1
echo "rc=$?"; python3 - "$out/bench.json" <<'EOF' || tail -5 "$out/bench.txt"
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    m = r["metrics"]
    ratio = m.get("float32/float64")
    print(f"  {r['variant']:<30} {r['size']:<10} G iter/s {m.get('G iter/s') or 0:7.1f}"
          f"  escape/kernel ms {m.get('escape ms') or m.get('kernel ms') or 0:.3f}"
          + (f"  x{ratio:.3f}" if ratio else ""))
EOF

echo "== 4. float32 GPU tests and PTX/SASS counts (${SECONDS}s)"
timeout 150 python3 -m pytest -q -p no:cacheprovider -ra tests/kernels/test_float32_gpu.py \
  tests/kernels/test_float32_groupings.py tests/kernels/test_deep_float32.py > "$out/tests.log" 2>&1
echo "rc=$?"; grep -E "passed|failed|FAILED|^ERROR|SKIPPED" "$out/tests.log" | tail -8
echo "done in ${SECONDS}s"
