#!/usr/bin/env bash
# Issue 34 on the GPU machine: the deep GPU tests, then each KF file rendered in one piece, in bands
# on one GPU and in bands on every GPU (twice), compared value by value, and audited against MPFR
# on the host's cores (tools/deep_audit.py). From the repository root:
#   source .device-bundle/activate.sh && PYTHONPATH=.:$PYTHONPATH bash tools/gpu_issue34.sh "$OUT" [SIZE] [FILES...]
# SIZE defaults to 1024x1024, FILES to KF's six (../shared/data/kf-benchmarks or resources/).
set -u
out=${1:?usage: gpu_issue34.sh OUTPUT_DIR [SIZE] [KFR...]}; size=${2:-1024x1024}; shift; shift || true
mkdir -p "$out"
export PYTHONUNBUFFERED=1
files=("$@")
[ ${#files[@]} -eq 0 ] && files=(resources/kf-1e14.kfr resources/kf-1e50.kfr resources/kf-5e113.kfr
                                 resources/kf-5e227.kfr resources/kf-4e533.kfr resources/kf-1e1086.kfr)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; } > "$out/device.txt" 2>&1
echo "== GPU tests"
python3 -m pytest -m gpu -q -p no:cacheprovider tests/kernels/test_deep_exact_gpu.py \
  tests/kernels/test_deep_gpu.py tests/kernels/test_deep_frames.py > "$out/gpu_tests.log" 2>&1
echo "gpu tests rc=$?"; tail -3 "$out/gpu_tests.log"
for f in "${files[@]}"; do
  n=$(basename "$f" .kfr)
  for cut in one bands0 bandsall bandsall2; do
    case $cut in one) extra=();; bands0) extra=(--gpus 0);; *) extra=(--gpus all);; esac
    /usr/bin/time -f "%e s" python3 main.py --render mandelbrot --location "$f" --size "$size" \
      --backend cuda --out "$out/$n-$cut.npy" "${extra[@]}" > "$out/$n-$cut.log" 2>&1
    echo "$n $cut rc=$? $(tail -1 "$out/$n-$cut.log")"
  done
  for other in bands0 bandsall bandsall2; do
    python3 tools/deep_audit.py --location "$f" --size "$size" "$out/$n-one.npy" \
      "$out/$n-$other.npy" --compare-only | sed "s/^/$n one vs $other: /"
  done
  python3 tools/deep_audit.py --location "$f" --size "$size" "$out/$n-one.npy" \
    "$out/$n-bandsall.npy" --random 300 --past auto --threads "$(nproc)" > "$out/$n-audit.txt" 2>&1
  echo "$n audit rc=$?"; cat "$out/$n-audit.txt"
done
