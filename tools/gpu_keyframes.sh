#!/usr/bin/env bash
# Issue 37 on the GPU machine: exponential-map keyframe movies. Stages (STAGES, default "tests warm
# movie perframe"; each call stays under the device tool's 10 minutes given a few stages at a time):
#   tests     the keyframe tests on the real GPU (kernels, CLI)
#   warm      a tiny keyframe movie, so numba's cache is warm before anything is timed
#   movie     the 1080p60 zoom from the whole set to 1e-1000, 10 minutes (36,000 frames), the
#             whole `main.py --movie … --keyframes` command timed (target ≤ 300 s on one H200)
#   perframe  the per-frame method on the first minute of the same zoom, and the ratio
#   quality   12 frames spread over that zoom: SSIM and escape counts against direct renders
#   two       the zoom's deepest TWO_KEYFRAMES (400) keyframes alone on 1 GPU then 2 (target ≥ 1.8×)
#   movie2    the whole movie on 2 GPUs
# OVERSAMPLE=2 (default 1) draws keyframes twice as fine along each side (movie, perframe, quality).
#   bash tools/gpu_keyframes.sh OUT                       # tests warm movie perframe
#   STAGES="warm quality two" bash tools/gpu_keyframes.sh OUT; STAGES="warm movie2" …
# Without PyAV in the bundle the movie stage times the keyframes and the assembly in-process,
# without encoding, and its JSON says so ("encoded": false).
set -u
OUT=${1:?usage: gpu_keyframes.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
source ${BUNDLE:-.device-lite}/activate.sh
export PYTHONPATH=.:$PYTHONPATH NUMBA_CACHE_DIR=$PWD/.numba-cache
STAGES=${STAGES:-tests warm movie perframe}
SECONDS=0
{ date -u; git log -1 --oneline 2>/dev/null; nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
  echo "cores $(nproc)"
  python3 -c "import av; print('av', av.__version__)" 2>&1 | tail -1
  python3 -c "import numba, numpy, gmpy2; print('numba', numba.__version__, 'numpy', numpy.__version__)"; } > "$OUT/device.txt" 2>&1
cat "$OUT/device.txt"
mkdir -p /tmp/kf
B="python3 tools/keyframes_bench.py --out /tmp/kf --backend cuda --oversample ${OVERSAMPLE:-1} --json $OUT/keyframes.json"
for stage in $STAGES; do
  case $stage in
    tests)
      timeout 300 python3 -m pytest -q -p no:cacheprovider tests/kernels/test_expmap_gpu.py \
        tests/kernels/test_expmap.py tests/cli/test_movie_keyframes.py > "$OUT/tests.log" 2>&1
      echo "tests rc=$? (${SECONDS}s)"; grep -E "passed|failed|FAILED|^ERROR" "$OUT/tests.log" | tail -6 ;;
    warm)
      timeout 200 python3 main.py --movie /tmp/kf/w.mp4 --keyframes --restart --backend cuda \
        --size 64x36 --fps 10 --seconds 2 --width 1e-300 \
        --center "$(python3 -c "from kernels.mandelbrot.benches.locations import KORMANYOS_VERY_DEEP as L; print(L.center_re[:400] + ',' + L.center_im[:400])")" \
        > "$OUT/warm.txt" 2>&1
      echo "warm rc=$? (${SECONDS}s)"; tail -4 "$OUT/warm.txt" | cut -c1-300 ;;
    movie)
      left=$(( ${DEADLINE:-585} - SECONDS )); timeout $left $B movie --gpus ${GPUS:-0} --seconds ${MOVIE_SECONDS:-600} \
        --timeout $(( left - 15 )) > "$OUT/movie.txt" 2>&1
      echo "movie rc=$? (${SECONDS}s)"; grep -E "^movie:|^wrote|^keyframes|^encode|^timeline" "$OUT/movie.txt" | cut -c1-300 ;;
    perframe)
      timeout 300 $B perframe --gpus ${GPUS:-0} --seconds ${MOVIE_SECONDS:-600} \
        --per-frame-seconds ${PER_FRAME_SECONDS:-60} > "$OUT/perframe.txt" 2>&1
      echo "perframe rc=$? (${SECONDS}s)"; grep -E "^perframe:" "$OUT/perframe.txt" ;;
    quality)
      timeout 400 $B quality --seconds ${MOVIE_SECONDS:-600} > "$OUT/quality.txt" 2>&1
      echo "quality rc=$? (${SECONDS}s)"; grep -E "^\{|^quality: min" "$OUT/quality.txt" | cut -c1-300 ;;
    two)
      for g in 0 0,1; do
        timeout 280 $B keyframes --gpus $g --seconds ${MOVIE_SECONDS:-600} \
          --keyframes-limit ${TWO_KEYFRAMES:-400} --json "$OUT/two-$g.json" > "$OUT/two-$g.txt" 2>&1
        echo "keyframes on gpus=$g rc=$? (${SECONDS}s)"; grep -E "^keyframes:" "$OUT/two-$g.txt"
      done
      python3 - "$OUT" <<'EOF'
import json, sys
a, b = (json.load(open(f"{sys.argv[1]}/two-{g}.json")).get("keyframes", {}) for g in ("0", "0,1"))
wa, wb = a.get("wall_s"), b.get("wall_s")
print(f"two GPUs: {a.get('keyframes')} keyframes {wa} -> {wb} s "
      f"({f'{wa / wb:.2f}x' if wa and wb else 'not measured'}; target >= 1.8x)")
EOF
      ;;
    movie2)
      timeout 560 $B movie --gpus 0,1 --seconds ${MOVIE_SECONDS:-600} --json "$OUT/movie2.json" \
        > "$OUT/movie2.txt" 2>&1
      echo "movie on 2 GPUs rc=$? (${SECONDS}s)"; grep -E "^movie:" "$OUT/movie2.txt" | cut -c1-300 ;;
  esac
done
echo "done in ${SECONDS}s"
# numba's cache back to the caller (carry it next time)
[ -n "${PACK_CACHE:-}" ] && tar -C . -czf "$OUT/numba-cache.tgz" .numba-cache
