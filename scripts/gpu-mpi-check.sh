#!/usr/bin/env bash
# libfdk_mpi on the GPU machine: one case reconstructed by one process
# (fdk-bench, libfdk) and by ranks of an mpirun (fdk-bench-mpi, libfdk_mpi),
# on the GPUs there are, end to end, with a short table last. The GPU
# machines have Ubuntu's OpenMPI (4.1.6) installed; scripts/mpi-env.sh
# chooses it (or an OpenMPI tree carried in gpu-prebuilt/mpi) and sets the
# one-host settings (no core binding: a rank's filter and store threads need
# cores). Run after scripts/gpu-prebuild.sh here, carrying gpu-prebuilt.
#   usage: scripts/gpu-mpi-check.sh CASE [f16] [HOST_BUDGET_PER_RANK]  (on two GPUs the
#          one process gets twice it: the two ranks' memory)
#   e.g.   scripts/gpu-mpi-check.sh c          (one H200: two ranks share it)
#          scripts/gpu-mpi-check.sh d f16 100GiB  (two H200s: a rank each)
#   env:   FDK_MPI_SPECS  the mpirun runs, "RANKS ROOT SINGLE_COPY[ mps]" joined
#                         by commas (default: the five below, without MPS)
#          "mps" runs that one under NVIDIA's Multi-Process Service: a
#          user-space server started for the run (pipe and log directories
#          in /tmp) and stopped after it, which lets the ranks' kernels share
#          the GPU at once instead of time-slicing two contexts. It changes no
#          device setting (compute mode, clocks, MIG).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
case_name=${1:-c}
precision=f32
[ "${2:-}" = f16 ] && precision=f16
budget=${3:-40GiB}
# shellcheck source=/dev/null
source scripts/mpi-env.sh >/dev/null || { echo "gpu-mpi-check: no MPI"; exit 1; }
bin=gpu-prebuilt/bin
export LD_LIBRARY_PATH="$PWD/gpu-prebuilt/lib:${LD_LIBRARY_PATH:-}"
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
share=own
[ "$gpus" -lt 2 ] && share=same
repeats=3 warmup=1
[ "$case_name" = d ] && repeats=1 warmup=0
rows=()
# The one process gets the host memory of the two ranks it is compared
# with (on two GPUs): with one rank's budget, (d)'s store did not fit.
one_budget=$budget
if [ "$gpus" -ge 2 ]; then
  amount=${budget%%[!0-9]*}
  one_budget="$(( amount * 2 ))${budget#"$amount"}"
fi
one=$("$bin/fdk-bench" --case "$case_name" --precision "$precision" --gpus "$(( gpus < 2 ? 1 : 2 ))" \
      --budget-host "$one_budget" --repeats "$repeats" --warmup "$warmup" --no-baseline 2>&1)
echo "$one" | tail -n 12
one_s=$(echo "$one" | grep -Eo 'end to end[^0-9]*[0-9.]+ s' | tail -n 1 | grep -Eo '[0-9.]+ s')
rows+=("one process, $(( gpus < 2 ? 1 : 2 )) GPU(s), host budget $one_budget (fdk-bench) | ${one_s:-?}")
# The last spec's third word: the shared-memory transport's single copy
# (cma: the receiver reads the sender's pages itself, so a transfer moves on
# while the sender is busy pushing into its own reconstruction).
IFS=, read -r -a specs <<< "${FDK_MPI_SPECS:-1 -1 none,2 -1 none,2 0 none,2 -1 cma,2 0 cma}"
mps_start() {
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/fdk-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/fdk-mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d || { echo "gpu-mpi-check: nvidia-cuda-mps-control -d failed"; return 1; }
}
mps_stop() {
  echo quit | nvidia-cuda-mps-control
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
}
for spec in "${specs[@]}"; do
  set -- $spec
  mps=${4:-}
  if [ "$mps" = mps ] && ! mps_start; then
    rows+=("$1 rank(s), root $2, MPS | MPS NOT STARTED"); continue
  fi
  out=$(OMPI_MCA_btl_vader_single_copy_mechanism=$3 mpirun -n "$1" "$bin/fdk-bench-mpi" --case "$case_name" --precision "$precision" --root "$2" \
        --gpu-of-rank "$share" --budget-host "$budget" --repeats "$repeats" --warmup "$warmup" 2>&1)
  [ "$mps" = mps ] && mps_stop
  echo "$out" | tail -n 8
  s=$(echo "$out" | grep -Eo 'median end to end [0-9.]+ s' | grep -Eo '[0-9.]+ s')
  rows+=("$1 rank(s), root $2, GPU $share, single copy $3${mps:+, MPS} (fdk-bench-mpi) | ${s:-FAILED}")
done
echo
echo "## case ($case_name) $precision, host budget $budget per process, $gpus GPU(s)"
echo "| run | end to end |"
echo "|---|---|"
for r in "${rows[@]}"; do echo "| $r |"; done
