#!/usr/bin/env bash
# Deep zoom in the app, on the GPU machine: the GPU tests of what the deep-zoom app work touched,
# the Mandelbrot bench (with the divergence metric and the deep-zoom depths), a 1920x1080 --render
# at 1e-1000, and the window offscreen deep in a zoom. Run from the repository root:
#   source .device-bundle-qt/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_deep_app.sh "$OUT"
# Needs gmpy2 (the device bundle has it). Writes into the folder given:
#   device.txt, gpu_tests.log, bench_mandelbrot.json/.txt, render_1e1000.txt/.png, window_*.png/.txt
set -u
out=${1:?usage: gpu_deep_app.sh OUTPUT_DIR}
mkdir -p "$out"
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv;
  python3 -c "import gmpy2, numba, numba_cuda; print('gmpy2', gmpy2.version(), 'numba', numba.__version__)"; } \
  > "$out/device.txt" 2>&1
echo "== GPU tests of the deep-zoom app work (real GPU: full sizes)"
timeout 540 python3 -m pytest -m gpu -q -p no:cacheprovider -ra \
  tests/kernels/test_mandelbrot_gpu.py tests/kernels/test_mandelbrot_colour.py \
  tests/kernels/test_deep_frames.py tests/kernels/test_deep_gpu.py tests/cli/test_files_gpu.py \
  tests/explorer/test_mandelbrot_deep_view.py tests/explorer/test_mandelbrot_view.py \
  > "$out/gpu_tests.log" 2>&1
echo "gpu tests rc=$?"; grep -E "passed|failed|FAILED|Error" "$out/gpu_tests.log" | tail -12
echo "== bench --only mandelbrot (divergence: % of ceiling; deep depths 1e-30 .. 1e-1000)"
timeout 580 python3 main.py --bench --backend cuda --only mandelbrot --repeats ${REPEATS:-10} \
  --json "$out/bench_mandelbrot.json" > "$out/bench_mandelbrot.txt" 2>&1
echo "bench rc=$?"; grep -E "divergence|deep" "$out/bench_mandelbrot.txt" | head -40
python3 - "$out/bench_mandelbrot.json" <<'PY' || true
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
for r in rows:
    if r["workload"] == "mandelbrot-divergence":
        m = r["metrics"]
        print(f"{r['variant']:<34} G iter/s {m['G iter/s'] or 0:8.1f}   ceiling {m['ceiling G iter/s'] or 0:8.1f}"
              f"   {m['% of ceiling'] or 0:5.1f} % of ceiling   escape {m['escape ms'] or 0:.3f} ms")
PY
echo "== --render 1920x1080 at 1e-1000 (first frame: reference orbit + table + pixels)"
C=$(python3 -c "from kernels.mandelbrot.benches import locations as l; print(l.KORMANYOS_VERY_DEEP.center_re+','+l.KORMANYOS_VERY_DEEP.center_im)")
( time timeout 300 python3 main.py --render mandelbrot --backend cuda --size 1920x1080 --center "$C" \
    --width 1e-1000 --iters 1000000 --out "$out/render_1e1000.png" ) > "$out/render_1e1000.txt" 2>&1
echo "render rc=$?"; tail -4 "$out/render_1e1000.txt"
echo "== the window offscreen, deep"
for b in "Deep: 1e-300 (Kormanyos)" "Deep: period-424 minibrot (3e-318)" "Deep: 1e-1000 (Kormanyos)"; do
  f=$(echo "$b" | tr -c 'a-zA-Z0-9\n' '_')
  QT_QPA_PLATFORM=offscreen timeout 300 python3 tools/deep_window_shot.py "$out/window_$f.png" \
    --backend cuda --bookmark "$b" --size 1600x1000 --wheel 4 > "$out/window_$f.txt" 2>&1
  echo "window $b rc=$?"; grep -E "wrote|first deep|readout" "$out/window_$f.txt"
done
