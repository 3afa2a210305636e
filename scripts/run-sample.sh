#!/usr/bin/env bash
# The sample job: installs what is missing, builds fdk (with the CUDA backend
# when nvcc is found) and reconstructs a simulated Shepp-Logan scan into
# out/sample/volume.mha and out/sample/preview.png.
# Extra arguments go to fdk-sample (e.g. --size 256 --views 360).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh

cuda_args=(-DFDK_WITH_CUDA=OFF)
nvcc_path="$(command -v nvcc || true)"
if [ -z "$nvcc_path" ] && [ -x /usr/local/cuda/bin/nvcc ]; then
  nvcc_path=/usr/local/cuda/bin/nvcc
fi
if [ -n "$nvcc_path" ]; then
  cuda_args=(-DFDK_WITH_CUDA=ON "-DCMAKE_CUDA_COMPILER=$nvcc_path")
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${cuda_args[@]}"
cmake --build build --target fdk-sample --parallel "${FDK_JOBS:-$(nproc)}"
build/tools/fdk-sample/fdk-sample --out out/sample "$@"
