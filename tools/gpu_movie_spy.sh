#!/usr/bin/env bash
# Where the two-GPU deep movie's time goes (issue 23), in one call on a machine of 2+ GPUs:
#   source .device-bundle-spy/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_movie_spy.sh OUT
# (a bundle without Qt: gmpy2 av pyqtgraph numpy and py-spy)
# The 1080p60 zoom to 1e-100 at Kormanyos's very deep location (MOVIE_SECONDS, default 20): the
# whole command on 1 and 2 GPUs, then on 2 GPUs under py-spy twice: --gil (who holds the GIL) and
# --idle (every thread, waiting included), each cut to a summary by tools/spy_summary.py.
set -u
out=${1:?usage: gpu_movie_spy.sh OUT}; mkdir -p "$out"; export PYTHONUNBUFFERED=1
s=/tmp/spy; rm -rf $s; mkdir -p $s; SECONDS=0
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; echo "cores $(nproc)"; } > "$out/device.txt"
cat "$out/device.txt"
c=$(python3 -c "from kernels.mandelbrot.benches.locations import KORMANYOS_VERY_DEEP as L; print(L.center_re[:140] + ',' + L.center_im[:140])")
deep=(--backend cuda --size 1920x1080 --fps 60 --seconds ${MOVIE_SECONDS:-20} --center "$c" --width 1e-100 --restart)
python3 main.py --movie $s/w.mp4 --gpus all --backend cuda --size 64x36 --fps 10 --seconds 2 --center "$c" --width 1e-100 --restart > $s/warm.txt 2>&1
echo "warm rc=$? (${SECONDS}s)"
movie() {  # movie LABEL GPUS [PREFIX...]
  local label=$1 gpus=$2; shift 2
  local t0=$(date +%s.%N)
  "$@" python3 main.py --movie $s/$label.mp4 --gpus $gpus "${deep[@]}" > $s/$label.txt 2>&1
  local rc=$? took=$(python3 -c "print(f'{$(date +%s.%N)-$t0:.2f}')")
  echo "$label: rc=$rc whole $took s"; grep -E "^(render|timeline)" $s/$label.txt | sed 's/^/    /'
  [ $rc -ne 0 ] && tail -3 $s/$label.txt; rm -f $s/$label.mp4
}
movie one 0 env
movie two 0,1 env
movie two-b 0,1 env
SPY=$(command -v py-spy || echo /tmp/site/bin/py-spy)
movie spy-gil 0,1 "$SPY" record --gil --threads --format raw --rate 250 -o $s/gil.txt --
movie spy-idle 0,1 "$SPY" record --idle --threads --format raw --rate 250 -o $s/idle.txt --
for p in gil idle; do
  [ -f $s/$p.txt ] || { echo "no $p profile"; continue; }
  { python3 tools/spy_summary.py $s/$p.txt --top 40
    echo "-- pool workers"; python3 tools/spy_summary.py $s/$p.txt --top 45 --thread 'pool-gpu'
  } > "$out/spy-$p.txt" 2>&1
done
head -60 "$out/spy-gil.txt"
echo "done in ${SECONDS}s"
