#!/usr/bin/env bash
# Deep zoom on the GPU machine: the GPU tests of kernels/mandelbrot/deep against the CPU twin, then
# the deep-zoom workloads (1e-30 .. 1e-1000, 1920x1080) as JSON. Run from the repository root:
#   source .device-bundle/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_deep.sh "$OUT"
# Needs gmpy2 (the device bundle has it). Writes into the folder given:
#   deep_device.txt, deep_gpu_tests.log, deep_bench.json, deep_bench.txt
set -u
out=${1:?usage: gpu_deep.sh OUTPUT_DIR}
mkdir -p "$out"
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv;
  python3 -c "import gmpy2, numba, numba_cuda; print('gmpy2', gmpy2.version(), 'numba', numba.__version__)"; } \
  > "$out/deep_device.txt" 2>&1
echo "== deep-zoom GPU tests (real GPU: full sizes)"
python3 -m pytest -m gpu -q -p no:cacheprovider tests/kernels/test_deep_gpu.py > "$out/deep_gpu_tests.log" 2>&1
echo "gpu tests rc=$?"; tail -4 "$out/deep_gpu_tests.log"
echo "== deep-zoom workloads (first frame, re-render, pan) on the GPU"
python3 -m kernels.mandelbrot.benches.bench --backend cuda --repeats ${DEEP_REPEATS:-10} \
  --json "$out/deep_bench.json" > "$out/deep_bench.txt" 2>&1
echo "bench rc=$?"; tail -14 "$out/deep_bench.txt"
