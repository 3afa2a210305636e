#!/usr/bin/env bash
# The main job: installs what is missing, builds fdk (with the CUDA backend
# when nvcc is found), simulates a scanner (high-contrast Shepp-Logan phantom, raw frames
# with dark and flat fields, as a TIFF folder) and reconstructs it with
# fdk-convert into TIFF slices plus a preview image, on the GPU when one is
# usable, else the CPU:
#   out/scan/      projections, dark, flat, scan.ini (the simulated scanner)
#   out/sample/    slice_NNNN.tif (one per axial plane), preview.png
# Without libtiff it reconstructs the same phantom into out/sample/volume.mha
# and out/sample/preview.png instead. Extra arguments go to fdk-convert.
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
jobs="${FDK_JOBS:-$(nproc)}"
if grep -q "FDK_WITH_TIFF:BOOL=ON" build/CMakeCache.txt; then
  cmake --build build --target fdk-scan-sim fdk-convert --parallel "$jobs"
  rm -rf out/scan out/sample
  # Toft's high-contrast Shepp-Logan, skull at about bone's attenuation
  # (0.05/mm), 20000 counts open beam, 32 flat and 16 dark frames: the inner
  # ellipsoids stand out of the noise. The preview's axial slice passes
  # through them (y = -0.25 of the 60 mm phantom scale).
  build/tools/fdk-scan-sim/fdk-scan-sim out/scan --views 360 --detector 256 \
    --phantom modified --scale 60 --mu 0.05 --flat-frames 32 --dark-frames 16
  build/tools/fdk-convert/fdk-convert out/scan/projections out/sample \
    --dark out/scan/dark --flat out/scan/flat --geometry out/scan/scan.ini \
    --preview-at 0,-15,0 "$@"
  echo "slices: out/sample/slice_*.tif ($(ls out/sample/slice_*.tif | wc -l) files), preview: out/sample/preview.png"
else
  echo "fdk was built without libtiff: writing a MetaImage instead of TIFF slices"
  cmake --build build --target fdk-sample --parallel "$jobs"
  build/tools/fdk-sample/fdk-sample --out out/sample
fi
