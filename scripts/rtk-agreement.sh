#!/usr/bin/env bash
# The standing agreement matrix with RTK's rtkfdk (docs/ACCURACY.md):
# installs itk-rtk from PyPI into a private virtual environment, builds
# fdk-agreement, simulates every geometry case (exact projections of a
# Shepp-Logan phantom, 128^3 from 180-400 views), reconstructs each with fdk
# (CPU, and CUDA where a GPU is usable) and with rtkfdk from the same
# projections and RTK XML file, and prints the table. Exit 0 when every row
# is green.
#   usage: scripts/rtk-agreement.sh [CASE...]       (default: all; list with
#          build/tools/fdk-agreement/fdk-agreement list)
#   env:   FDK_RTK_VENV (default build/rtk-venv), FDK_AGREEMENT_WORK (default
#          build/agreement), FDK_AGREEMENT_BACKENDS (default cpu, plus cuda
#          when nvidia-smi lists a GPU), FDK_AGREEMENT_MARKDOWN (a file for
#          the table)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
venv="${FDK_RTK_VENV:-build/rtk-venv}"
work="${FDK_AGREEMENT_WORK:-build/agreement}"
if [ ! -x "$venv/bin/rtkfdk" ]; then
  echo "rtk-agreement: installing itk-rtk 2.7.0 into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet itk-rtk==2.7.0
fi
if [ ! -f build/CMakeCache.txt ]; then
  # Configured as scripts/test.sh configures it, so that either reuses the other's build.
  bash scripts/install-deps.sh
  cuda_args=(-DFDK_WITH_CUDA=OFF)
  nvcc_path="$(command -v nvcc || true)"
  if [ -z "$nvcc_path" ] && [ -x /usr/local/cuda/bin/nvcc ]; then nvcc_path=/usr/local/cuda/bin/nvcc; fi
  if [ -n "$nvcc_path" ]; then cuda_args=(-DFDK_WITH_CUDA=ON "-DCMAKE_CUDA_COMPILER=$nvcc_path"); fi
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DFDK_WERROR=ON "${cuda_args[@]}" >/dev/null
fi
cmake --build build --target fdk-agreement >/dev/null
backends="${FDK_AGREEMENT_BACKENDS:-cpu}"
if [ -z "${FDK_AGREEMENT_BACKENDS:-}" ] && nvidia-smi -L >/dev/null 2>&1; then backends=cpu,cuda; fi
mkdir -p "$work"
markdown=()
[ -n "${FDK_AGREEMENT_MARKDOWN:-}" ] && markdown=(--markdown "$FDK_AGREEMENT_MARKDOWN")
echo "rtk-agreement: $("$venv/bin/rtkfdk" --help >/dev/null 2>&1 && "$venv/bin/pip" show itk-rtk | sed -n 's/^Version: /itk-rtk /p'), backends $backends, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
exec "$venv/bin/python" scripts/rtk_agreement.py --tool build/tools/fdk-agreement/fdk-agreement --work "$work" \
  --backends "$backends" --rtkfdk "$venv/bin/rtkfdk" --save-reference "$work/reference.json" "${markdown[@]}" "$@"
