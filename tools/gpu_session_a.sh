#!/usr/bin/env bash
# One GPU call for the state of issues 33 and 38: the timing tests and the busy-thread table
# (tools/gpu_timing_check.sh), then where a headless render's seconds go for each KF file
# (tools/startup_profile.py), then numba's cache packed into OUT so a later call starts warm.
#   bash tools/gpu_session_a.sh OUT
set -u
OUT=${1:?usage: gpu_session_a.sh OUT}; export OUT; mkdir -p "$OUT"
source ${BUNDLE:-.device-lite}/activate.sh
export PYTHONPATH=.:$PYTHONPATH NUMBA_CACHE_DIR=$PWD/.numba-cache
git log -1 --oneline > "$OUT/commit.txt" 2>/dev/null
bash tools/gpu_timing_check.sh > "$OUT/timing.log" 2>&1
echo "== timing rc=$?"; grep -E "passed|failed|error|busy/alone|^[a-z].*[0-9]\.[0-9]+ *$" "$OUT/timing.log" | tail -40
echo "== start-up, KF files 1024x1024"
for n in 1e14 1e50 5e113 5e227 4e533 1e1086; do
  python3 tools/startup_profile.py --backend cuda --size 1024x1024 --location resources/kf-$n.kfr \
    --runs 3 --top 12 --json "$OUT/startup-$n.json" > "$OUT/startup-$n.txt" 2>&1
  echo "$n rc=$?: $(grep -m1 -i 'whole' "$OUT/startup-$n.txt")"
done
sed -n 1,60p "$OUT/startup-1e14.txt"
tar czf "$OUT/numba-cache.tgz" .numba-cache 2>/dev/null; ls -la "$OUT/numba-cache.tgz"
