#!/usr/bin/env bash
# CI step: packaging, ABI guard and the C# binding. Called by .ci/run; also
# runs alone: `bash .ci/packaging.sh` (a fresh Debian 12 machine, as root,
# CI=true, no stdin). Builds build-pkg/ (RelWithDebInfo: the ABI check needs
# -g; with the CUDA backend when /usr/local/cuda/bin/nvcc exists) and then:
#
#   1. ctest packaging checks: libfdk exports only the fdk_* functions of
#      fdk.h, SONAME libfdk.so.MAJOR (tests/packaging);
#   2. the CUDA runtime is linked statically: no libcudart in `ldd libfdk.so`;
#   3. `cmake --install` into a temporary prefix, moved elsewhere afterwards
#      (the package is relocatable), then two consumers built against it:
#      find_package(fdk) and pkg-config, each running a 16^3 reconstruction;
#      and find_package(fdk 1.0) must fail (SameMajorVersion);
#   4. CPack: .deb (libfdk0, libfdk-dev) and .tar.gz, their contents checked;
#   5. ABI: abidiff against packaging/abi/libfdk.abi; an incompatible change
#      fails unless FDK_VERSION_MAJOR changed (packaging/abi/check-abi.sh);
#   6. C#: the binding built with mcs, packed with nuget (Fdk.VERSION.nupkg:
#      lib/net45/Fdk.dll + runtimes/linux-x64/native/libfdk.so), the package
#      extracted, and the example and the NUnit tests built against and run
#      from the extracted package (bindings/csharp/build.sh all).
#
# The packages land in build-pkg/packages/ (.deb, .tar.gz) and
# build-pkg/csharp/nupkg/ (.nupkg).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$(pwd)"
export DEBIAN_FRONTEND=noninteractive

step() { echo; echo "== packaging: $*"; }
fail() { echo "packaging: FAILED: $*" >&2; exit 1; }

step "dependencies"
# mono-devel (mcs), nunit-console + libnunit-cil-dev (NUnit 2.6 for Mono),
# nuget (pack), abigail-tools (abidw/abidiff), dpkg-dev + file (CPack's
# dpkg-shlibdeps), binutils (nm, readelf).
bash scripts/install-deps.sh mono-devel nunit-console libnunit-cil-dev nuget \
  abigail-tools dpkg-dev file binutils </dev/null

