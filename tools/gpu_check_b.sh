#!/usr/bin/env bash
# Issue 21 on one GPU machine in one call: the deep GPU tests, the first-frame bench, the reference
# engines per precision (threads' crossover), the table's parallel build, KF's six locations;
# issue 22's overlays (GPU tests, off/on bench).
set -u
out=${1:?}; mkdir -p "$out"; export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$out/device.txt"
python3 -c "import numba, os; print('numba', numba.__version__, 'threads', numba.config.NUMBA_NUM_THREADS, 'cores', os.cpu_count())" >> "$out/device.txt" 2>&1
python3 -c "
import numba, numpy as np
from numba import njit, prange
@njit(parallel=True)
def f(a):
    for i in prange(a.size): a[i] += 1
f(np.zeros(10)); print('threading layer', numba.threading_layer())" >> "$out/device.txt" 2>&1
cat "$out/device.txt"
echo "== GPU tests (deep, newton, overlays)"
timeout 330 python3 -m pytest -m gpu -q -p no:cacheprovider -ra tests/kernels/test_deep_gpu.py tests/kernels/test_deep_period.py tests/kernels/test_deep_seahorse.py tests/kernels/test_deep_frames.py tests/kernels/test_kf_bench_gpu.py ${EXTRA_TESTS:-} > "$out/tests.log" 2>&1
echo "rc=$?"; grep -E "passed|failed|FAILED|^ERROR" "$out/tests.log" | tail -12
echo "== parallel table, newton (CPU, 16 cores)"
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/kernels/test_bla_parallel.py tests/kernels/test_minibrot_newton.py tests/kernels/test_gil_free.py 2>&1 | tail -2
timeout 90 python3 tools/bla_build_bench.py --repeats 9 2>&1 | tail -8
echo "== deep first frames"
timeout 200 python3 -m kernels.mandelbrot.benches.bench --backend cuda --repeats 10 --json $out/deep.json > $out/deep.txt 2>&1; echo "rc=$?"
grep -E "first|re-render" $out/deep.txt | cut -c1-260
echo "== reference engines per precision"
timeout 100 python3 tools/reference_bench.py --bits-only --repeats 3 2>&1 | tail -14
echo "== KF"
timeout 150 python3 main.py --bench --backend cuda --only deep-kf --repeats 3 --json $out/kf.json > $out/kf.txt 2>&1; echo "rc=$?"
grep -E "first frame" $out/kf.txt | cut -c1-400
if [ -f tools/overlay_bench.py ]; then
  echo "== overlays off/on"; timeout 120 python3 tools/overlay_bench.py --backend cuda --repeats 20 --json $out/overlays.json 2>&1 | tail -14
fi
