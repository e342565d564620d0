#!/usr/bin/env bash
# Issue 23's whole-movie target on two GPUs, at several movie lengths, in one call:
#   source .device-bundle-spy/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_movie_long.sh OUT
# (a bundle without Qt: gmpy2 av pyqtgraph numpy; py-spy not needed here)
# 1. the launch and movie tests that run on a real GPU;
# 2. tools/movie_job_profile.py: one GPU's frames one after another, wall time against GPU time
#    a frame and the host functions that take the most (cProfile on the worker's thread);
# 3. the 1080p60 zoom to 1e-100 (Kormanyos's very deep location) for each length in
#    MOVIE_LENGTHS (seconds, default "20 60 120"), the whole command on 1 GPU then 2, with the
#    command's timeline; the shortest length's frames compared between 1 and 2 GPUs.
set -u
out=${1:?usage: gpu_movie_long.sh OUT}; mkdir -p "$out"; export PYTHONUNBUFFERED=1
s=/tmp/long; rm -rf $s; mkdir -p $s; SECONDS=0
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; echo "cores $(nproc)"
  python3 -c "import numba, numpy, av, gmpy2; print('numba', numba.__version__, 'numpy', numpy.__version__, 'av', av.__version__, 'gmpy2', gmpy2.version())"; } > "$out/device.txt" 2>&1
cat "$out/device.txt"
if [ -z "${SKIP_TESTS:-}" ]; then
  timeout 200 python3 -m pytest -q -p no:cacheprovider tests/kernels/test_launch.py \
    tests/kernels/test_frame_launches.py tests/kernels/test_gpu_bands.py tests/services/test_movie_join.py tests/services/test_movie_writer.py tests/services/test_video_join.py \
    tests/services/test_movie_warm.py tests/cli/test_movie_timeline.py > "$out/tests.log" 2>&1
  echo "tests rc=$? (${SECONDS}s)"; grep -E "passed|failed|FAILED|^ERROR" "$out/tests.log" | tail -6
fi
timeout 120 python3 tools/movie_job_profile.py --frames 120 --top 30 > "$out/profile.txt" 2>&1
echo "profile rc=$? (${SECONDS}s)"; head -3 "$out/profile.txt"
c=$(python3 -c "from kernels.mandelbrot.benches.locations import KORMANYOS_VERY_DEEP as L; print(L.center_re[:140] + ',' + L.center_im[:140])")
python3 main.py --movie $s/w.mp4 --gpus all --backend cuda --size 64x36 --fps 10 --seconds 2 --center "$c" --width 1e-100 --restart > $s/warm.txt 2>&1
echo "warm rc=$? (${SECONDS}s)"
first=""
for secs in ${MOVIE_LENGTHS:-20 60 120}; do
  declare -A took=()
  for gpus in 0 0,1; do
    n=$(( ${#gpus} / 2 + 1 ))
    t0=$(date +%s.%N)
    python3 main.py --movie $s/m$n.mp4 --gpus $gpus --backend cuda --size 1920x1080 --fps 60 \
      --seconds $secs --center "$c" --width 1e-100 --restart > $s/m$secs-$n.txt 2>&1
    rc=$?; took[$n]=$(python3 -c "print(f'{$(date +%s.%N)-$t0:.2f}')")
    echo "movie ${secs} s on $n GPU(s): rc=$rc whole command ${took[$n]} s (${SECONDS}s)"
    grep -E "^(wrote|render|timeline)" $s/m$secs-$n.txt | sed 's/^/    /' | cut -c1-400
    [ $rc -ne 0 ] && tail -3 $s/m$secs-$n.txt
    if [ -z "$first" ] && [ $rc -eq 0 ]; then python3 tools/movie_frames.py hash $s/m$n.mp4 > $s/frames$n.txt; fi
    rm -f $s/m$n.mp4
  done
  echo "movie ${secs} s: 1 GPU ${took[1]} s, 2 GPUs ${took[2]} s: $(python3 -c "print(f'{${took[1]}/${took[2]}:.3f}x')")"
  if [ -z "$first" ]; then first=$secs; python3 tools/movie_frames.py compare $s/frames1.txt $s/frames2.txt | tail -2; fi
  for f in $s/m$secs-*.txt; do echo "== $f"; cat $f; done >> "$out/movies.txt"
done
echo "done in ${SECONDS}s"
