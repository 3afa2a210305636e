#!/usr/bin/env bash
# CI step: fdk.dll for win-x64 with the CPU and the CUDA backend,
# cross-compiled with Debian's MinGW-w64 and tested under Debian's Wine.
# Called by .ci/packaging.sh; also runs alone: `bash .ci/windows.sh`
# (Debian 12, as root or with sudo; the CUDA toolkit in /usr/local/cuda).
#
#   1. Debian packages: the MinGW-w64 compilers (posix threads), Wine, and
#      GoogleTest's sources (installed only when missing);
#   2. the sources of zstd and KissFFT: Debian's own source packages
#      (`apt-get source libzstd kissfft`, verified against the signed
#      Sources index), fetched once into a cache (.deps/debian-src/) with a
#      private apt state, so the machine's apt configuration is not touched;
#   3. the GPU code: the fatbin the Linux build already made (the same
#      device code for every platform; no second nvcc run in CI):
#      FDK_CUDA_FATBIN if set, else build-pkg/kernels/fdk_kernels.fatbin
#      (.ci/packaging.sh's build), each with its manifest <fatbin>.cmake;
#      only when there is neither, nvcc makes one in build-win-fatbin/ (a
#      Linux configure for the target fdk_kernels_fatbin alone);
#   4. build-win/ (preset mingw-cuda): fdk.dll with the CUDA backend (host
#      code that loads nvcuda.dll at run time, the fatbin embedded; cuda.h
#      from FDK_CUDA_INCLUDE_DIR, default /usr/local/cuda/include), zstd,
#      KissFFT, the GCC runtime, libstdc++ and winpthreads linked in
#      (cmake/toolchains/mingw-w64-x86_64.cmake, cmake/deps_from_source.cmake),
#      the C tests and the GoogleTest suites of the C API, the accuracy and
#      the core; then `cmake --install` and tests/packaging/consumer built
#      against the installed tree;
#   5. checks on fdk.dll: it imports Windows system DLLs only (not
#      nvcuda.dll, which it loads itself), exports exactly the FDK_API
#      functions of fdk.h, names nvcuda.dll, and carries the fatbin
#      (packaging/checks/cuda_archs.py: the SASS and PTX of the manifest)
#      with the kernels' names in it;
#   6. the test programs under Wine, with a pass/fail line each and a
#      summary. Wine has no NVIDIA driver: AUTO must run the CPU, an explicit
#      CUDA request must be refused, and fdk_get_backend_info must say why
#      (FDK_TEST_EXPECT_NO_CUDA_DRIVER=1 makes test_backend_info and
#      test_misuse assert exactly that);
#   7. build-win/native/: fdk.dll (stripped), all that runtimes/win-x64/native/
#      of the NuGet package needs (FDK_WIN_X64_NATIVE_DIR).
#
# FDK_SKIP_WINDOWS=1 skips the step. FDK_JOBS sets the build's parallelism,
# FDK_DEPS_CACHE the source cache (default .deps/debian-src).
# MSVC builds the same DLL on Windows (preset windows-msvc-cuda,
# docs/PACKAGING.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$(pwd)"
export DEBIAN_FRONTEND=noninteractive

if [ "${FDK_SKIP_WINDOWS:-0}" = 1 ]; then
  echo "windows: skipped (FDK_SKIP_WINDOWS=1)"
  exit 0
fi

started=$SECONDS
step_started=
step() {  # also prints how long the previous step took
  [ -z "$step_started" ] || echo "   ($((SECONDS - step_started)) s)"
  step_started=$SECONDS
  echo; echo "== windows: $*"
}
fail() { echo "windows: FAILED: $*" >&2; exit 1; }

build="$root/build-win"
cache="${FDK_DEPS_CACHE:-$root/.deps/debian-src}"
jobs="${FDK_JOBS:-$(nproc)}"
mingw=x86_64-w64-mingw32
toolchain="$root/cmake/toolchains/mingw-w64-x86_64.cmake"

step "Debian packages"
# g++-mingw-w64-x86-64-posix: std::thread needs the posix thread model;
# wine64 (the 64-bit loader) and wine (its commands) run the tests;
# googletest: GoogleTest's sources (/usr/src/googletest), compiled for the
# target; dpkg-dev: dpkg-source.
bash scripts/install-deps.sh g++-mingw-w64-x86-64-posix wine64 wine googletest dpkg-dev </dev/null

