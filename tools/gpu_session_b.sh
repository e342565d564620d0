#!/usr/bin/env bash
# One GPU call for issues 40, 38 and 34 (each part under its own time limit so the call fits the
# device tool's 10 minutes): tools/gpu_i40.sh, tools/gpu_startup.sh, tools/gpu_issue34_marked.sh.
#   bash tools/gpu_session_b.sh OUT
set -u
OUT=${1:?usage: gpu_session_b.sh OUT}; mkdir -p "$OUT"
SECONDS=0
echo "== issue 40"; timeout 100 bash tools/gpu_i40.sh "$OUT/i40" 2>&1 | tail -25; echo "(${SECONDS}s)"
echo "== issue 38"; timeout 250 bash tools/gpu_startup.sh "$OUT/startup" 2>&1 | tail -45; echo "(${SECONDS}s)"
echo "== issue 34"; timeout 220 bash tools/gpu_issue34_marked.sh "$OUT/i34" 1024 2>&1 | tail -40; echo "(${SECONDS}s)"
rm -f "$OUT/startup/numba-cache.tgz"; tar czf "$OUT/numba-cache.tgz" .numba-cache 2>/dev/null
find "$OUT" -name "*.png" -size +200k -delete
