#!/usr/bin/env bash
# The backprojection kernel's bound (issue 42, point 5): Nsight Compute on
# COUNT launches of the fdk_bp_* kernels of one fdk-bench run, after SKIP,
# with the sections that tell texture, issue and memory bounds apart.
#   usage: [SKIP=20] [COUNT=2] [OUT=dir] scripts/gpu-kernel-profile.sh [CASE] [backproject|zero]
# Uses gpu-prebuilt/ when present (scripts/gpu-prebuild.sh), else build/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
case_name=${1:-b}
outside=${2:-backproject}
if [ -x gpu-prebuilt/bin/fdk-bench ]; then
  export LD_LIBRARY_PATH="$PWD/gpu-prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  bench=gpu-prebuilt/bin/fdk-bench
else
  bench=build/tools/fdk-bench/fdk-bench
fi
ncu=$(command -v ncu || true)
if [ -z "$ncu" ]; then
  ncu=$(ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu /usr/local/NVIDIA-Nsight-Compute*/ncu 2>/dev/null | head -1 || true)
fi
[ -n "$ncu" ] || { echo "gpu-kernel-profile: no ncu (Nsight Compute) found" >&2; exit 1; }
out=${OUT:-/tmp/fdk-kernel-profile}
mkdir -p "$out"
"$ncu" --version | tail -1
"$ncu" --kernel-name regex:'^fdk_bp_' --launch-skip "${SKIP:-20}" --launch-count "${COUNT:-2}" \
  --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
  --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats \
  --csv --page details \
  "$bench" --case "$case_name" --repeats 1 --warmup 0 --outside-fov "$outside" \
  >"$out/profile-$case_name-$outside.csv" 2>"$out/profile-$case_name-$outside.log" || {
  echo "gpu-kernel-profile: ncu failed: $(tail -5 "$out/profile-$case_name-$outside.log")" >&2
  exit 1
}
# The headline rows: throughput of each unit as a share of its peak, and
# the warp stall reasons.
grep -E '"(Duration|Compute \(SM\) Throughput|Memory Throughput|L1/TEX Cache Throughput|L2 Cache Throughput|DRAM Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per Thread|Issue Slots Busy|Issued Ipc Active|No Eligible|Warp Cycles Per Issued Instruction|Executed Ipc Active|L1/TEX Hit Rate|Texture|TEX)' \
  "$out/profile-$case_name-$outside.csv" | cut -d, -f5,12- | head -80 || true
