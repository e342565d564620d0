#!/usr/bin/env bash
# One headless call on the GPU machine (light bundle): issue 34's cut identity and audit, and the
# GPU tests beside the audit (the tests use the GPU and a core, the audit the other cores).
#  1. KF's six files at 1024x1024: one piece twice, bands (--gpus 0) twice, compared value by value;
#     then 4096x4096 for 1e50, 5e227 and 1e1086 the same way (one GPU lent: bands on every GPU are
#     bands on this one);
#  2. the GPU tests without Qt (kernels, services, cli) in the background, while
#  3. tools/deep_audit.py audits each 1024x1024 one-piece render against its bands: 300 random
#     pixels, every disputed one, those past the reference's escape, in MPFR on the other cores.
# The 1024x1024 one-piece renders come back as .npy in three archives (the CPU twin is compared
# with them where the cores are).   bash tools/gpu_session_e.sh OUT
set -u
FINAL=${1:?usage: gpu_session_e.sh OUT}; OUT=$FINAL/r; mkdir -p "$OUT" /tmp/r34
source ${BUNDLE:-.device-lite}/activate.sh
export PYTHONPATH=.:$PYTHONPATH NUMBA_CACHE_DIR=$PWD/.numba-cache PYTHONUNBUFFERED=1
SECONDS=0
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } 2>&1 | tee "$OUT/device.txt"
render() {  # name size cut
  local f=resources/kf-$1.kfr extra=()
  case $3 in bands*) extra=(--gpus 0);; esac
  local t=$SECONDS
  timeout 120 python3 main.py --render mandelbrot --location "$f" --size "$2" --backend cuda \
    --out "/tmp/r34/$1-$2-$3.npy" "${extra[@]}" > "$OUT/$1-$2-$3.log" 2>&1
  echo "$1 $2 $3 rc=$? $((SECONDS - t)) s: $(tail -1 "$OUT/$1-$2-$3.log" | cut -c1-160)"
}
cmp4() {  # name size
  for other in one2 bands bands2; do
    python3 tools/deep_audit.py --location resources/kf-$1.kfr --size "$2" "/tmp/r34/$1-$2-one.npy" \
      "/tmp/r34/$1-$2-$other.npy" --compare-only 2>&1 | tail -1 | sed "s/^/$1 $2 one vs $other: /"
  done
}
for n in 1e14 1e50 5e113 5e227 4e533 1e1086; do
  for cut in one one2 bands bands2; do render $n 1024x1024 $cut; done
  cmp4 $n 1024x1024
done 2>&1 | tee "$OUT/cuts-1024.txt"
echo "== 1024 cuts (${SECONDS}s)"
( timeout $(( 520 - SECONDS )) python3 -m pytest -q -p no:cacheprovider -m gpu tests/kernels \
    tests/services tests/cli 2>&1 | grep -E "^E |FAILED|passed|failed|^tests.*:[0-9]+:" | head -60 \
    > "$OUT/gpu-tests.txt"; echo "gpu tests done at ${SECONDS}s" >> "$OUT/gpu-tests.txt" ) &
tests=$!
threads=$(( $(nproc) - 2 ))
for n in 1e14 5e113 4e533 1e50 5e227 1e1086; do
  left=$(( 500 - SECONDS )); [ $left -lt 20 ] && break
  t=$SECONDS
  timeout $left python3 tools/deep_audit.py --location resources/kf-$n.kfr --size 1024x1024 \
    /tmp/r34/$n-1024x1024-one.npy /tmp/r34/$n-1024x1024-bands.npy --random 300 --past auto \
    --threads $threads > "$OUT/audit-$n.txt" 2>&1
  echo "audit $n rc=$? $((SECONDS - t)) s"; head -8 "$OUT/audit-$n.txt" | cut -c1-200
done 2>&1 | tee "$OUT/audits.txt"
wait $tests; cat "$OUT/gpu-tests.txt"
for n in 1e50 5e227 1e1086; do
  [ $SECONDS -gt 545 ] && break
  for cut in one bands bands2; do render $n 4096x4096 $cut; done
  for other in bands bands2; do
    python3 -c "import numpy as np,sys; a,b=(np.load(f) for f in sys.argv[1:]); print('$n 4096 one vs $other: values differing', int((a!=b).sum()))" \
      /tmp/r34/$n-4096x4096-one.npy /tmp/r34/$n-4096x4096-$other.npy
  done
done 2>&1 | tee "$OUT/cuts-4096.txt"
echo "== done (${SECONDS}s)"
tar -C /tmp/r34 -czf "$FINAL/npy-a.tgz" 1e14-1024x1024-one.npy 1e50-1024x1024-one.npy 2>/dev/null
tar -C /tmp/r34 -czf "$FINAL/npy-b.tgz" 5e113-1024x1024-one.npy 5e227-1024x1024-one.npy 2>/dev/null
tar -C /tmp/r34 -czf "$FINAL/npy-c.tgz" 4e533-1024x1024-one.npy 1e1086-1024x1024-one.npy 2>/dev/null
tar -C "$FINAL" -czf "$FINAL/results.tgz" r && rm -rf "$OUT"
