#!/usr/bin/env bash
# What serialises a movie on several GPUs: the same 1080p60 zoom on one GPU and on all, whole
# command timed; then on all GPUs with the encoders replaced by a sink that drops frames, and under
# py-spy (--gil: only the thread holding the GIL is sampled) where it can attach.
#   source .device-bundle-spread/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/movie_probe.sh "$OUT"
set -u
out=${1:?usage: movie_probe.sh OUTPUT_DIR}; mkdir -p "$out"
seconds=${MOVIE_SECONDS:-10}; scratch=/tmp/movie-probe; mkdir -p $scratch
place=(--center -0.743643887037158704752191506114774,0.131825904205311970493132056385139 --width ${MOVIE_WIDTH:-1e-12})
now() { date +%s.%N; }
nvidia-smi --query-gpu=name,driver_version --format=csv > "$out/device.txt"; echo "cores $(nproc)" >> "$out/device.txt"
python3 main.py --movie $scratch/w.mp4 --backend cuda --gpus all --size 64x36 --fps 10 --seconds 1 "${place[0]}" "${place[1]}" --width 1e-15 --restart > "$out/warm.txt" 2>&1
echo "warm rc=$?"
run() { local name=$1; shift; local t0=$(now)
  "$@" > "$out/$name.txt" 2>&1; local rc=$?
  echo "-- $name rc=$rc whole $(python3 -c "print(f'{$(now)-$t0:.2f}')") s"; tail -2 "$out/$name.txt"; }
args=(--backend cuda --size 1920x1080 --fps 60 --seconds $seconds "${place[@]}" --restart)
for rep in 1 2; do
  run one$rep python3 main.py --movie $scratch/one.mp4 --gpus 0 "${args[@]}"
  run all$rep python3 main.py --movie $scratch/all.mp4 --gpus all "${args[@]}"
done
cat > $scratch/nullsink.py <<'PY'
import sys
import services.movie_writer as mw
class Null:
    def add(self, rgba): pass
    def finish(self): pass
    def abort(self, exc=None): pass
mw.MovieWriter.open_sink = lambda self, i, threads: Null()
def finish(self):
    self.start()
    while not self.wait_lanes(0.1):
        pass
    self.lock.release()
    return self.total
mw.MovieWriter.finish = finish
import main
sys.exit(main.main(sys.argv[1:]))
PY
run nullsink_one python3 $scratch/nullsink.py --movie $scratch/n1.mp4 --gpus 0 "${args[@]}"
run nullsink_all python3 $scratch/nullsink.py --movie $scratch/n2.mp4 --gpus all "${args[@]}"
if command -v py-spy >/dev/null; then
  timeout 120 py-spy record --gil --threads --rate 200 --format speedscope -o "$out/spy_all_gil.json" -- python3 main.py --movie $scratch/s.mp4 --gpus all "${args[@]}" > "$out/spy_all.txt" 2>&1
  echo "py-spy gil rc=$?"; tail -3 "$out/spy_all.txt"
  timeout 120 py-spy record --threads --idle --rate 200 --format speedscope -o "$out/spy_all_wall.json" -- python3 main.py --movie $scratch/s2.mp4 --gpus all "${args[@]}" > "$out/spy_all2.txt" 2>&1
  echo "py-spy wall rc=$?"
fi
