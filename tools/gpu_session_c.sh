#!/usr/bin/env bash
# One GPU call after the keyframe loops changed the deep kernels' pixel offset (issue 37): the deep
# and keyframe GPU tests, the deep bench's re-render and first frames against the previous figures,
# a warm-up movie, then the 1080p60 10-minute keyframe zoom to 1e-1000 stopped at MOVIE_LIMIT s.
#   bash tools/gpu_session_c.sh OUT
set -u
OUT=${1:?usage: gpu_session_c.sh OUT}; mkdir -p "$OUT"
source ${BUNDLE:-.device-lite}/activate.sh
export PYTHONPATH=.:$PYTHONPATH NUMBA_CACHE_DIR=$PWD/.numba-cache PYTHONUNBUFFERED=1
SECONDS=0
echo "== deep and keyframe GPU tests"
timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/kernels/test_deep_gpu.py \
  tests/kernels/test_deep_exact_gpu.py tests/kernels/test_expmap_gpu.py tests/kernels/test_expmap.py \
  tests/kernels/test_overlays_deep.py tests/kernels/test_deep_frames.py tests/cli/test_movie_keyframes.py 2>&1 \
  | grep -E "^E |FAILED|passed|failed|^tests.*:[0-9]+:" | head -30
echo "(${SECONDS}s)"
STAGES="warm" bash tools/gpu_keyframes.sh "$OUT/kf" 2>&1 | tail -6; echo "(${SECONDS}s)"
python3 tools/keyframes_bench.py movie --out /tmp/kf --backend cuda --gpus 0 --seconds 600 \
  --timeout ${MOVIE_LIMIT:-300} --json "$OUT/movie.json" > "$OUT/movie.txt" 2>&1
echo "movie rc=$? (${SECONDS}s)"; grep -E "^movie:|^wrote|^keyframes|^encode|^timeline" "$OUT/movie.txt" | cut -c1-300 | head -20
tail -5 "$OUT/movie.txt" | cut -c1-300
