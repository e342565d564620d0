#!/usr/bin/env bash
# Stop 50, issue 36 on two H200s at once: GPU 0 writes this tree's and 9f38667's GPU frames as .npy
# (tools/deep_cpu_digest.sh with BACKEND=cuda: deep perturbation, float32 deltas, extended, the deep
# overlays, KF's 5e227, float64, float64 with an overlay, float32) and compares them byte for byte;
# GPU 1 runs the GPU suite of tests/kernels, tests/cli and tests/services (pytest -m gpu).
#   bash tools/device_head.sh pack; carry .device-av .device-head.tgz .numba-cache .ab-base9f
set -u
OUT=${1:?usage: gpu_session_am.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
SECONDS=0
bash tools/device_head.sh unpack
source .device-av/activate.sh
export NUMBA_CACHE_DIR=$PWD/.numba-cache
( export CUDA_VISIBLE_DEVICES=1 PYTHONPATH=.:$PYTHONPATH
  timeout ${SUITE_S:-370} python3 -m pytest -m gpu -q -p no:cacheprovider -rf tests/kernels tests/cli \
    tests/services > "$OUT/suite.txt" 2>&1
  echo "gpu suite rc=$? (${SECONDS}s): $(tail -1 "$OUT/suite.txt")" > "$OUT/suite-rc.txt" ) &
suite=$!
export CUDA_VISIBLE_DEVICES=0
base=$(cd .ab-base9f && pwd)
BACKEND=cuda KF=$PWD/resources PYTHON=python3 bash tools/deep_cpu_digest.sh . /tmp/dg/new > "$OUT/dg-new.txt" 2>&1
BACKEND=cuda KF=$base/resources PYTHON=python3 bash tools/deep_cpu_digest.sh "$base" /tmp/dg/old > "$OUT/dg-old.txt" 2>&1
paste "$OUT/dg-new.txt" "$OUT/dg-old.txt"
n=0; d=0
for f in /tmp/dg/new/*.npy; do
  n=$((n + 1)); cmp -s "$f" "/tmp/dg/old/${f##*/}" || { d=$((d + 1)); echo "differs: ${f##*/}"; }
done
echo "GPU frames compared: $n files, $d differ (${SECONDS}s)"
grep -h "wrote\|error" /tmp/dg/new/*.log | cut -c1-160 | head -20 > "$OUT/dg-logs.txt"
wait $suite; cat "$OUT/suite-rc.txt"; grep -E "^FAILED|^ERROR" "$OUT/suite.txt" | head -20
echo "done in ${SECONDS}s"