step "zstd and KissFFT sources (Debian source packages, cached in $cache)"
# A private apt state (lists, archives) under the cache, with one deb-src
# line for this release: `apt-get source` without editing the machine's
# sources. The mirror and suite can be changed for a local mirror.
mirror="${FDK_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
suite="${FDK_DEBIAN_SUITE:-$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")}"
fetch_sources() {
  local apt_dir="$cache/apt"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$cache/download"
  echo "deb-src $mirror $suite main" >"$apt_dir/sources.list"
  local apt_opts=(
    -o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir"
    -o Debug::NoLocking=1 -o APT::Sandbox::User="$(id -un)")
  apt-get "${apt_opts[@]}" -q update </dev/null
  (cd "$cache/download" && apt-get "${apt_opts[@]}" -q source --download-only libzstd kissfft </dev/null)
}
unpack_source() {  # package dir: the newest .dsc of the package, patches applied
  local dsc
  dsc="$(ls "$cache/download/$1"_*.dsc | sort -V | tail -n 1)"
  rm -rf "$cache/$2.tmp"
  dpkg-source -x "$dsc" "$cache/$2.tmp" >/dev/null
  mv "$cache/$2.tmp" "$cache/$2"
  basename "$dsc" .dsc >"$cache/$2/.fdk-source"
}
if [ ! -f "$cache/zstd/.fdk-source" ] || [ ! -f "$cache/kissfft/.fdk-source" ]; then
  rm -rf "$cache/zstd" "$cache/kissfft"
  fetch_sources
  unpack_source libzstd zstd
  unpack_source kissfft kissfft
fi
zstd_src="$cache/zstd"
kissfft_src="$cache/kissfft"
echo "zstd:    $(cat "$zstd_src/.fdk-source") ($zstd_src)"
echo "KissFFT: $(cat "$kissfft_src/.fdk-source") ($kissfft_src)"

step "the GPU code: the fatbin of the Linux build"
# One fatbin for every platform: the device code does not depend on the
# host's OS, so fdk.dll embeds the very file libfdk.so does.
cuda_include="${FDK_CUDA_INCLUDE_DIR:-/usr/local/cuda/include}"
[ -f "$cuda_include/cuda.h" ] || fail "no cuda.h in $cuda_include (set FDK_CUDA_INCLUDE_DIR to the CUDA toolkit's include folder)"
fatbin="${FDK_CUDA_FATBIN:-}"
if [ -n "$fatbin" ]; then
  echo "FDK_CUDA_FATBIN: $fatbin"
elif [ -f "$root/build-pkg/kernels/fdk_kernels.fatbin" ]; then
  fatbin="$root/build-pkg/kernels/fdk_kernels.fatbin"
  echo "the Linux build's: $fatbin"
else
  # Running alone: nvcc makes just the fatbin (no library, tests or tools).
  nvcc="${FDK_NVCC:-/usr/local/cuda/bin/nvcc}"
  [ -x "$nvcc" ] || fail "no fatbin (FDK_CUDA_FATBIN, build-pkg/kernels/fdk_kernels.fatbin) and no nvcc ($nvcc) to make one"
  echo "none built yet: nvcc makes one in $root/build-win-fatbin"
  cmake -S . -B "$root/build-win-fatbin" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DFDK_WITH_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc" -DFDK_CUDA_INCLUDE_DIR="$cuda_include" \
    -DFDK_BUILD_TESTS=OFF -DFDK_BUILD_TOOLS=OFF -DFDK_PACKAGING_TESTS=OFF -DFDK_WITH_MPI=OFF \
    -DFDK_WITH_TIFF=OFF </dev/null >/dev/null
  cmake --build "$root/build-win-fatbin" --target fdk_kernels_fatbin </dev/null
  fatbin="$root/build-win-fatbin/kernels/fdk_kernels.fatbin"
