#!/usr/bin/env bash
# Issue 23 on a machine of several GPUs, in one call (bundle: make-bundle.sh --no-qt gmpy2 dask
# distributed av pyqtgraph py-spy): posters 16384² over 1 GPU, all GPUs and a local Dask cluster
# (tools/spread_bench.py: seahorse float64, deep 1e-100 and 1e-30, KF's 1e1086 from its .kfr);
# a 1080p60 deep zoom movie on one GPU and on all, whole command timed, and its decoded frames
# compared; py-spy's view of the GIL in the all-GPU movie; the reference engines at high precision.
set -u
out=${1:?}; mkdir -p "$out"; export PYTHONUNBUFFERED=1
scratch=/tmp/spread-check; mkdir -p $scratch
now() { date +%s.%N; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; echo "cores $(nproc)"
  python3 -c "import numba, numpy, dask, distributed, av, gmpy2; print('numba', numba.__version__, 'numpy', numpy.__version__, 'dask', dask.__version__, 'av', av.__version__, 'gmpy2', gmpy2.version())"; } > "$out/device.txt" 2>&1
cat "$out/device.txt"
echo "== posters (spread_bench)"
timeout ${POSTER_TIMEOUT:-300} python3 tools/spread_bench.py --json $out/spread.json --size ${POSTER_SIZE:-16384} --repeats 2 --movie-seconds 0 > $out/spread.txt 2>&1
echo "rc=$?"; grep -vE "warmed|^GPUs" $out/spread.txt | tail -24
c=$(python3 -c "from kernels.mandelbrot.benches.locations import KORMANYOS_VERY_DEEP as L; print(L.center_re[:140] + ',' + L.center_im[:140])")
deep=(--backend cuda --size 1920x1080 --fps 60 --seconds ${MOVIE_SECONDS:-20} --center "$c" --width 1e-100 --restart)
run() { local name=$1; shift; local t0=$(now)
  "$@" > "$out/$name.txt" 2>&1; local rc=$?
  echo "-- $name rc=$rc whole $(python3 -c "print(f'{$(now)-$t0:.2f}')") s"; tail -2 "$out/$name.txt"; }
echo "== deep movie, whole command"
run movie_warm python3 main.py --movie $scratch/w.mp4 --gpus all --backend cuda --size 64x36 --fps 10 --seconds 2 --center "$c" --width 1e-100 --restart
for rep in 1 2; do
  run movie_one$rep python3 main.py --movie $scratch/one.mp4 --gpus 0 "${deep[@]}"
  run movie_all$rep python3 main.py --movie $scratch/all.mp4 --gpus all "${deep[@]}"
done
python3 - $scratch/one.mp4 $scratch/all.mp4 <<'PY' 2>&1 | tee $out/movie_compare.txt
import sys, av, numpy as np
frames = []
for p in sys.argv[1:]:
    with av.open(p) as f:
        frames.append([fr.to_ndarray(format="rgb24") for fr in f.decode(video=0)])
a, b = frames
same = sum(np.array_equal(x, y) for x, y in zip(a, b))
print(f"decoded: one GPU {len(a)} frames, all GPUs {len(b)} frames; identical frames {same} of {min(len(a), len(b))}")
PY
echo "== py-spy --gil, deep movie on all GPUs"
timeout 150 /tmp/site/bin/py-spy record --gil --threads --rate 250 --format raw -o "$out/spy_gil_deep.txt" -- python3 main.py --movie $scratch/s.mp4 --gpus all "${deep[@]}" > "$out/spy_run.txt" 2>&1
echo "py-spy rc=$?"
echo "== reference engines at high precision"
timeout 120 python3 tools/reference_bench.py --bits-only --bits 3677,8192,16384,33220 --skip fixed,gmpy2 --repeats 3 2>&1 | tail -7
