#!/usr/bin/env bash
# One GPU call for the float64 escape kernel's divergence work (docs/PERFORMANCE.md, "Float64
# Mandelbrot"; its history in docs/notes/experiments.md):
#   source .device-bundle-qt/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_mandelbrot_divergence.sh "$OUT" [sweep|tests|divergence|bench]...
# sweep: tools/mandelbrot_divergence_sweep.py (SWEEP_ARGS); tests: the Mandelbrot GPU tests on the
# real GPU; divergence: the mandelbrot-divergence bench; bench: the whole mandelbrot bench (JSON).
set -u
out=${1:?usage: gpu_mandelbrot_divergence.sh OUTPUT_DIR [sweep|tests|divergence|bench]...}
shift
mkdir -p "$out"
export PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; } > "$out/device.txt" 2>&1
cat "$out/device.txt"
for mode in "$@"; do
  case $mode in
    sweep) echo "== sweep"; timeout 300 python3 tools/mandelbrot_divergence_sweep.py ${SWEEP_ARGS:-} --json "$out/sweep.json" 2>&1 | tee "$out/sweep.txt" | grep -v Warning ;;
    tests) echo "== Mandelbrot GPU tests (real GPU)"
           timeout 300 python3 -m pytest -m gpu -q -p no:cacheprovider tests/kernels/test_mandelbrot*.py > "$out/gpu_tests.log" 2>&1
           echo "rc=$?"; tail -5 "$out/gpu_tests.log" ;;
    divergence) echo "== mandelbrot-divergence"
           timeout 300 python3 main.py --bench --backend cuda --only mandelbrot-divergence --repeats ${REPEATS:-10} --json "$out/div.json" > "$out/div.txt" 2>&1
           echo "rc=$?"; grep -v "^#" "$out/div.txt" | tail -25 ;;
    bench) echo "== mandelbrot bench"
           timeout 320 python3 main.py --bench --backend cuda --only mandelbrot --repeats ${REPEATS:-10} --json "$out/mb.json" > "$out/mb.txt" 2>&1
           echo "rc=$?"; tail -40 "$out/mb.txt" ;;
  esac
done