fi
fatbin="$(realpath "$fatbin")"
[ -f "$fatbin" ] && [ -f "$fatbin.cmake" ] || fail "no fatbin $fatbin, or no manifest $fatbin.cmake beside it"
# What the build that made it recorded (CMAKE_CUDA_ARCHITECTURES, the nvcc
# version), for the checks below.
cuda_archs="$(sed -n 's/^set(CMAKE_CUDA_ARCHITECTURES "\(.*\)")$/\1/p' "$fatbin.cmake")"
nvcc_version="$(sed -n 's/^set(FDK_CUDA_COMPILER_VERSION "\(.*\)")$/\1/p' "$fatbin.cmake")"
[ -n "$cuda_archs" ] && [ -n "$nvcc_version" ] || fail "$fatbin.cmake lacks CMAKE_CUDA_ARCHITECTURES or FDK_CUDA_COMPILER_VERSION"
expect_sass="" expect_ptx=""
for arch in ${cuda_archs//;/ }; do
  number="$(sed -E 's/^([0-9]+).*/\1/' <<<"$arch")"
  case "$arch" in
    *-virtual) expect_ptx+="${expect_ptx:+,}$number" ;;
    *-real) expect_sass+="${expect_sass:+,}$number" ;;
    *) expect_sass+="${expect_sass:+,}$number"; expect_ptx+="${expect_ptx:+,}$number" ;;
  esac
done
echo "fatbin: $(stat -c %s "$fatbin") bytes, nvcc $nvcc_version, architectures $cuda_archs (SASS $expect_sass; PTX ${expect_ptx:-none})"

step "configure and build $build (MinGW-w64, Release, CPU and CUDA backends)"
# The preset mingw-cuda of CMakePresets.json (the toolchain file, Release,
# warnings as errors, GoogleTest from /usr/src/googletest, every program and
# fdk.dll into build-win/bin), with this script's source trees, fatbin and
# cuda.h. It builds the library, the C tests, and the GoogleTest suites of
# the C API, the accuracy and the core; not those of the adapters, tools and
# fuzzers, which are not built for Windows (POSIX calls, libtiff), nor the
# GPU suites (tests/gpu: no GPU under Wine).
cmake --preset mingw-cuda -DFDK_ZSTD_SOURCE_DIR="$zstd_src" -DFDK_KISSFFT_SOURCE_DIR="$kissfft_src" \
  -DFDK_CUDA_FATBIN="$fatbin" -DFDK_CUDA_INCLUDE_DIR="$cuda_include" </dev/null
cmake --build --preset mingw-cuda --parallel "$jobs" </dev/null
gtest_targets=(test_misuse test_pipeline test_concurrency test_limits test_store_policy test_backend_info
  test_phantom_accuracy
  test_ramp_filter test_projection_store test_geometry test_ingest test_slab_planner
  test_slab_prefetch test_thread_pool test_checked test_phantom)
dll="$build/bin/fdk.dll"
[ -f "$dll" ] || fail "no $dll"

# The installed tree (fdk's components only: the frames adapter is not built
# here), and a consumer built against it as a user's project would be
# (find_package(fdk) -> fdk::fdk, the import library libfdk.dll.a).
rm -rf "$build/stage" "$build/consumer"
for component in runtime development; do
  cmake --install "$build" --prefix "$build/stage" --component "$component" </dev/null >/dev/null
done
[ -f "$build/stage/bin/fdk.dll" ] || fail "cmake --install put no bin/fdk.dll"
cmake -S tests/packaging/consumer -B "$build/consumer" -G Ninja \
  -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DCMAKE_BUILD_TYPE=Release \
  -Dfdk_DIR="$build/stage/lib/cmake/fdk" \
  -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" </dev/null >/dev/null
cmake --build "$build/consumer" </dev/null
cp "$build/stage/bin/fdk.dll" "$build/consumer/"

step "fdk.dll: imports and exports"
pe="$("$mingw-objdump" -p "$dll")"
imports="$(sed -n 's/^\s*DLL Name: //p' <<<"$pe")"
echo "imports: $(tr '\n' ' ' <<<"$imports")"
# Windows' own DLLs only: nothing of MinGW (libstdc++-6, libgcc_s_seh-1,
# libwinpthread-1) nor of zstd/KissFFT has to be shipped beside it.
while read -r name; do
  case "${name,,}" in
    kernel32.dll | msvcrt.dll | ucrtbase.dll | api-ms-win-*.dll | advapi32.dll | user32.dll) ;;
    *) fail "fdk.dll imports $name, which is not a Windows system DLL" ;;
  esac