build="${FDK_PACKAGING_BUILD_DIR:-build-pkg}"
jobs="${FDK_JOBS:-$(nproc)}"
cuda_args=(-DFDK_WITH_CUDA=OFF)
with_cuda=0
if [ -x /usr/local/cuda/bin/nvcc ]; then
  cuda_args=(-DFDK_WITH_CUDA=ON -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
  with_cuda=1
fi

step "configure and build $build (RelWithDebInfo, CUDA=$with_cuda)"
cmake -S . -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DFDK_BUILD_TESTS=OFF -DFDK_BUILD_TOOLS=OFF -DFDK_PACKAGING_TESTS=ON \
  "${cuda_args[@]}" </dev/null
cmake --build "$build" --parallel "$jobs" </dev/null
lib="$build/capi/libfdk.so"
[ -f "$lib" ] || fail "no $lib"

step "exported symbols and SONAME (ctest, label packaging)"
ctest --test-dir "$build/tests/packaging" --output-on-failure </dev/null

step "runtime dependencies of libfdk.so"
# (Outputs are captured before grep: `producer | grep -q` can fail under
# pipefail when grep stops reading early.)
needed="$(ldd "$lib")"
echo "$needed"
if grep -qi 'libcudart' <<<"$needed"; then
  fail "libfdk.so links the CUDA runtime dynamically (expected CUDA::cudart_static)"
fi
if [ "$with_cuda" = 1 ]; then
  # The backend is really in: the static runtime's fatbinary registration.
  symbols="$(nm "$lib")"
  grep -q '__cudaRegisterFatBinary' <<<"$symbols" ||
    fail "built with CUDA, yet libfdk.so holds no CUDA runtime"
  echo "CUDA runtime linked statically (no libcudart in ldd)"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

step "cmake --install into a temporary prefix, then moved (relocatable)"
cmake --install "$build" --prefix "$work/staging" </dev/null
mv "$work/staging" "$work/prefix"
prefix="$work/prefix"
for f in include/fdk/fdk.h lib/libfdk.so lib/libfdk.so.0 lib/cmake/fdk/fdkConfig.cmake \
         lib/cmake/fdk/fdkConfigVersion.cmake lib/cmake/fdk/fdkTargets.cmake \
         lib/pkgconfig/fdk.pc; do
  [ -e "$prefix/$f" ] || fail "the install lacks $f"
done
soname="$(readelf -d "$prefix/lib/libfdk.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')"
major="$(sed -n 's/^#define FDK_VERSION_MAJOR \([0-9]*\).*/\1/p' capi/include/fdk/fdk.h)"
[ "$soname" = "libfdk.so.$major" ] || fail "SONAME $soname, expected libfdk.so.$major"
echo "installed: SONAME $soname"

step "consumer 1: find_package(fdk) -> fdk::fdk"
cmake -S tests/packaging/consumer -B "$work/consumer-cmake" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release </dev/null
cmake --build "$work/consumer-cmake" </dev/null
"$work/consumer-cmake/fdk_consumer"
if cmake -S tests/packaging/consumer -B "$work/consumer-cmake-v1" -G Ninja \
     -DCMAKE_PREFIX_PATH="$prefix" -DFDK_REQUIRED_VERSION=1.0 >"$work/v1.log" 2>&1 </dev/null; then
  fail "find_package(fdk 1.0) accepted fdk $(sed -n 's/^Version: //p' "$prefix/lib/pkgconfig/fdk.pc")"
fi
grep -q 'requested version "1.0"' "$work/v1.log" || { cat "$work/v1.log"; fail "find_package(fdk 1.0) failed for another reason"; }
echo "find_package(fdk 1.0) refused, as SameMajorVersion says"

step "consumer 2: pkg-config"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
pkg-config --modversion fdk
cc -std=c99 -Wall -Wextra -pedantic -Werror tests/packaging/consumer/consumer.c \
  $(pkg-config --cflags fdk) -o "$work/consumer-pkgconfig" \
  $(pkg-config --libs fdk) -Wl,-rpath,"$(pkg-config --variable=libdir fdk)" -lm
"$work/consumer-pkgconfig"
unset PKG_CONFIG_PATH

step "CPack: .deb and .tar.gz"
rm -rf "$build/packages"
(cd "$build" && cpack -G "DEB;TGZ" </dev/null)
version="$(sed -n 's/^Version: //p' "$prefix/lib/pkgconfig/fdk.pc")"
runtime_deb="$build/packages/libfdk${major}_${version}_amd64.deb"
dev_deb="$build/packages/libfdk-dev_${version}_amd64.deb"
tarball="$build/packages/fdk-${version}-Linux.tar.gz"
for f in "$runtime_deb" "$dev_deb" "$tarball"; do [ -f "$f" ] || fail "CPack made no $f"; done
dpkg-deb --info "$runtime_deb" | sed -n 's/^ \(Package\|Version\|Depends\):/  &/p'
dpkg-deb --info "$dev_deb" | sed -n 's/^ \(Package\|Version\|Depends\):/  &/p'
runtime_files="$(dpkg-deb --contents "$runtime_deb")"
dev_files="$(dpkg-deb --contents "$dev_deb")"
tar_files="$(tar -tzf "$tarball")"
grep -q "/usr/lib/libfdk.so.$version\$" <<<"$runtime_files" || fail "$runtime_deb lacks libfdk.so.$version"
grep -q "/usr/lib/libfdk.so.$major -> " <<<"$runtime_files" || fail "$runtime_deb lacks the SONAME link"
for f in usr/include/fdk/fdk.h usr/lib/cmake/fdk/fdkConfig.cmake usr/lib/pkgconfig/fdk.pc; do
  grep -q "\./$f\$" <<<"$dev_files" || fail "$dev_deb lacks $f"
done
grep -q "libfdk${major} (= $version)" <<<"$(dpkg-deb --field "$dev_deb" Depends)" ||
  fail "libfdk-dev does not depend on libfdk${major}"
if grep -qi cuda <<<"$(dpkg-deb --field "$runtime_deb" Depends)"; then
  fail "the runtime .deb depends on CUDA packages"
fi
for f in include/fdk/fdk.h lib/libfdk.so.$major lib/cmake/fdk/fdkConfig.cmake lib/pkgconfig/fdk.pc; do
  grep -q "/$f\$" <<<"$tar_files" || fail "$tarball lacks $f"
done
ls -l "$build/packages"/*.deb "$build/packages"/*.tar.gz

step "ABI against packaging/abi/libfdk.abi"
bash packaging/abi/check-abi.sh "$lib" </dev/null

step "C# binding: build, NuGet pack, example and tests from the package"
bash bindings/csharp/build.sh all "$prefix" "$build/csharp" </dev/null

echo
echo "packaging: all checks passed"
