#!/usr/bin/env bash
# Stop 50, issue 36: gpu_session_am.sh's byte-for-byte GPU frames for the cases its KF paths missed
# (the extended loop at KF's 1e1086, with its overlays, and KF's 5e227), this tree against 9f38667.
set -u
OUT=${1:?usage: gpu_session_an.sh OUT}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
SECONDS=0
bash tools/device_head.sh unpack
source .device-av/activate.sh
export NUMBA_CACHE_DIR=$PWD/.numba-cache
mkdir -p /tmp/kfl; for f in resources/kf-*.kfr; do ln -sf "$PWD/$f" "/tmp/kfl/${f#resources/kf-}"; done
base=$(cd .ab-base9f && pwd)
export ONLY="ext ext_ov kf5" BACKEND=cuda KF=/tmp/kfl PYTHON=python3
bash tools/deep_cpu_digest.sh . /tmp/dg/new > "$OUT/dg-new.txt" 2>&1 &
bash tools/deep_cpu_digest.sh "$base" /tmp/dg/old > "$OUT/dg-old.txt" 2>&1
wait
paste "$OUT/dg-new.txt" "$OUT/dg-old.txt"
n=0; d=0
for f in /tmp/dg/new/*.npy; do
  n=$((n + 1)); cmp -s "$f" "/tmp/dg/old/${f##*/}" || { d=$((d + 1)); echo "differs: ${f##*/}"; }
done
echo "GPU frames compared: $n files, $d differ (${SECONDS}s)"
grep -h "wrote\|error" /tmp/dg/new/*.log /tmp/dg/old/*.log | cut -c1-160 | head -20