done <<<"$imports"
exported="$(sed -n '/\[Ordinal\/Name Pointer\] Table/,/^$/p' <<<"$pe" | sed -n 's/^\s*\[ *[0-9]*\] //p' | sort)"
declared="$(perl -0777 -ne 'while (/FDK_API[^;(]*[ *](fdk_[a-z0-9_]+)\s*\(/g) { print "$1\n" }' \
  capi/include/fdk/*.h | sort -u)"  # fdk.h and the headers it includes
[ "$(wc -l <<<"$declared")" -ge 10 ] || fail "found too few FDK_API functions in fdk.h: parse error?"
if [ "$exported" != "$declared" ]; then
  diff <(echo "$declared") <(echo "$exported") | sed 's/^</  not exported:/; s/^>/  exported, not in fdk.h:/' | grep -v '^[0-9]' >&2 || true
  fail "the exports of fdk.dll are not the FDK_API functions of fdk.h"
fi
echo "exports: the $(wc -l <<<"$exported") FDK_API functions of fdk.h, nothing else"

step "fdk.dll: the CUDA backend inside (the fatbin, the driver's name)"
# The driver is loaded at run time, by name (LoadLibraryExW from the system
# folder): the name is in the DLL, the import table has none of it (above).
# L"nvcuda.dll" as its UTF-16 bytes, terminator included (strings -e l
# may glue a printable byte before it, depending on the layout).
dll_strings="$(strings -a "$dll")"
LC_ALL=C grep -qaP 'n\x00v\x00c\x00u\x00d\x00a\x00\.\x00d\x00l\x00l\x00\x00\x00' "$dll" ||
  fail "fdk.dll never names nvcuda.dll, the NVIDIA driver it loads at run time"
# The fatbin's SASS and PTX, as the manifest says (the same check as for
# libfdk.so; it reads the PE's sections as it does ELF's).
python3 packaging/checks/cuda_archs.py "$dll" --expect-sass "$expect_sass" ${expect_ptx:+--expect-ptx "$expect_ptx"} ||
  fail "fdk.dll does not carry the GPU code of $fatbin"
# The kernels by their C names (cuLibraryGetKernel looks them up so).
for kernel in fdk_bp_generic fdk_filter_rows fdk_filter_columns; do
  grep -q "$kernel" <<<"$dll_strings" || fail "fdk.dll lacks the kernel $kernel"
done
# Byte for byte the fatbin given: it starts with the fatbin magic (0xBA55ED50).
cmp -s "$fatbin" <(python3 - "$dll" "$(stat -c %s "$fatbin")" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
size = int(sys.argv[2])
at = data.find(b"\x50\xed\x55\xba")
sys.stdout.buffer.write(data[at:at + size] if at >= 0 else b"")
PY
) || fail "fdk.dll does not hold $fatbin byte for byte"
echo "names nvcuda.dll (loaded at run time, not imported); carries the fatbin ($(stat -c %s "$fatbin") bytes, SASS $expect_sass, PTX ${expect_ptx:-none}) with its kernels"

