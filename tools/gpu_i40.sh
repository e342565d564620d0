#!/usr/bin/env bash
# Issue 40 on the GPU machine: where numba has no folder for its cache the GPU kernels compile in
# memory too (numba-cuda's own dispatcher and cache). The tests of the fallback, then --render on
# the GPU (float64 and deep) as a user who can write nowhere, each beside the same render by this
# user with a cache. Usage: tools/gpu_i40.sh OUT_DIR (logs and pictures go there).
set -u
source ${BUNDLE:-.device-lite}/activate.sh
export PYTHONPATH=.:${PYTHONPATH:-} NUMBA_CACHE_DIR=$PWD/.numba-cache
OUT=${1:-${OUT:-/tmp/out}}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"

echo "== tests (the toolkit test defines a cached numba.cuda kernel with no folder for it)"
python3 -m pytest -q -p no:cacheprovider -rs tests/kernels/test_numba_cache.py \
    tests/cli/test_read_only_install.py tests/faults/test_fault_cli.py -k "cache or read_only" \
    --tb=short 2>&1 | grep -v Deprecation | tail -30

# the unprivileged runs: no HOME, no NUMBA_CACHE_DIR, only PATH and what the bundle needs to load
PY=$(command -v python3)
pics=$(mktemp -d); chmod 777 "$pics"
as_nobody() {
    env -i PATH="$(dirname "$PY"):/usr/bin:/bin" HOME=/nonexistent LANG=C.UTF-8 \
        PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}" \
        setpriv --reuid=65534 --regid=65534 --clear-groups "$PY" main.py "$@"
}
for place in "" "--center -0.743643887037151,0.131825904205330 --width 1e-20"; do
    name=$([ -z "$place" ] && echo float64 || echo deep)
    echo "== --render $name on the GPU, as user 65534 with no home (in memory)"
    start=$(date +%s.%N)
    as_nobody --render mandelbrot --size 640x360 --backend cuda $place \
        --out "$pics/$name-nobody.png" > "$OUT/$name-nobody.log" 2>&1
    echo "exit $? in $(echo "$(date +%s.%N) - $start" | bc) s"; cat "$OUT/$name-nobody.log"
    echo "== the same as $(id -un), cache in $NUMBA_CACHE_DIR (run twice: the second is warm)"
    python3 main.py --render mandelbrot --size 640x360 --backend cuda $place \
        --out "$pics/$name-owner.png" > /dev/null 2>&1
    start=$(date +%s.%N)
    python3 main.py --render mandelbrot --size 640x360 --backend cuda $place \
        --out "$pics/$name-owner.png" > "$OUT/$name-owner.log" 2>&1
    echo "exit $? in $(echo "$(date +%s.%N) - $start" | bc) s"; cat "$OUT/$name-owner.log"
    cmp -s "$pics/$name-nobody.png" "$pics/$name-owner.png" && echo "same picture" \
        || echo "PICTURES DIFFER (or one is missing)"
done
cp "$pics"/*.png "$OUT"/ 2>/dev/null; rm -rf "$pics"
