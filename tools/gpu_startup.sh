#!/usr/bin/env bash
# Issue 38 on the GPU machine: the whole `--render` command for each KF file at 1024x1024 (median
# of 5 plain runs after one untimed run that fills numba's cache), where its seconds go
# (tools/startup_profile.py), and the GPU pixel check of tests/cli/test_render_pixels.py.
#   bash tools/gpu_startup.sh OUT        (BUNDLE=.device-lite by default)
set -u
OUT=${1:?usage: gpu_startup.sh OUT}; mkdir -p "$OUT"
source ${BUNDLE:-.device-lite}/activate.sh
export PYTHONPATH=.:${PYTHONPATH:-} NUMBA_CACHE_DIR=$PWD/.numba-cache
{ git log -1 --oneline; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } \
  > "$OUT/machine.txt" 2>&1
FILES="1e14 1e50 5e113 5e227 4e533 1e1086"
echo "== first run of each (fills numba's cache where it is empty; not in the medians)"
for n in $FILES; do
  s=$(date +%s.%N)
  python3 main.py --render mandelbrot --size 1024x1024 --backend cuda \
    --location resources/kf-$n.kfr --out "$OUT/kf-$n.png" > "$OUT/first-$n.log" 2>&1
  rc=$?; echo "$n rc=$rc $(python3 -c "print(f'{$(date +%s.%N) - $s:.2f} s')")"
  [ $rc = 0 ] || tail -3 "$OUT/first-$n.log"
done
echo "== 1e14 with the bundle as installed (pip --no-compile: no bytecode for its packages)"
echo "PYTHONDONTWRITEBYTECODE=${PYTHONDONTWRITEBYTECODE:-unset}; numpy bytecode: $(ls /tmp/site/numpy/__pycache__ 2>/dev/null | wc -l) files"
python3 tools/startup_profile.py --backend cuda --size 1024x1024 --location resources/kf-1e14.kfr \
  --runs 5 --top 15 --json "$OUT/nopyc-1e14.json" > "$OUT/nopyc-1e14.txt" 2>&1
echo "1e14 rc=$?: $(grep -m1 'whole command' "$OUT/nopyc-1e14.txt")"
# what any pip install does (it compiles bytecode); with PYTHONDONTWRITEBYTECODE set, every start
# compiled numpy's and the app's sources again
SYS=$(python3 -c "import os, numba, numba_cuda, llvmlite
print(' '.join(os.path.dirname(m.__file__) for m in (numba, numba_cuda, llvmlite)))" 2>/dev/null)
python3 -m compileall -q -j 0 /tmp/site $SYS cli kernels services main.py > /dev/null 2>&1
echo "== whole command, warm cache, bytecode compiled (median of 5)"
for n in $FILES; do
  python3 tools/startup_profile.py --backend cuda --size 1024x1024 \
    --location resources/kf-$n.kfr --runs 5 --top 15 --json "$OUT/startup-$n.json" \
    > "$OUT/startup-$n.txt" 2>&1
  rc=$?; echo "$n rc=$rc: $(grep -m1 'whole command' "$OUT/startup-$n.txt")"
  [ $rc = 0 ] || tail -3 "$OUT/startup-$n.txt"
done
echo "== where 1e14's seconds go"
sed -n '/^phase/,/^imports by package/p' "$OUT/startup-1e14.txt"
echo "== pixels: --render against the window's renderer, on the GPU"
python3 -m pytest -q -p no:cacheprovider -m gpu tests/cli/test_render_pixels.py > "$OUT/pixels.log" 2>&1
echo "pixels rc=$?: $(tail -1 "$OUT/pixels.log")"
tar czf "$OUT/numba-cache.tgz" .numba-cache 2>/dev/null
