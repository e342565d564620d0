#!/usr/bin/env bash
# Stop 49, issue 37: why the keyframe movie's one worker thread bounds it while the GPU idles half
# the time. The zoom's first 1e-100 at 1080p60 (60 s, 3,600 frames, its keyframes as the whole
# zoom's are, 10.8 frames an octave): the movie command with every thread sampled, then the same
# frames in-process without encoding (is it the encoder lanes beside the worker?), in one call.
#   bash tools/device_head.sh pack; carry .device-av .device-head.tgz .numba-cache
set -u
OUT=${1:?usage: gpu_session_ae.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
bash tools/device_head.sh unpack
source .device-av/activate.sh
export PYTHONPATH=.:$PYTHONPATH NUMBA_CACHE_DIR=$PWD/.numba-cache
SECONDS=0
C="$(python3 -c "from kernels.mandelbrot.benches.locations import KORMANYOS_VERY_DEEP as L; print(L.center_re[:400] + ',' + L.center_im[:400])")"
M="--keyframes --restart --backend cuda --size 1920x1080 --fps 60 --seconds 60 --width 1e-100 --center $C"
timeout 120 python3 main.py --movie /tmp/w.mp4 --keyframes --restart --backend cuda --size 64x36 --fps 10 \
  --seconds 2 --width 1e-300 --center "$C" > "$OUT/warm.txt" 2>&1; echo "warm rc=$? (${SECONDS}s)"
timeout 200 python3 main.py --movie /tmp/plain.mp4 $M > "$OUT/plain.txt" 2>&1
echo "plain rc=$? (${SECONDS}s)"; grep -E "^wrote|^keyframes|^encode" "$OUT/plain.txt" | cut -c1-400
timeout 200 python3 tools/movie_sampled.py "$OUT/sampled.txt" -- --movie /tmp/s.mp4 $M > "$OUT/sampled-run.txt" 2>&1
echo "sampled rc=$? (${SECONDS}s)"; grep -E "^wrote|^keyframes|^encode" "$OUT/sampled-run.txt" | cut -c1-400
timeout 150 python3 tools/keyframes_bench.py movie --no-encode --out /tmp/kf --backend cuda --seconds 60 \
  --width 1e-100 --json "$OUT/noencode.json" > "$OUT/noencode.txt" 2>&1
echo "no-encode rc=$? (${SECONDS}s)"; grep -E "^movie:" "$OUT/noencode.txt" | tr '\n' ' ' | cut -c1-600; echo
echo "done in ${SECONDS}s"
