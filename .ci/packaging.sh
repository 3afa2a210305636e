#!/usr/bin/env bash
# CI step: packaging, ABI guard and the C# binding. Called by .ci/run; also
# runs alone: `bash .ci/packaging.sh` (a fresh Debian 12 machine, as root,
# CI=true, no stdin). Builds build-pkg/ (Release with -g: the ABI check needs
# -g; with the CUDA backend when /usr/local/cuda/bin/nvcc exists) and then:
#
#   1. ctest packaging checks: libfdk exports only the fdk_* functions of
#      fdk.h, SONAME libfdk.so.MAJOR (tests/packaging);
#   2. the GPU needs only the NVIDIA driver: no CUDA library is a NEEDED
#      entry of libfdk.so (readelf -d): neither a toolkit library (libcudart,
#      libcufft, libnvrtc, libnvJitLink) nor the driver's libcuda, which
#      libfdk loads itself at run time; with CUDA, libfdk.so names
#      libcuda.so.1 (the file it loads) and holds no CUDA runtime;
#   3. the CUDA code: SASS for sm_75..sm_120 and PTX 120 in libfdk.so's fat
#      binary (packaging/checks/cuda_archs.py, no CUDA tools needed);
#   4. `cmake --install` into a temporary prefix, moved elsewhere afterwards
#      (the package is relocatable), then consumers built against it:
#      find_package(fdk) (fdk::fdk and fdk::frames) and pkg-config, each
#      running a 16^3 reconstruction; find_package(fdk 1.0) must fail
#      (SameMajorVersion);
#   5. CPack: the Debian packages (libfdk0, libfdk-frames0, libfdk-dev,
#      fdk-tools and their -dbgsym) and a .tar.gz; contents, Depends, the
#      symbols files against the libraries (dpkg-gensymbols), stripped
#      binaries, lintian without errors; then the packages unpacked into an
#      empty root and the consumers built from there with CMake and with
#      pkg-config (-std=c99 -Wall -Wextra -Werror), and the tools run;
#   6. ABI: abidiff against packaging/abi/libfdk.abi; an incompatible change
#      fails unless FDK_VERSION_MAJOR changed (packaging/abi/check-abi.sh);
#   7. win-x64: fdk.dll with the CPU and CUDA backends cross-built with
#      MinGW-w64 from Debian's sources of zstd and KissFFT and this build's
#      fatbin (no second nvcc run), its C and GoogleTest programs run under
#      Wine, where AUTO falls back to the CPU for want of a driver
#      (.ci/windows.sh; FDK_SKIP_WINDOWS=1 skips it; it needs the CUDA
#      toolkit's cuda.h, and fails on a machine without the toolkit);
#   8. C#: the binding built with mcs, packed as a NuGet package
#      (lib/netstandard2.0/Fdk.dll + runtimes/linux-x64/native/ +
#      runtimes/win-x64/native/), the package extracted, and the example and
#      the NUnit tests built against and run from the extracted package
#      (bindings/csharp/build.sh all);
#   9. Python: the fdk-ct wheel around this build's libfdk.so
#      (bindings/python/packaging/build-wheel.sh: auditwheel show, repair to
#      manylinux), installed into a fresh venv and run from there
#      (check-wheel.sh); check-wheel.sh shown to reject wheels that lack a
#      bundled library (test-check-wheel.sh) and build-wheel.sh to refuse
#      versions that disagree (test-build-wheel.sh). Needs PyPI (numpy, and
#      the pinned build tools).
#
# The packages land in build-pkg/packages/ (.deb, .tar.gz),
# build-pkg/csharp/nupkg/ (.nupkg) and build-pkg/python/ (.whl).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$(pwd)"
export DEBIAN_FRONTEND=noninteractive

step() { echo; echo "== packaging: $*"; }
fail() { echo "packaging: FAILED: $*" >&2; exit 1; }

step "dependencies"
# mono-devel (mcs), nunit-console + libnunit-cil-dev (NUnit 2.6 for Mono),
# nuget (pack), patchelf (the NuGet copy's RUNPATH), abigail-tools
# (abidw/abidiff), dpkg-dev + file (CPack's dpkg-shlibdeps,
# dpkg-gensymbols), binutils (nm, readelf, objcopy), lintian, python3-venv
# (the wheel's build and check venvs).
bash scripts/install-deps.sh mono-devel nunit-console libnunit-cil-dev nuget patchelf \
  abigail-tools dpkg-dev file binutils lintian python3-venv </dev/null

