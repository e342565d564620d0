#!/usr/bin/env bash
# The rng package (issue #11) on the GPU machine, in one command from the project root:
#   source .device-bundle-rng/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_rng.sh "$OUT"
# (the bundle carries nvmath-python for cuRAND's Philox; without it that generator is skipped with
# its reason). Writes six files into the folder given.
set -u
out=${1:?usage: gpu_rng.sh OUTPUT_DIR}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
  python3 -c "import numba, numba.cuda, numpy; print('numba', numba.__version__, 'numpy', numpy.__version__)"
  python3 -c "import nvmath; print('nvmath-python', nvmath.__version__)" 2>&1 | tail -1
  python3 -c "from kernels.backend import resolve; from kernels.rng import available; \
import json; print(json.dumps(available(resolve('cuda')), indent=1))"
} > "$out/rng_device.txt" 2>&1
echo "== rng GPU tests (real GPU)"
python3 -m pytest -m gpu -q -rs -p no:cacheprovider tests/kernels/test_rng_gpu.py > "$out/rng_gpu_tests.log" 2>&1
echo "gpu tests rc=$?"; tail -12 "$out/rng_gpu_tests.log"
echo "== rng bench, GPU"
python3 main.py --bench --backend cuda --only rng --repeats 10 --json "$out/rng.json" > "$out/rng_bench.txt" 2>&1
echo "bench rc=$?"; cat "$out/rng_bench.txt"
echo "== rng bench, CPU (the CPU twins against the CPU copy)"
python3 main.py --bench --backend cpu --only rng --repeats 5 --json "$out/rng_cpu.json" > "$out/rng_cpu_bench.txt" 2>&1
echo "cpu bench rc=$?"; grep -E "rng-reduce|rng-histogram|rng-monte" "$out/rng_cpu_bench.txt"