step "tests under Wine"
# A prefix of this build's own, 64-bit only; no Mono or Gecko installer
# (mscoree, mshtml), and no debugger on a crash (winedbg would hold the
# crashed program until the timeout); quiet.
export WINEPREFIX="$build/wine" WINEARCH=win64 WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=;winedbg.exe=d"
# No NVIDIA driver here: Debian's Wine has no nvcuda.dll, and where one
# exists (wine-staging's, a wrapper of the Linux libcuda.so.1) it does not
# load without the Linux driver. The suites assert the CPU fallback and the
# reason (test_backend_info, test_misuse).
export FDK_TEST_EXPECT_NO_CUDA_DRIVER=1
unset DISPLAY
# One server for the prefix, kept for the whole run: without it, each
# program's server may stop after the last one ended just as the next one
# connects ("wine client error: recvmsg: Connection reset by peer", seen
# once in a dozen runs). It is stopped (wineserver -k: this prefix's server
# only) when the script ends.
mkdir -p "$WINEPREFIX"  # the server starts in it; wineboot fills it
# No stand-in driver left from an interrupted run (below).
rm -f "$WINEPREFIX/drive_c/windows/system32/nvcuda.dll" "$build/bin/nvcuda.dll"
wineserver -p
trap 'wineserver -k 2>/dev/null || true' EXIT
wineboot -i >/dev/null 2>&1 || true
# Crashes are told by Wine's message, not by the exit status alone: a fault
# in a thread after main returned can leave it at 0.
crashed() { grep -qE 'Unhandled (exception|page fault)|wine: Unhandled|starting debugger' "$1"; }
passed=0
failed=()
summary=()
run_test() {  # name directory "exe [arguments]" expected-output
  local name="$1" log="$build/wine-logs/$1.log" rc=0 result
  mkdir -p "$build/wine-logs"
  # shellcheck disable=SC2086 # $3: the program and its arguments
  (cd "$2" && timeout 300 wine $3) >"$log" 2>&1 || rc=$?
  local ok=0 rerun=""
  if [ "$rc" = 0 ] && ! crashed "$log" && grep -qE "$4" "$log"; then ok=1; fi
  # The suite that bounds how soon cancel and destroy return (against the
  # time of a slab measured in the same process) can miss its bound when
  # Wine's threads are descheduled: its failed tests, and only those, run
  # once more, and the summary says so. A test that fails twice fails.
  if [ "$ok" = 0 ] && [ "$1" = test_concurrency ] && ! crashed "$log"; then
    local names
    names="$(sed -n 's/^\[  FAILED  \] \([A-Za-z_0-9]*\.[A-Za-z_0-9]*\) (.*/\1/p' "$log" | sort -u | paste -sd: -)"
    if [ -n "$names" ]; then
      rc=0
      # shellcheck disable=SC2086
      (cd "$2" && timeout 300 wine $3 "--gtest_filter=$names") >"$log.rerun" 2>&1 || rc=$?
      if [ "$rc" = 0 ] && ! crashed "$log.rerun" && grep -qE "$4" "$log.rerun"; then
        ok=1
        rerun=" (timing: $names failed, then passed when run again; $log)"
      fi
    fi
  fi
  if [ "$ok" = 1 ]; then
    result="ok    $(grep -oE '\[  PASSED  \] [0-9]+ tests?' "$log" | sed 's/.*\] //' || true)$rerun"
    passed=$((passed + 1))
  else
    result="FAIL  (exit $rc; log $log)"
    failed+=("$name")
    tail -n 30 "$log" | sed "s/^/  $name: /" >&2
  fi
  summary+=("$(printf '  %-20s %s' "$name" "$result")")
}
run_test c99_api "$build/bin" test_c99_api.exe '^c99 api test: ok'
run_test consumer "$build/consumer" fdk_consumer.exe '^consumer: fdk'
run_test dll_unload "$build/bin" test_dll_unload.exe '^dll unload: ok'
for t in "${gtest_targets[@]}"; do
  run_test "$t" "$build/bin" "$t.exe" '^\[  PASSED  \] [0-9]+ tests?\.'
done

# A stand-in nvcuda.dll (tests/windows/fake_nvcuda.c; every entry point of
# kernels/src/driver/driver_api.hpp, most of them failing): fdk.dll must
# load it from the system folder only, bind it, and fall back to the CPU
# with the reason (test_backend_info: AUTO on the CPU, a CUDA request
# refused with fdk_get_backend_info's message, which is matched here).
fake="$build/fake-nvcuda"
system32="$WINEPREFIX/drive_c/windows/system32"
rm -rf "$fake"
mkdir -p "$fake"
sed -n 's/.*X([A-Za-z0-9_]*, *"\(cu[A-Za-z0-9_]*\)").*/\1/p' kernels/src/driver/driver_api.hpp |
  grep -vxE 'cuDriverGetVersion|cuInit|cuGetErrorName|cuGetErrorString|cuDeviceGetCount' |
  sed -E 's/^(cuLibrary.*)$/#ifndef FAKE_LACKS_LIBRARY\nFAKE_STUB(\1)\n#endif/; /^cu/s/^(.*)$/FAKE_STUB(\1)/' >"$fake/fake_nvcuda_stubs.h"
