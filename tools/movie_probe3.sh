set -u
out=$1; w=/tmp/p3; mkdir -p $w; export PYTHONUNBUFFERED=1
c=$(python3 -c "from kernels.mandelbrot.benches.locations import KORMANYOS_VERY_DEEP as L; print(L.center_re[:140] + ',' + L.center_im[:140])")
deep=(--backend cuda --size 1920x1080 --fps 60 --seconds 20 --center "$c" --width 1e-100 --restart)
python3 main.py --movie $w/w.mp4 --gpus all --backend cuda --size 64x36 --fps 10 --seconds 2 --center "$c" --width 1e-100 --restart > $w/warm.txt 2>&1
for g in all 0; do
  t0=$(date +%s.%N)
  timeout 150 /tmp/site/bin/py-spy record --gil --threads --rate 250 --format raw -o $w/spy_gil_$g.txt -- python3 main.py --movie $w/m$g.mp4 --gpus $g "${deep[@]}" > $w/spy_run_$g.txt 2>&1
  echo "py-spy $g rc=$? whole $(python3 -c "print(f'{$(date +%s.%N)-$t0:.1f}')") s"; tail -2 $w/spy_run_$g.txt
done
timeout 150 /tmp/site/bin/py-spy record --threads --idle --rate 100 --format raw -o $w/spy_wall_all.txt -- python3 main.py --movie $w/mw.mp4 --gpus all "${deep[@]}" > $w/spy_run_wall.txt 2>&1
echo "py-spy wall rc=$?"
for rep in 1 2 3; do for kb in 16,2 16,4; do
  GPU_EXPLORER_F32_BLOCK=$kb timeout 30 python3 tools/f32_block_sweep.py --repeats 10 2>&1 | grep -E "^f32 block" | tail -1
done; done
tar -C /tmp -czf $out/p3.tgz p3
