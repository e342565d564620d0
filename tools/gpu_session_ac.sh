#!/usr/bin/env bash
# Stop 49, issue 37: the whole 10-minute 1080p60 keyframe movie to 1e-1000 on one H200 with one
# launch a keyframe (the default since stop 48), with the GPU's and the host's load sampled beside
# it, so the breakdown says which side bounds it; numba's cache comes back for the next calls.
#   bash tools/device_head.sh pack   (here; carry .device-head.tgz and .device-av)
#   bash tools/gpu_session_ac.sh "$OUT/ac"   (there)
set -u
OUT=${1:?usage: gpu_session_ac.sh OUT}; mkdir -p "$OUT"
bash tools/device_head.sh unpack
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv -lms 1000 > "$OUT/gpu-util.csv" 2>&1 &
smi=$!
vmstat -n 5 > "$OUT/vmstat.txt" 2>&1 &
vm=$!
STAGES="${STAGES:-warm movie}" BUNDLE=.device-av DEADLINE=${DEADLINE:-540} PACK_CACHE=1 \
  bash tools/gpu_keyframes.sh "$OUT"
kill $smi $vm 2>/dev/null
python3 - "$OUT/gpu-util.csv" <<'PY'
import sys
rows = [l.split(",") for l in open(sys.argv[1]).read().splitlines()[1:] if l.count(",") >= 2]
u = [int(r[1].strip().split()[0]) for r in rows if r[1].strip().split()[0].isdigit()]
if u:
    for n in (1, 4):
        part = u[(n - 1) * len(u) // 4:n * len(u) // 4] if n > 1 else u
        print(f"GPU utilisation {'all' if n == 1 else 'last quarter'}: mean {sum(part) / len(part):.0f} % over {len(part)} s")
PY
