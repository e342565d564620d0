#!/usr/bin/env bash
# Issue 23 on a machine of 4 GPUs (or 2: the 4-GPU cases print n/a), in one call of under 9 min:
#   source .device-bundle-spread/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_spread4.sh $OUT
# (bundle: make-bundle.sh --no-qt gmpy2 dask distributed av pyqtgraph)
# 1. posters 16384² over 1, 2 and 4 GPUs in one process (tools/spread_bench.py: float64 seahorse
#    in its taller light bands, deep 1e-100 and 1e-30, KF's 1e1086 from its .kfr): speed-ups, the
#    workers' busy seconds, Dask's local cluster for the deep 1e-100;
# 2. the 1080p60 deep zoom movie (to 1e-100 at Kormanyos's very deep location), whole command timed
#    at 1, 2 and 4 GPUs with the command's own phase timeline (start-up, reference, warm-up, first
#    and last frame, join, close; the exit is the whole command less "closed at"), its decoded
#    frames compared between the runs (digests, the differing frames named, copied to OUTDIR),
#    and once on all GPUs with the interpreter's shutdown kept (GPU_EXPLORER_QUICK_EXIT=0);
# 3. the GPU tests of this change (prepared launches, the pools, deep frames' tables, the movie's
#    warm-up and timeline, numba's typing ahead).
# Env: MOVIE_SECONDS (20), MOVIE_REPEATS (2), BUDGET_S (500: later parts are skipped past it);
# POSTER_SIZE, POSTER_ONLY, MOVIE_SIZE, MOVIE_FPS, MOVIE_WIDTH only to try the script out (simulator, tiny).
set -u
out=${1:?usage: gpu_spread4.sh OUTPUT_DIR}; mkdir -p "$out"; export PYTHONUNBUFFERED=1
scratch=/tmp/spread4; rm -rf $scratch; mkdir -p $scratch
start=$(date +%s); budget=${BUDGET_S:-500}
now() { date +%s.%N; }
elapsed() { echo $(( $(date +%s) - start )); }
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
  echo "cores $(nproc)"
  python3 -c "import numba, numpy, dask, distributed, av, gmpy2; print('numba', numba.__version__, 'numpy', numpy.__version__, 'dask', dask.__version__, 'av', av.__version__, 'gmpy2', gmpy2.version())"
} > "$out/device.txt" 2>&1
cat "$out/device.txt"
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU")
echo "GPUs: $ngpu"

echo "== posters 16384² (spread_bench; best of 2)"
timeout 300 python3 tools/spread_bench.py --json "$out/posters.json" --size ${POSTER_SIZE:-16384} \
  --repeats 2 --gpu-counts 1,2,4 --dask deep-1e100 --movie-seconds 0 ${POSTER_ONLY:+--only $POSTER_ONLY} \
  > "$scratch/posters.txt" 2>&1
echo "rc=$? ($(elapsed) s)"
grep -E "^poster |not run|Error|error" "$scratch/posters.txt" | grep -vE "^INFO|distributed\." | head -40

