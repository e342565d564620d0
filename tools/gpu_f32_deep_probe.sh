#!/usr/bin/env bash
# Issue 22's deep float32 target (float32 deltas >= 1.8x float64 deltas on the same frame) on one
# GPU, in one device call, from the repository root with the GPU environment active:
#   PYTHONPATH=.:$PYTHONPATH bash tools/gpu_f32_deep_probe.sh OUTDIR
# 1. tools/deep_f32_variants.py: the app's float64 and float32 loops beside launch and loop
#    variants (register caps, threads a block), alternating rounds, 1080p at 1e-25
# 2. Nsight Compute on the two first-pass kernels (float64 and float32 deltas): occupancy, issue
#    slots, active threads per instruction (divergence), where the warps stall, L1 hit rate
set -u
out=${1:?usage: gpu_f32_deep_probe.sh OUTDIR}; mkdir -p "$out"; export PYTHONUNBUFFERED=1
SECONDS=0
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > "$out/device.txt" 2>&1
cat "$out/device.txt"
echo "== 1. variants (${SECONDS}s)"
timeout 300 python3 tools/deep_f32_variants.py --rounds 3 --repeats 3 ${F32_VARIANTS:-f64 f64@t256 \
  f64@r48 f32 f32@r48 f32@r40 f32@r32 f32@t256} \
  > "$out/variants.txt" 2>&1
echo "rc=$? (${SECONDS}s)"; grep -vE "Warning|warn\(|^\s*$" "$out/variants.txt" | tail -14 | cut -c1-300
echo "== 2. ncu (${SECONDS}s)"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute*/ncu 2>/dev/null | head -1)
if [ -z "$NCU" ]; then echo "no ncu here"; else
  stalls=""
  for s in long_scoreboard short_scoreboard wait math_pipe_throttle not_selected selected \
           branch_resolving no_instruction dispatch_stall mio_throttle lg_throttle drain barrier misc; do
    stalls="$stalls,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio"
  done
  timeout 240 "$NCU" --clock-control none --kernel-name regex:'deep_kernel_flat' --launch-count 12 \
    --section SpeedOfLight --section Occupancy --section SchedulerStats --section WarpStateStats \
    --section LaunchStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    --metrics "smsp__thread_inst_executed_per_inst_executed.ratio,l1tex__t_sector_hit_rate.pct,smsp__inst_executed.sum${stalls}" \
    python3 tools/deep_f32_pair.py --rounds 1 --repeats 1 > "$out/ncu.txt" 2>&1
  echo "rc=$? (${SECONDS}s)"
  grep -E "deep_kernel_flat|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|Executed Ipc A|thread_inst_executed_per|sector_hit_rate|stalled_(long_sc|short_sc|wait|math|not_sel|branch|no_inst|lg_thr|mio)|inst_executed.sum|Grid Size|Block Size|L1/TEX Hit|L2 Hit" "$out/ncu.txt" \
    | grep -vE "^==PROF==" | sed -E 's/ {2,}/ /g' | awk '/deep_kernel_flat/{n++} n>0' | cut -c1-160 | tail -150
fi
echo "done in ${SECONDS}s"
