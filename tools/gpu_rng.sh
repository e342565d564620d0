#!/usr/bin/env bash
# The rng package (issue #11) on the GPU machine, in one command from the project root:
#   source .device-bundle-rng/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_rng.sh "$OUT"
# (the bundle carries nvmath-python for cuRAND's Philox; without it that generator is skipped with
# its reason). Runs the rng GPU tests, prints available(), then the GPU bench with its in-run
# ceilings (d2d copy, fill = write, read, integer throughput). Each step has a time limit, so the
# whole stays within about 7 minutes. Writes into the folder given:
#   rng_device.txt (GPU, clocks, versions, available()), rng_gpu_tests.log, rng_bench.txt, rng.json
# The CPU twins' bench belongs to the 2-core machine: `python3 main.py --bench --backend cpu --only rng`.
set -u
out=${1:?usage: gpu_rng.sh OUTPUT_DIR}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
start=$SECONDS
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.max.mem,power.limit --format=csv
  python3 -c "import numba, numba.cuda, numpy; print('numba', numba.__version__, 'numpy', numpy.__version__)"
  python3 -c "import nvmath; print('nvmath-python', nvmath.__version__)" 2>&1 | tail -1
  python3 -c "from numba import cuda; d = cuda.get_current_device(); \
print('SMs', d.MULTIPROCESSOR_COUNT, 'max SM clock MHz', d.CLOCK_RATE / 1e3, 'cc', d.compute_capability)"
  echo "available():"
  python3 -c "from kernels.backend import resolve; from kernels.rng import available; \
import json; print(json.dumps(available(resolve('cuda')), indent=1))"
} > "$out/rng_device.txt" 2>&1
cat "$out/rng_device.txt"

echo "== rng GPU tests (real GPU)"
timeout 200 python3 -m pytest -m gpu -q -rs -p no:cacheprovider --durations=8 \
  tests/kernels/test_rng_gpu.py > "$out/rng_gpu_tests.log" 2>&1
echo "gpu tests rc=$? ($((SECONDS - start)) s so far)"; tail -25 "$out/rng_gpu_tests.log"

echo "== rng bench, GPU"
timeout 230 python3 main.py --bench --backend cuda --only rng --repeats 10 --json "$out/rng.json" \
  > "$out/rng_bench.txt" 2>&1
echo "bench rc=$? ($((SECONDS - start)) s in all)"; cat "$out/rng_bench.txt"
