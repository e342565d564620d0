#!/usr/bin/env bash
# Issue 22's float32 speed target on one GPU, in one device call (under 4 minutes), from the
# repository root with the GPU environment active (as for tools/gpu_run.sh):
#   PYTHONPATH=.:$PYTHONPATH bash tools/gpu_f32_speed.sh OUTDIR
# 1. the float32 warp-kernel variants side by side in one process (tools/f32_block_sweep.py:
#    alternating rounds, the same frames, 1920x1080 and 3840x2160): escape-kernel ms and the
#    float32/float64 ratio per variant (target >= 1.8), and one counts digest per variant, which
#    must read "same" on every line
# 2. the float32 bench rows (main.py --bench --only mandelbrot-float32: whole set, seahorse, each
#    at 1080p and 2160p, and the deep pair, float32 vs float64 deltas) twice: "before" (the blocks
#    kernel, the deep float32 loop with 64-bit integers: GPU_EXPLORER_F32_DEEP_INT=64) and
#    "after" (the branchless kernel, the deep loop with 32-bit integers)
# 3. the float32 GPU tests (plain and deep; the branchless kernel's own at four groupings)
set -u
out=${1:?usage: gpu_f32_speed.sh OUTDIR}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
SECONDS=0
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader; } \
  > "$out/device.txt" 2>&1
cat "$out/device.txt"

echo "== variants (escape-kernel ms; xRATIO = float32/float64 on the same frame, median of rounds)"
# (/T: refill at T idle lanes, @W: W resident warps per SM; float64 keeps /8@16)
timeout 150 python3 tools/f32_block_sweep.py --rounds 3 --repeats 5 \
  --sizes 1920x1080 3840x2160 --json "$out/variants.jsonl" \
  --variants blocks:16,4 branchless:16,4 branchless:16,2 branchless:8,4 branchless:32,2 \
             branchless:16,8 branchless:16,4/4 branchless:16,4/16 branchless:16,4@32 \
             blocks:16,4@32 > "$out/variants.txt" 2>&1
echo "rc=$? (${SECONDS}s)"
if grep -q "^== summary" "$out/variants.txt"; then sed -n '/^== summary/,$p' "$out/variants.txt"
else grep -E "^(whole set|seahorse)" "$out/variants.txt" | cut -c1-600; tail -3 "$out/variants.txt"; fi

for k in blocks branchless; do
  if [ $k = blocks ]; then deep=64; label=before; else deep=32; label=after; fi
  echo "== bench mandelbrot-float32, $label: kernel $k, deep loop int$deep (${SECONDS}s)"
  GPU_EXPLORER_F32_KERNEL=$k GPU_EXPLORER_F32_DEEP_INT=$deep timeout 90 python3 main.py --bench --backend cuda \
    --only mandelbrot-float32 --repeats 20 --json "$out/bench-$k.json" > "$out/bench-$k.txt" 2>&1
  echo "rc=$?"; python3 - "$out/bench-$k.json" <<'EOF' || tail -5 "$out/bench-$k.txt"
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    m = r["metrics"]
    ratio = m.get("float32/float64")
    print(f"  {r['variant']:<30} {r['size']:<10} G iter/s {m.get('G iter/s') or 0:7.1f}"
          + (f"  x{ratio:.3f}" if ratio else ""))
EOF
done

echo "== float32 GPU tests (${SECONDS}s)"
timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider -ra tests/kernels/test_float32_gpu.py \
  tests/kernels/test_float32_branchless.py tests/kernels/test_deep_float32.py > "$out/tests.log" 2>&1
echo "rc=$?"; grep -E "passed|failed|FAILED|^ERROR" "$out/tests.log" | tail -8
echo "done in ${SECONDS}s"