c=$(python3 -c "from kernels.mandelbrot.benches.locations import KORMANYOS_VERY_DEEP as L; print(L.center_re[:140] + ',' + L.center_im[:140])")
secs=${MOVIE_SECONDS:-20}
deep=(--backend cuda --size ${MOVIE_SIZE:-1920x1080} --fps ${MOVIE_FPS:-60} --seconds $secs --center "$c" --width ${MOVIE_WIDTH:-1e-100} --restart)
gpus_of() { seq -s, 0 $(( $1 - 1 )); }
declare -A best
run_movie() {   # run_movie N REP [ENV=VALUE]: the whole command on GPUs 0..N-1, timed; frames
  local n=$1 rep=$2 var=${3:-} t0 rc took                  # digested once; a variant not kept
  t0=$(now)
  env $var python3 main.py --movie $scratch/m$n.mp4 --gpus $(gpus_of $n) "${deep[@]}" > "$scratch/movie$n-$rep.txt" 2>&1
  rc=$?; took=$(python3 -c "print(f'{$(now)-$t0:.2f}')")
  echo "movie ${n} GPU(s) rep $rep${var:+ ($var)}: rc=$rc whole command $took s; $(grep -oE 'in [0-9.]+ s: [0-9.]+ frames/s' "$scratch/movie$n-$rep.txt")"
  grep -E "^render " "$scratch/movie$n-$rep.txt" | sed 's/^/    /'
  closed=$(grep -oE "closed at [0-9.]+" "$scratch/movie$n-$rep.txt" | grep -oE "[0-9.]+$")
  grep -E "^timeline" "$scratch/movie$n-$rep.txt" | sed "s/^/    /; s/\$/${closed:+; exit and launch $(python3 -c "print(f'{$took-$closed:.2f}')") s}/"
  [ $rc -ne 0 ] && tail -3 "$scratch/movie$n-$rep.txt"
  if [ -n "$var" ]; then rm -f $scratch/m$n.mp4; return; fi
  if [ -z "${best[$n]:-}" ] || python3 -c "import sys; sys.exit(not $took < ${best[$n]})"; then best[$n]=$took; fi
  if [ "$rep" = 1 ] && [ $rc -eq 0 ]; then python3 tools/movie_frames.py hash $scratch/m$n.mp4 > "$scratch/frames$n.txt"; fi
  rm -f $scratch/m$n.mp4
}
echo "== deep movie 1080p60 ${secs} s to 1e-100, whole command ($(elapsed) s)"
t0=$(now)
python3 main.py --movie $scratch/w.mp4 --gpus all --backend cuda --size 64x36 --fps 10 --seconds 2 --center "$c" --width ${MOVIE_WIDTH:-1e-100} --restart > "$scratch/warm.txt" 2>&1
echo "warm-up movie (64x36, 2 s, all GPUs; compiles into the cache) rc=$? $(python3 -c "print(f'{$(now)-$t0:.2f}')") s"
counts="1 2 4"
for rep in $(seq 1 ${MOVIE_REPEATS:-2}); do
  if [ $rep -gt 1 ] && [ $(elapsed) -gt $(( budget - 120 )) ]; then echo "movie rep $rep skipped (time budget)"; break; fi
  for n in $counts; do
    if [ $n -gt $ngpu ]; then [ $rep = 1 ] && echo "movie $n GPUs: n/a (this machine has $ngpu)"; continue; fi
    run_movie $n $rep
  done
done
line="movie ${secs} s whole command, best:"
for n in $counts; do
  if [ -n "${best[$n]:-}" ]; then
    line="$line | $n GPU(s) ${best[$n]} s"
    [ $n -gt 1 ] && [ -n "${best[1]:-}" ] && line="$line ($(python3 -c "print(f'{${best[1]}/${best[$n]}:.2f}x')"))"
  else line="$line | $n GPUs n/a"; fi
done
echo "$line"
ls $scratch/frames*.txt >/dev/null 2>&1 && python3 tools/movie_frames.py compare $(ls $scratch/frames*.txt | sort) && cp $scratch/frames*.txt "$out/"
top=$(( ngpu >= 4 ? 4 : ngpu ))
if [ $top -ge 1 ] && [ $(elapsed) -lt $(( budget - 90 )) ]; then   # the quick exit's A/B
  run_movie $top x GPU_EXPLORER_QUICK_EXIT=0
fi
cp "$scratch"/movie*-1.txt "$scratch"/movie*-x.txt "$out/" 2>/dev/null

if [ $(elapsed) -lt $(( budget - 100 )) ]; then   # this change's GPU tests, while time is left
  echo "== GPU tests: prepared launches, the pools, deep tables, the movie's start ($(elapsed) s)"
  timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/kernels/test_frame_launches.py \
    tests/kernels/test_launch.py tests/kernels/test_spread.py tests/kernels/test_spread_exit.py \
    tests/kernels/test_deep_gpu.py > "$out/tests.log" 2>&1
  echo "gpu tests rc=$?"; grep -E "passed|failed|FAILED|^ERROR" "$out/tests.log" | tail -4
  timeout 120 python3 -m pytest -q -p no:cacheprovider tests/kernels/test_typing_ahead.py \
    tests/kernels/test_deep_table_history.py tests/kernels/test_spread_workers.py \
    tests/cli/test_movie_timeline.py tests/services/test_movie_warm.py > "$out/tests2.log" 2>&1
  echo "tests rc=$?"; grep -E "passed|failed|FAILED|^ERROR" "$out/tests2.log" | tail -4
fi
cp "$scratch/posters.txt" "$out/" 2>/dev/null
echo "done in $(elapsed) s"
