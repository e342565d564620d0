#!/usr/bin/env bash
# The zoom-movie target of issue 12 on the GPU machine: a 1920x1080, 60 fps, 30 s zoom from the
# whole set to a width of 1e-12 in seahorse valley, rendered on one GPU and encoded with PyAV, for
# each codec worth trying (libx264 'veryfast'; h264_nvenc, refused in one line where the GPU has no
# video encoder). Prints, per run, the wall time of the whole command, frames/s, the split between
# rendering and encoding and what bound it (the movie's own summary line). Run from the repository
# root:
#   source .device-bundle-spread/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/movie_bench.sh "$OUT"
# Needs tqdm (the progress bar) and Pillow (the decoded frames) besides the bundle's packages.
# Writes logs, the device's description and three decoded frames (PNG, small) into the folder
# given; the movies themselves go to $MOVIE_SCRATCH (default /tmp/movie-bench), not into it.
# MOVIE_SECONDS (default 30) shortens the main runs, MOVIE_LANES_SWEEP=0 skips the lane sweep;
# MOVIE_SIZE and MOVIE_BACKEND (a smoke test on the CPU) change what the target fixes.
set -u
out=${1:?usage: movie_bench.sh OUTPUT_DIR}
mkdir -p "$out"
scratch=${MOVIE_SCRATCH:-/tmp/movie-bench}
mkdir -p "$scratch"
seconds=${MOVIE_SECONDS:-30}
size=${MOVIE_SIZE:-1920x1080}
backend=${MOVIE_BACKEND:-cuda}
# Wolfgang Beyer's seahorse-valley zoom (Wikipedia, "Mandelbrot set" zoom sequence): structure at
# every depth down to and past 1e-12
place=(--center -0.743643887037158704752191506114774,0.131825904205311970493132056385139
       --width 1e-12)
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  echo "cores: $(nproc)"
  python3 -c "
import importlib
for m in ('numpy', 'numba', 'numba_cuda', 'av', 'gmpy2', 'dask', 'distributed', 'tqdm', 'PIL'):
    try:
        mod = importlib.import_module(m)
        print(m, getattr(mod, '__version__', getattr(mod, 'version', lambda: '?')) if m != 'gmpy2' else mod.version())
    except Exception as exc:
        print(m, 'MISSING:', exc)
import av; print('encoders:', [c for c in ('libx264', 'libx265', 'h264_nvenc', 'hevc_nvenc') if c in av.codecs_available])
"; } > "$out/movie_device.txt" 2>&1
cat "$out/movie_device.txt"

now() { date +%s.%N; }
# kernels compiled and cached first (a cold start adds their compile to the first movie)
# (at 64x36 the 1e-12 frames still fit float64: the warm-up zooms to 1e-15 so that its last frames
# are deep, perturbation frames as the 1920x1080 movie's last second is)
echo "== warm-up: a 64x36 movie over the same course (compiles the float64 and deep kernels)"
t0=$(now)
python3 main.py --movie "$scratch/warmup.mp4" --backend "$backend" --size 64x36 --fps 10 --seconds 1 \
  "${place[0]}" "${place[1]}" --width 1e-15 --restart > "$out/movie_warmup.txt" 2>&1
echo "warm-up rc=$? in $(python3 -c "print(f'{$(now) - $t0:.1f}')") s"; tail -2 "$out/movie_warmup.txt"

run_movie() {   # name, extra options…
  local name=$1; shift
  local t0 rc
  t0=$(now)
  python3 main.py --movie "$scratch/$name.mp4" --backend "$backend" --size "$size" --fps 60 \
    --seconds "$seconds" "${place[@]}" --restart "$@" > "$out/movie_$name.txt" 2>&1
  rc=$?
  echo "-- $name: rc=$rc, whole command $(python3 -c "print(f'{$(now) - $t0:.1f}')") s"
  tail -3 "$out/movie_$name.txt"
  return $rc
}

echo "== $size, 60 fps, ${seconds} s, whole set -> 1e-12, on $backend (one GPU)"
if run_movie libx264 --codec h264; then
  python3 - "$scratch/libx264.mp4" "$out" <<'EOF'
import sys
import av
from PIL import Image
from services.video import probe_frames
path, out = sys.argv[1], sys.argv[2]
frames, rate = probe_frames(path)
print(f"decoded {path}: {frames} frames at {rate} fps")
with av.open(path) as f:
    for k, fr in enumerate(f.decode(video=0)):
        if k in (0, frames // 2, frames - 1):
            Image.fromarray(fr.to_ndarray(format="rgb24")).resize((480, 270)).save(f"{out}/movie_frame{k:05d}.png")
EOF
  ls -l "$scratch/libx264.mp4"
fi
run_movie h264_nvenc --codec h264_nvenc
run_movie hevc_nvenc --codec hevc_nvenc

if [ "${MOVIE_LANES_SWEEP:-1}" != 0 ]; then
  echo "== encoder lanes (10 s of the same zoom, libx264): what parallel segments buy"
  for lanes in 1 4 8 16; do
    t0=$(now)
    python3 -c "
import sys
import services.movie_writer as m
m.default_lanes = lambda kind, size: $lanes
import main
sys.exit(main.main(sys.argv[1:]))" --movie "$scratch/lanes$lanes.mp4" --backend "$backend" --size "$size" \
      --fps 60 --seconds 10 "${place[@]}" --restart > "$out/movie_lanes$lanes.txt" 2>&1
    echo "-- $lanes lanes: rc=$?, whole command $(python3 -c "print(f'{$(now) - $t0:.1f}')") s"
    tail -2 "$out/movie_lanes$lanes.txt"
  done
fi
