#!/usr/bin/env bash
# Issue 23's posters on a machine of several GPUs, band by band (one call): each band of a 16384²
# poster timed on one GPU and on two (tools/poster_band_profile.py --compare: wall, GPU phases,
# copies back, tables built), for this tree and, when the folder old/ holds an earlier tree
# (git archive COMMIT | tar -x -C old), for that one too; then tools/spread_bench.py's posters
# over 1 and 2 GPUs and a local Dask cluster, best of 3.
#   source .device-bundle-prof/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_band_check.sh $OUT
# (.device-bundle-prof: make-bundle.sh --no-qt gmpy2 dask distributed, renamed)
set -u
out=${1:?}; mkdir -p "$out"; export PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; echo "cores $(nproc)"
  python3 -c "import numba, numpy, gmpy2; print('numba', numba.__version__, 'numpy', numpy.__version__, 'gmpy2', gmpy2.version())"
  python3 -c "import dask; print('dask', dask.__version__)"; } > "$out/device.txt" 2>&1
cat "$out/device.txt"
compare() {   # tree poster
  local tree=$1 poster=$2
  echo "== bands of $poster, tree $tree"
  (cd $tree && PYTHONPATH=.:${PYTHONPATH#.:} timeout ${COMPARE_TIMEOUT:-150} python3 tools/poster_band_profile.py \
      --compare 0,1 --poster $poster --repeats ${COMPARE_REPEATS:-3}) > "$out/bands-$poster-$(basename $tree).txt" 2>&1
  echo "rc=$?"; grep -vE "rep [0-9]" "$out/bands-$poster-$(basename $tree).txt" | tail -12
}
if [ -d old/kernels ]; then
  cp tools/poster_band_profile.py tools/band_compare.py old/tools/
  compare old deep-1e100
fi
compare . deep-1e100
compare . seahorse-f64
echo "== posters (spread_bench)"
timeout ${POSTER_TIMEOUT:-240} python3 tools/spread_bench.py --json $out/spread.json --size 16384 \
    --repeats ${POSTER_REPEATS:-3} --gpu-counts 1,2 --movie-seconds 0 ${DASK:-} > $out/spread.txt 2>&1
echo "rc=$?"; grep -vE "warmed|^GPUs" $out/spread.txt | tail -16