build="${FDK_PACKAGING_BUILD_DIR:-build-pkg}"
jobs="${FDK_JOBS:-$(nproc)}"
cuda_args=(-DFDK_WITH_CUDA=OFF)
with_cuda=0
if [ -x /usr/local/cuda/bin/nvcc ]; then
  cuda_args=(-DFDK_WITH_CUDA=ON -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
  with_cuda=1
fi

# Release (-O3), the optimisation the benchmarks measure, plus -g for the
# ABI check and the -dbgsym packages: RelWithDebInfo's -O2 made the packaged
# library's end-to-end times 1-3 % slower on the GPU machine (docs/PACKAGING.md).
# No MPI: libfdk_mpi has no package yet (docs/DISTRIBUTED.md), and fdk-tools
# must not depend on an MPI.
step "configure and build $build (Release with -g, CUDA=$with_cuda)"
cmake -S . -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS=-g -DCMAKE_CXX_FLAGS=-g \
  -DFDK_BUILD_TESTS=OFF -DFDK_BUILD_TOOLS=ON -DFDK_PACKAGING_TESTS=ON \
  -DFDK_WITH_MPI=OFF \
  "${cuda_args[@]}" </dev/null
cmake --build "$build" --parallel "$jobs" </dev/null
lib="$build/capi/libfdk.so"
[ -f "$lib" ] || fail "no $lib"

step "exported symbols and SONAME (ctest, label packaging)"
ctest --test-dir "$build/tests/packaging" --output-on-failure </dev/null

step "runtime dependencies of libfdk.so: nothing of CUDA"
# (Outputs are captured before grep: `producer | grep -q` can fail under
# pipefail when grep stops reading early.)
needed="$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')"
echo "NEEDED: $(echo $needed)"
cuda_needed="$(grep -iE '^lib(cuda|cudart|cufft|nvrtc|nvjitlink)([._-]|$)' <<<"$needed" || true)"
[ -z "$cuda_needed" ] ||
  fail "libfdk.so links $(echo $cuda_needed): the GPU must need only the NVIDIA driver, loaded at run time"
if [ "$with_cuda" = 1 ]; then
  # The backend is really in, and on the driver API: libfdk names the
  # driver it loads, and carries no CUDA runtime (static or not).
  strings_out="$(strings -a "$lib")"
  grep -q 'libcuda\.so\.1' <<<"$strings_out" ||
    fail "built with CUDA, yet libfdk.so never names libcuda.so.1 (the driver it loads at run time)"
  symbols="$(nm "$lib" 2>&1)"
  if grep -qE '__cudaRegisterFatBinary|\bcudaGetDeviceCount\b' <<<"$symbols"; then
    fail "libfdk.so holds the CUDA runtime (cudart): the driver API alone is what a user's machine has"
  fi
  echo "no CUDA library NEEDED; the driver (libcuda.so.1) is loaded at run time; no CUDA runtime inside"
else
  echo "no CUDA library NEEDED (CPU build)"
fi

if [ "$with_cuda" = 1 ]; then
  step "the CUDA code in libfdk.so: SASS from Turing to Blackwell, PTX of the newest"
  python3 packaging/checks/cuda_archs.py "$lib" --expect-sass 75,80,86,89,90,100,120 --expect-ptx 120 ||
    fail "libfdk.so does not carry the GPU code the packages promise"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

step "cmake --install into a temporary prefix, then moved (relocatable)"
cmake --install "$build" --prefix "$work/staging" </dev/null
mv "$work/staging" "$work/prefix"
prefix="$work/prefix"
for f in include/fdk/fdk.h include/fdk/fdk_preview.h include/fdk/fdk_frames.h lib/libfdk.so lib/libfdk.so.0 \
         lib/libfdk_frames.so lib/libfdk_frames.so.0 lib/cmake/fdk/fdkConfig.cmake \
         lib/cmake/fdk/fdkConfigVersion.cmake lib/cmake/fdk/fdkTargets.cmake \
         lib/pkgconfig/fdk.pc lib/pkgconfig/fdk-frames.pc bin/fdk-convert bin/fdk-scan-sim bin/fdk-bench; do
  [ -e "$prefix/$f" ] || fail "the install lacks $f"
done
soname="$(readelf -d "$prefix/lib/libfdk.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')"
major="$(sed -n 's/^#define FDK_VERSION_MAJOR \([0-9]*\).*/\1/p' capi/include/fdk/fdk.h)"
[ "$soname" = "libfdk.so.$major" ] || fail "SONAME $soname, expected libfdk.so.$major"
echo "installed: SONAME $soname"

step "consumer 1: find_package(fdk) -> fdk::fdk, fdk::frames"
cmake -S tests/packaging/consumer -B "$work/consumer-cmake" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release </dev/null
cmake --build "$work/consumer-cmake" </dev/null
"$work/consumer-cmake/fdk_consumer"
"$work/consumer-cmake/fdk_frames_consumer"
if cmake -S tests/packaging/consumer -B "$work/consumer-cmake-v1" -G Ninja \
     -DCMAKE_PREFIX_PATH="$prefix" -DFDK_REQUIRED_VERSION=1.0 >"$work/v1.log" 2>&1 </dev/null; then
  fail "find_package(fdk 1.0) accepted fdk $(sed -n 's/^Version: //p' "$prefix/lib/pkgconfig/fdk.pc")"
fi
grep -q 'requested version "1.0"' "$work/v1.log" || { cat "$work/v1.log"; fail "find_package(fdk 1.0) failed for another reason"; }
echo "find_package(fdk 1.0) refused, as SameMajorVersion says"

step "consumer 2: pkg-config"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
pkg-config --modversion fdk
pkgconfig_consumers() {  # (output folder) with PKG_CONFIG_PATH set
  cc -std=c99 -Wall -Wextra -pedantic -Werror tests/packaging/consumer/consumer.c \
    $(pkg-config --cflags fdk) -o "$1/consumer-pkgconfig" \
    $(pkg-config --libs fdk) -Wl,-rpath,"$(pkg-config --variable=libdir fdk)" -lm
  "$1/consumer-pkgconfig"
  cc -std=c99 -Wall -Wextra -pedantic -Werror tests/packaging/consumer/frames_consumer.c \
    $(pkg-config --cflags fdk-frames) -o "$1/frames-consumer-pkgconfig" \
    $(pkg-config --libs fdk-frames) -Wl,-rpath,"$(pkg-config --variable=libdir fdk)" -lm
  "$1/frames-consumer-pkgconfig"
}
pkgconfig_consumers "$work"
unset PKG_CONFIG_PATH

version="$(sed -n 's/^Version: //p' "$prefix/lib/pkgconfig/fdk.pc")"
bash packaging/debian/check-debs.sh "$build" "$work/debs" "$major" "$version" </dev/null

step "ABI against packaging/abi/libfdk.abi"
bash packaging/abi/check-abi.sh "$lib" </dev/null

step "win-x64: fdk.dll (CPU and CUDA backends) cross-built with MinGW-w64, its tests under Wine"
# .ci/windows.sh (FDK_SKIP_WINDOWS=1 skips it), with the fatbin this build
# made: one GPU code for both platforms; its fdk.dll goes into the NuGet
# package as runtimes/win-x64/native/.
if [ "${FDK_SKIP_WINDOWS:-0}" != 1 ]; then
  if [ "$with_cuda" = 1 ]; then
    FDK_CUDA_FATBIN="$(realpath "$build/kernels/fdk_kernels.fatbin")" bash .ci/windows.sh </dev/null
  else
    bash .ci/windows.sh </dev/null
  fi
  export FDK_WIN_X64_NATIVE_DIR="$root/build-win/native"
fi

step "C# binding: build, NuGet pack, example and tests from the package"
bash bindings/csharp/build.sh all "$prefix" "$build/csharp" </dev/null

step "Python: the fdk-ct wheel, installed into a fresh venv and run"
# The installed libfdk.so, as the C# package takes it. Debian's python3,
# whatever else is on PATH.
wheel_start=$SECONDS
PYTHON=/usr/bin/python3 bash bindings/python/packaging/build-wheel.sh \
  "$prefix/lib/libfdk.so" "$build/python" </dev/null | tee "$work/wheel.log"
wheel="$(sed -n 's/^build-wheel.sh: wrote //p' "$work/wheel.log")"
[ -f "$wheel" ] || fail "build-wheel.sh wrote no wheel"
PYTHON=/usr/bin/python3 bash bindings/python/packaging/check-wheel.sh "$wheel" </dev/null
PYTHON=/usr/bin/python3 bash bindings/python/packaging/test-check-wheel.sh "$wheel" </dev/null
PYTHON=/usr/bin/python3 bash bindings/python/packaging/test-build-wheel.sh "$prefix/lib/libfdk.so" </dev/null
echo "Python wheel: $(basename "$wheel"), $(du -h "$wheel" | cut -f1), built and checked in $((SECONDS - wheel_start)) s"

echo
echo "packaging: all checks passed"
