#!/usr/bin/env bash
# Builds here what scripts/gpu-check.sh runs on the GPU machine, for sm_90
# with TIFF off (so nothing links libtiff, which that machine lacks), and
# stages it in gpu-prebuilt/ (ignored by git): carry "gpu-prebuilt" with the
# device call and gpu-check.sh skips its own configure and build, about a
# minute of device time per call.
#   usage: scripts/gpu-prebuild.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=build-sm90
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DFDK_WITH_CUDA=ON -DFDK_WITH_TIFF=OFF -DFDK_WITH_HDF5=OFF >/dev/null
cmake --build "$build" --target fdk fdk-bench fdk-bench-seams store-bench test_cuda_backend test_gpu_preview test_multi_gpu test_gpu_filter test_phantom_accuracy fdk-agreement
# libfdk_mpi and its benchmark, when this machine has MPI (the GPU machine
# has Ubuntu's OpenMPI: scripts/gpu-mpi-check.sh).
have_mpi=0
if grep -q '^FDK_WITH_MPI:BOOL=ON' "$build/CMakeCache.txt"; then
  have_mpi=1
  cmake --build "$build" --target fdk_mpi fdk-bench-mpi
fi
rm -rf gpu-prebuilt
mkdir -p gpu-prebuilt/bin gpu-prebuilt/lib
cp "$build/tools/fdk-bench/fdk-bench" "$build/tools/fdk-bench/fdk-bench-seams" "$build/tools/store-bench/store-bench" "$build/tests/gpu/test_cuda_backend" "$build/tests/gpu/test_gpu_preview" "$build/tests/gpu/test_multi_gpu" "$build/tests/gpu/test_gpu_filter" \
  "$build/tests/accuracy/test_phantom_accuracy" "$build/tools/fdk-agreement/fdk-agreement" gpu-prebuilt/bin/
# rtkfdk's figures for the agreement matrix (scripts/rtk-agreement.sh, run
# here first), which the GPU machine cannot install.
# Where CUDA's bound (||cuda - cpu|| + ||cpu - rtk||) could not show a row
# green, rtkfdk's volume itself travels (8 MiB a case): the cases whose CPU
# row is farther than 2e-4 from rtkfdk.
if [ -f build/agreement/reference.json ]; then
  cp build/agreement/reference.json gpu-prebuilt/agreement-reference.json
  mkdir -p gpu-prebuilt/agreement-rtk
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("\n".join(c for c, v in r.items() if v["d_fov"] > 2e-4 * v["n_fov"]))' \
    build/agreement/reference.json | while read -r c; do
    if [ -f "build/agreement/$c/rtk.raw" ]; then cp "build/agreement/$c/rtk.raw" "gpu-prebuilt/agreement-rtk/$c.raw"; fi
  done
fi
cp -L "$build/capi/libfdk.so.0" gpu-prebuilt/lib/
if [ "$have_mpi" = 1 ]; then
  cp -L "$build/capi/libfdk_mpi.so.0" gpu-prebuilt/lib/
  cp "$build/tools/fdk-bench-mpi/fdk-bench-mpi" gpu-prebuilt/bin/
fi
# Shared libraries the GPU machine lacks (it has zstd and the CUDA toolkit).
for exe in gpu-prebuilt/bin/* gpu-prebuilt/lib/libfdk*.so.0; do
  ldd "$exe" | awk '/=> \//{print $1, $3}'
done | sort -u | while read -r name path; do
  case "$name" in
    libkissfft*) cp -L "$path" "gpu-prebuilt/lib/$name" ;;
    libtiff*) echo "gpu-prebuild: $name is linked: the GPU machine has no libtiff" >&2; exit 1 ;;
  esac
done
# The packaged library, for gpu-check.sh's deb case (the .deb that
# .ci/packaging.sh made, when there is one).
if ls build-pkg/packages/libfdk0_*.deb >/dev/null 2>&1; then
  mkdir -p gpu-prebuilt/deb
  cp build-pkg/packages/libfdk0_*.deb gpu-prebuilt/deb/
fi
git rev-parse --short HEAD > gpu-prebuilt/COMMIT
git diff --quiet HEAD -- . ':!gpu-prebuilt' || echo "$(cat gpu-prebuilt/COMMIT)+changes" > gpu-prebuilt/COMMIT
du -sh gpu-prebuilt
echo "gpu-prebuild: staged $(cat gpu-prebuilt/COMMIT) in gpu-prebuilt/"
