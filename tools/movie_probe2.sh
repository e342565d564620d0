#!/usr/bin/env bash
# A deep zoom movie (whole set -> 1e-100 at Kormanyos's very deep location) on one GPU and on all,
# whole command timed; and py-spy's view of which threads hold the GIL in the two-GPU float64 movie.
set -u
out=${1:?}; mkdir -p "$out"; scratch=/tmp/movie-probe; mkdir -p $scratch
seconds=${MOVIE_SECONDS:-10}
now() { date +%s.%N; }
run() { local name=$1; shift; local t0=$(now)
  "$@" > "$out/$name.txt" 2>&1; local rc=$?
  echo "-- $name rc=$rc whole $(python3 -c "print(f'{$(now)-$t0:.2f}')") s"; tail -2 "$out/$name.txt"; }
c=$(python3 -c "from kernels.mandelbrot.benches.locations import KORMANYOS_VERY_DEEP as L; print(L.center_re[:140] + ',' + L.center_im[:140])")
deep=(--backend cuda --size 1920x1080 --fps 60 --seconds $seconds --center "$c" --width 1e-100 --restart)
run deepwarm python3 main.py --movie $scratch/dw.mp4 --gpus all --backend cuda --size 64x36 --fps 10 --seconds 2 --center "$c" --width 1e-100 --restart
for rep in 1 2; do
  run deep_one$rep python3 main.py --movie $scratch/d1.mp4 --gpus 0 "${deep[@]}"
  run deep_all$rep python3 main.py --movie $scratch/d2.mp4 --gpus all "${deep[@]}"
done
spy=/tmp/site/bin/py-spy
place=(--center -0.743643887037158704752191506114774,0.131825904205311970493132056385139 --width 1e-12)
args=(--backend cuda --size 1920x1080 --fps 60 --seconds 10 "${place[@]}" --restart)
timeout 120 $spy record --gil --threads --rate 250 --format raw -o "$out/spy_gil.txt" -- python3 main.py --movie $scratch/s.mp4 --gpus all "${args[@]}" > "$out/spy_run.txt" 2>&1
echo "py-spy gil rc=$?"; tail -3 "$out/spy_run.txt"
timeout 120 $spy record --gil --threads --rate 250 --format raw -o "$out/spy_gil_deep.txt" -- python3 main.py --movie $scratch/s2.mp4 --gpus all "${deep[@]}" > "$out/spy_run2.txt" 2>&1
echo "py-spy gil deep rc=$?"; tail -3 "$out/spy_run2.txt"
