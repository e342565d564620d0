#!/usr/bin/env bash
# The closing GPU call of a stop, on a machine of several GPUs with the Qt bundle, from the
# repository root:
#   source .device-bundle/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_closing.sh OUTDIR
# 1. the deep bench first, in a fresh process with an empty numba cache (its first frames must
#    not wait for any compile the warm-up left out; targets 1e-100 <= 60 ms, 1e-300 <= 100 ms,
#    1e-1000 <= 1.0 s on an H100)
# 2. every GPU test (the window's exports over all GPUs, the spread exit test among them)
set -u
out=${1:?usage: gpu_closing.sh OUTDIR}; mkdir -p "$out"; export PYTHONUNBUFFERED=1
SECONDS=0
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; echo "cores $(nproc)"; } > "$out/device.txt" 2>&1
cat "$out/device.txt"
echo "== deep bench"
timeout 150 python3 -m kernels.mandelbrot.benches.bench --backend cuda --repeats 10 > "$out/deepbench.txt" 2>&1
echo "rc=$? (${SECONDS}s)"; grep -E "first frame|re-render  " "$out/deepbench.txt"
echo "== GPU tests"
timeout 420 python3 -m pytest -m gpu -q -p no:cacheprovider -ra > "$out/tests.log" 2>&1
echo "rc=$? (${SECONDS}s)"; grep -E "passed|failed|FAILED|^ERROR" "$out/tests.log" | tail -15