[ "$(grep -c FAKE_STUB "$fake/fake_nvcuda_stubs.h")" -ge 30 ] || fail "found too few driver entry points in driver_api.hpp: parse error?"
fake_dll() {  # name version cuInit's status [-DFAKE_LACKS_LIBRARY]
  "$mingw-gcc-posix" -shared -O2 -Wall -Wextra -Werror -static -I"$fake" -DFAKE_VERSION="$2" -DFAKE_INIT="$3" \
    ${4:-} -o "$fake/$1/nvcuda.dll" tests/windows/fake_nvcuda.c
}
for variant in no_gpu:13000:100 old:12040:0 wrapper:13000:0:-DFAKE_LACKS_LIBRARY; do
  IFS=: read -r name version init define <<<"$variant"
  mkdir -p "$fake/$name"
  fake_dll "$name" "$version" "$init" "$define"
done
# In the program's folder it must not be loaded (a planted DLL), ...
cp "$fake/no_gpu/nvcuda.dll" "$build/bin/nvcuda.dll"
run_test nvcuda_planted "$build/bin" test_backend_info.exe \
  'the NVIDIA driver is not installed \(nvcuda.dll not found in the system folder\)'
rm -f "$build/bin/nvcuda.dll"
# ... in the system folder it is the driver.
export FDK_TEST_EXPECT_NO_CUDA_DRIVER=0
fake_case() {  # variant expected message
  cp "$fake/$1/nvcuda.dll" "$system32/nvcuda.dll"
  run_test "nvcuda_$1" "$build/bin" test_backend_info.exe "$2"
  rm -f "$system32/nvcuda.dll"
}
fake_case no_gpu 'driver_version=13000 .*"no CUDA device: the NVIDIA driver is loaded but found no GPU"'
fake_case old 'driver_version=12040 .*"the NVIDIA driver supports CUDA 12.4; this build of fdk needs CUDA 13.0 \(NVIDIA driver 580 or newer\): update the driver"'
fake_case wrapper 'driver_version=13000 .*"nvcuda.dll reports CUDA 13.0 yet lacks cuLibraryLoadData: it is not the NVIDIA driver itself'
export FDK_TEST_EXPECT_NO_CUDA_DRIVER=1

echo "$(wine --version 2>/dev/null) on $(uname -m): $passed passed, ${#failed[@]} failed"
for log in test_backend_info nvcuda_planted nvcuda_no_gpu nvcuda_old nvcuda_wrapper; do
  printf '  %-18s %s\n' "$log:" "$(grep -m1 '^backend info:' "$build/wine-logs/$log.log" | sed 's/^backend info: //' || true)"
done
printf '%s\n' "${summary[@]}"
[ "${#failed[@]}" -eq 0 ] || fail "under Wine: ${failed[*]}"

step "build-win/native/ (runtimes/win-x64/native/ of the NuGet package)"
native="$build/native"
rm -rf "$native"
mkdir -p "$native"
"$mingw-strip" --strip-unneeded -o "$native/fdk.dll" "$dll"
ls -l "$native"
# For the package's notices: which sources are linked into fdk.dll.
{
  echo "fdk.dll (win-x64) links statically:"
  echo "  zstd    $(cat "$zstd_src/.fdk-source") (BSD-3-Clause), Debian source package"
  echo "  KissFFT $(cat "$kissfft_src/.fdk-source") (BSD-3-Clause), Debian source package"
  echo "  libgcc and libstdc++ of gcc-mingw-w64 $(dpkg-query -W -f '${Version}' gcc-mingw-w64-x86-64-posix)"
  echo "    (GPL-3.0-or-later WITH GCC-exception-3.1, which lets fdk.dll be distributed on any terms)"
  echo "  winpthreads (expat) and the startup code (ZPL-2.1) of mingw-w64 $(dpkg-query -W -f '${Version}' mingw-w64-common)"
  echo "    (/usr/share/doc/mingw-w64-common/copyright)"
} >"$build/native-sources.txt"
cat "$build/native-sources.txt"
echo "   ($((SECONDS - step_started)) s)"
echo
echo "windows: ok in $((SECONDS - started)) s: $native/fdk.dll (FDK_WIN_X64_NATIVE_DIR=$native)"
