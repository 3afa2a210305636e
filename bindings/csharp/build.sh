#!/usr/bin/env bash
# Builds, packs and tests the C# binding with Mono from Debian (mcs, Mono.Cecil,
# nunit-console, patchelf): no .NET SDK, no network.
#
#   build.sh library OUT                  OUT/Fdk.dll (netstandard2.0) + OUT/Fdk.xml
#   build.sh pack FDK_DLL_DIR LIBFDK OUT  OUT/Fdk.VERSION.nupkg from Fdk.dll, Fdk.xml
#                                         and libfdk.so (with its non-base libraries)
#   build.sh facade OUT                   OUT/System.Memory.dll, the facade Debian's
#                                         Mono lacks (tools/SystemMemoryFacade.cs)
#   build.sh tests FDK_DLL OUT            OUT/Fdk.Tests.dll and OUT/NativeProbe.exe,
#                                         referencing FDK_DLL (and OUT/System.Memory.dll)
#   build.sh example FDK_DLL OUT          OUT/InspectionDemo.exe, referencing FDK_DLL
#   build.sh native PREFIX OUT            OUT/fdk_layout, OUT/fdk_reference (tests/native),
#                                         built against an installed fdk in PREFIX
#   build.sh all PREFIX OUT               everything, CI's way: build the library,
#                                         pack it with PREFIX's libfdk.so, extract the
#                                         package, check its native folder and the
#                                         assembly's references, build the tests and the
#                                         example against the extracted assembly, and run
#                                         both with the assembly and libfdk.so of the package
#
# Environment: FDK_WIN_X64_NATIVE_DIR, a folder holding fdk.dll (and the DLLs
# it needs), packs them into runtimes/win-x64/native/; without it the package
# is linux-x64 only. FDK_PROJECT_URL sets the package's project URL.
#
# The version of the assembly and of the package is fdk.h's; src/Fdk.csproj
# must say the same (checked here).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
header="$root/capi/include/fdk/fdk.h"
# fdk.h and the headers of the C ABI it includes (fdk_preview.h).
abi_headers=("$root"/capi/include/fdk/*.h)

die() { echo "build.sh: $*" >&2; exit 1; }

version_part() {
  sed -n "s/^#define FDK_VERSION_$1 \([0-9][0-9]*\).*/\1/p" "$header"
}
version="$(version_part MAJOR).$(version_part MINOR).$(version_part PATCH)"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "cannot read the version from $header"
csproj_version="$(sed -n 's:.*<Version>\(.*\)</Version>.*:\1:p' "$here/src/Fdk.csproj")"
[ "$csproj_version" = "$version" ] ||
  die "src/Fdk.csproj says <Version>$csproj_version</Version>, fdk.h says $version"
binding_major="$(sed -n 's/.*public const int BindingVersionMajor = \([0-9]*\);.*/\1/p' "$here/src/Reconstructor.cs")"
[ "$binding_major" = "$(version_part MAJOR)" ] ||
  die "Reconstructor.BindingVersionMajor is $binding_major, fdk.h's major is $(version_part MAJOR)"

# The binding must cover the whole C ABI: every FDK_API function of fdk.h has
# its DllImport in NativeMethods.cs, and every struct of fdk.h is listed by
# tests/native/fdk_layout.c (whose output the C# tests require a mirror for).
check_coverage() {
  local missing=() name
  for name in $(grep -ho 'FDK_API[^;(]*[ *]fdk_[a-z0-9_]*[ ]*(' "${abi_headers[@]}" |
                sed 's/.*[ *]\(fdk_[a-z0-9_]*\)[ ]*($/\1/' | sort -u); do
    grep -q "static extern [^(]* $name(" "$here/src/NativeMethods.cs" ||
      missing+=("function $name: no DllImport in src/NativeMethods.cs")
  done
  for name in $(sed -n 's/^typedef struct \(fdk_[a-z0-9_]*\) {.*/\1/p' "${abi_headers[@]}"); do
    grep -q "SIZE($name);" "$here/tests/native/fdk_layout.c" ||
      missing+=("struct $name: not in tests/native/fdk_layout.c (nor, then, mirrored in C#)")
  done
  if [ "${#missing[@]}" -ne 0 ]; then
    printf 'build.sh: the binding does not cover fdk.h:\n' >&2
    printf '  %s\n' "${missing[@]}" >&2
    exit 1
  fi
}

# C# 7.2 (mcs's newest) for Span; Mono's 4.5 profile, whose mscorlib has the
# Span family (tools/Retarget.cs says why the library is built that way).
MCS=(mcs -nologo -unsafe -optimize+ -debug -warn:4 -warnaserror+ -langversion:7.2)
MONO_LIB=/usr/lib/mono
CECIL="$MONO_LIB/gac/Mono.Cecil/0.11.0.0__0738eb9f132ed756/Mono.Cecil.dll"
# netstandard 2.0.0.0 (Mono's 4.7.2-api facade: the type list of the standard),
# the 4.6.1 reference assemblies (the oldest .NET Framework netstandard2.0
# serves: the members the binding may call), and Mono's runtime netstandard.
NETSTANDARD_REF="$MONO_LIB/4.7.2-api/Facades/netstandard.dll"
API_DIR="$MONO_LIB/4.6.1-api"
NETSTANDARD_RUNTIME="$MONO_LIB/4.5/Facades/netstandard.dll"
PROJECT_URL="${FDK_PROJECT_URL:-}"
# CUDA's libraries, Linux and Windows names (libcudart.so.13, cufft64_12.dll,
# nvrtc64_130_0.dll, nvcuda.dll, ...): never in the package.
CUDA_FILES='(^|/)(lib)?(cuda|nvcuda|cudart|cufft|nvrtc|nvjitlink)[^/]*\.(so|dll)(\.[^/]*)?$'

build_library() {
  local out="$1"
  check_coverage
  [ -f "$CECIL" ] || die "no $CECIL (Debian package libmono-cecil-private-cil, from mono-devel)"
  mkdir -p "$out/obj"
  local generated="$out/obj/Version.g.cs"
  cat > "$generated" <<EOF
// Generated by bindings/csharp/build.sh from fdk.h.
[assembly: System.Reflection.AssemblyVersion("$version.0")]
[assembly: System.Reflection.AssemblyFileVersion("$version.0")]
[assembly: System.Reflection.AssemblyInformationalVersion("$version")]
[assembly: System.Runtime.Versioning.TargetFramework(".NETStandard,Version=v2.0", FrameworkDisplayName = "")]
EOF
  # Every public member documented: CS1591 is an error (-warnaserror+).
  "${MCS[@]}" -target:library -doc:"$out/Fdk.xml" -out:"$out/obj/Fdk.dll" \
    "$here"/src/*.cs "$generated"
  "${MCS[@]}" -target:exe -r:"$CECIL" -r:System.Core -out:"$out/obj/Retarget.exe" "$here/tools/Retarget.cs"
  mono "$out/obj/Retarget.exe" "$out/obj/Fdk.dll" "$out/Fdk.dll" "$API_DIR" "$NETSTANDARD_REF"
  rm -rf "$out/obj"
  echo "build.sh: built $out/Fdk.dll ($version, netstandard2.0)"
}

build_facade() {
  local out="$1"
  mkdir -p "$out"
  sn -q -e "$NETSTANDARD_REF" "$out/open-key.pub" >/dev/null
  "${MCS[@]}" -target:library -keyfile:"$out/open-key.pub" -delaysign+ \
    -out:"$out/System.Memory.dll" "$here/tools/SystemMemoryFacade.cs"
  rm -f "$out/open-key.pub"
  echo "build.sh: built $out/System.Memory.dll (the Span family of Mono's mscorlib)"
}

# The assembly references of a package's Fdk.dll, as ikdasm shows them:
# exactly netstandard 2.0.0.0 and System.Memory 4.0.1.1.
check_references() {
  local dll="$1" refs
  refs="$(ikdasm "$dll" 2>/dev/null |
          awk '/^\.assembly extern/ { name = $3 } name && /\.ver/ { print name, $2; name = "" }')"
  echo "build.sh: $(basename "$dll") references:"
  printf '  %s\n' "$refs"
  [ "$refs" = "$(printf 'netstandard 2:0:0:0\nSystem.Memory 4:0:1:1')" ] ||
    die "$dll should reference exactly netstandard 2.0.0.0 and System.Memory 4.0.1.1"
}

# Tests and example are Mono programs: they compile against Mono's own
# mscorlib, and see the package's netstandard2.0 assembly through Mono's
# netstandard facade and the System.Memory facade put next to them.
build_tests() {
  local fdk_dll="$1" out="$2"
  mkdir -p "$out"
  [ -f "$out/System.Memory.dll" ] || build_facade "$out"
  "${MCS[@]}" -target:library -r:"$fdk_dll" -r:"$NETSTANDARD_RUNTIME" -r:"$out/System.Memory.dll" \
    -pkg:nunit -out:"$out/Fdk.Tests.dll" "$here"/tests/*.cs "$here"/common/*.cs
  "${MCS[@]}" -target:exe -r:"$fdk_dll" -r:"$NETSTANDARD_RUNTIME" -out:"$out/NativeProbe.exe" \
    "$here"/tests/probe/*.cs
  echo "build.sh: built $out/Fdk.Tests.dll and NativeProbe.exe against $fdk_dll"
}

build_example() {
  local fdk_dll="$1" out="$2"
  mkdir -p "$out"
  [ -f "$out/System.Memory.dll" ] || build_facade "$out"
  "${MCS[@]}" -target:exe -r:"$fdk_dll" -r:"$NETSTANDARD_RUNTIME" -r:"$out/System.Memory.dll" \
    -out:"$out/InspectionDemo.exe" "$here"/examples/InspectionDemo/*.cs "$here"/common/*.cs
  echo "build.sh: built $out/InspectionDemo.exe against $fdk_dll"
}

build_native() {
  local prefix="$1" out="$2" cc="${CC:-cc}"
  mkdir -p "$out"
  local libdir
  libdir="$(dirname "$(find "$prefix" -name 'libfdk.so' -print -quit)")"
  [ -n "$libdir" ] && [ -e "$libdir/libfdk.so" ] || die "no libfdk.so under $prefix"
  "$cc" -std=c99 -Wall -Wextra -pedantic -Werror -I"$prefix/include" \
    "$here/tests/native/fdk_layout.c" -o "$out/fdk_layout"
  "$cc" -std=c99 -Wall -Wextra -pedantic -Werror -I"$prefix/include" \
    "$here/tests/native/fdk_reference.c" -o "$out/fdk_reference" \
    -L"$libdir" -Wl,-rpath,"$libdir" -lfdk
  echo "build.sh: built $out/fdk_layout and $out/fdk_reference against $prefix"
}

pack() {
  local dll_dir="$1" libfdk="$2" out="$3"
  [ -f "$dll_dir/Fdk.dll" ] && [ -f "$dll_dir/Fdk.xml" ] || die "no $dll_dir/Fdk.dll and Fdk.xml"
  [ -f "$libfdk" ] || die "no $libfdk"
  local staging="$out/staging"
  rm -rf "$staging"
  mkdir -p "$staging/lib/netstandard2.0"
  cp "$dll_dir/Fdk.dll" "$dll_dir/Fdk.xml" "$staging/lib/netstandard2.0/"
  # libfdk.so (a plain file: packages hold no symlinks; its SONAME stays
  # libfdk.so.MAJOR) and the libraries it needs beyond the base system.
  bash "$here/packaging/native.sh" stage "$libfdk" "$staging/runtimes/linux-x64/native"
  if [ -n "${FDK_WIN_X64_NATIVE_DIR:-}" ]; then
    [ -f "$FDK_WIN_X64_NATIVE_DIR/fdk.dll" ] || die "FDK_WIN_X64_NATIVE_DIR has no fdk.dll: $FDK_WIN_X64_NATIVE_DIR"
    mkdir -p "$staging/runtimes/win-x64/native"
    cp "$FDK_WIN_X64_NATIVE_DIR"/*.dll "$staging/runtimes/win-x64/native/"
    echo "build.sh: packing win-x64: $(cd "$staging/runtimes/win-x64/native" && echo *.dll)"
  fi
  cp "$here/packaging/README.md" "$staging/README.md"
  third_party_notices "$staging/runtimes/linux-x64/native" > "$staging/THIRD-PARTY-NOTICES.txt"
  rm -f "$out/Fdk.$version.nupkg"
  bash "$here/packaging/pack.sh" "$staging" "$here/packaging/Fdk.nuspec" "$version" "$PROJECT_URL" \
    "$out/Fdk.$version.nupkg"
  rm -rf "$staging"
  echo "build.sh: packed $out/Fdk.$version.nupkg"
}

# The licences of the libraries bundled beside libfdk.so in $1, from their
# Debian copyright files.
third_party_notices() {
  local lib pkg
  echo "Fdk NuGet package: the third-party libraries in runtimes/linux-x64/native/."
  for lib in "$1"/*; do
    [ "$(basename "$lib")" != libfdk.so ] || continue
    pkg="$(dpkg -S "$(basename "$lib")" 2>/dev/null | head -1 | cut -d: -f1)"
    [ -n "$pkg" ] && [ -f "/usr/share/doc/$pkg/copyright" ] ||
      die "no Debian copyright file for $(basename "$lib")"
    echo
    echo "== $(basename "$lib") (Debian package $pkg)"
    cat "/usr/share/doc/$pkg/copyright"
  done
}

# Runs NUnit on the tests, the assembly and libfdk.so coming from an extracted
# package in $pkg. Prints NUnit's report; fails on any failure, error, or test
# not run (an ignored test there means something was not checked).
run_tests() {
  local pkg="$1" tests_dir="$2" native_dir="$3"
  local log="$tests_dir/nunit.log"
  set +e
  (cd "$tests_dir" &&
    MONO_PATH="$pkg/lib/netstandard2.0:$tests_dir" \
    LD_LIBRARY_PATH="$pkg/runtimes/linux-x64/native${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    FDK_TEST_NATIVE_DIR="$native_dir" \
    FDK_EXPECT_PACKAGE_DIR="$pkg" \
    nunit-console -nologo -noshadow -labels -xml="$tests_dir/TestResult.xml" \
      "$tests_dir/Fdk.Tests.dll" </dev/null 2>&1) | tee "$log"
  local status=${PIPESTATUS[0]}
  set -e
  [ "$status" -eq 0 ] || die "NUnit failed (exit status $status)"
  grep -q "Errors: 0, Failures: 0" "$log" || die "NUnit reported errors or failures"
  grep -q "Not run: 0," "$log" || die "NUnit left tests not run (ignored): see $log"
  # The summary line CI looks for: N passed, N failed.
  local total
  total="$(sed -n 's/^Tests run: \([0-9]*\),.*/\1/p' "$log" | tail -1)"
  echo "C# tests: $total passed, 0 failed"
}

run_example() {
  local pkg="$1" dir="$2"
  (cd "$dir" &&
    MONO_PATH="$pkg/lib/netstandard2.0:$dir" \
    LD_LIBRARY_PATH="$pkg/runtimes/linux-x64/native${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    mono --debug InspectionDemo.exe --size 64 --views 180 --threads 2 --slab 16 \
      --out "$dir/volume.raw" </dev/null)
  local expected=$((64 * 64 * 64 * 4))
  [ "$(stat -c %s "$dir/volume.raw")" -eq "$expected" ] || die "example wrote a wrong-sized volume"
  rm -f "$dir/volume.raw"
}

all() {
  local prefix out
  prefix="$(cd "$1" && pwd)"
  mkdir -p "$2"
  out="$(cd "$2" && pwd)"
  local libfdk="$prefix/lib/libfdk.so"
  [ -e "$libfdk" ] || libfdk="$(find "$prefix" -name 'libfdk.so' -print -quit)"
  [ -e "$libfdk" ] || die "no libfdk.so in $prefix"

  # patchelf is newer to this script than .ci/packaging.sh's package list:
  # install it the project's way when missing (a no-op where it is there).
  command -v patchelf >/dev/null || bash "$root/scripts/install-deps.sh" patchelf </dev/null
  rm -rf "$out/library" "$out/nupkg" "$out/package" "$out/tests" "$out/example" "$out/native"
  build_library "$out/library"
  pack "$out/library" "$libfdk" "$out/nupkg"

  # From here on, only what the package holds.
  local pkg="$out/package" f
  mkdir -p "$pkg"
  (cd "$pkg" && cmake -E tar xf "$out/nupkg/Fdk.$version.nupkg")
  for f in lib/netstandard2.0/Fdk.dll lib/netstandard2.0/Fdk.xml runtimes/linux-x64/native/libfdk.so \
           README.md THIRD-PARTY-NOTICES.txt Fdk.nuspec '[Content_Types].xml' _rels/.rels; do
    [ -f "$pkg/$f" ] || die "the package lacks $f"
  done
  if [ -n "${FDK_WIN_X64_NATIVE_DIR:-}" ]; then
    [ -f "$pkg/runtimes/win-x64/native/fdk.dll" ] || die "the package lacks runtimes/win-x64/native/fdk.dll"
  fi
  for f in '<license type="expression">MIT</license>' '<readme>README.md</readme>' '<dependency id="System.Memory"'; do
    grep -qF "$f" "$pkg/Fdk.nuspec" || die "the package's Fdk.nuspec lacks $f"
  done
  if [ -n "$PROJECT_URL" ]; then
    grep -qF "<projectUrl>$PROJECT_URL</projectUrl>" "$pkg/Fdk.nuspec" || die "the package's Fdk.nuspec lacks <projectUrl>$PROJECT_URL</projectUrl>"
  elif grep -q '<projectUrl>' "$pkg/Fdk.nuspec"; then
    die "the package's Fdk.nuspec has a <projectUrl> though none was given"
  fi
  if grep -qi 'localhost' "$pkg/Fdk.nuspec"; then die "the package's Fdk.nuspec holds a placeholder (localhost)"; fi
  echo "build.sh: package contents:"
  (cd "$pkg" && find . -type f ! -name '*.rels' ! -name '*Content_Types*' | sort | sed 's/^/  /')
  # No CUDA library in the package, Linux or Windows: the GPU needs only the
  # NVIDIA driver, which libfdk loads at run time (native.sh check also
  # looks at the NEEDED entries).
  local cuda_files
  cuda_files="$(cd "$pkg" && find . -type f | grep -iE "$CUDA_FILES" || true)"
  [ -z "$cuda_files" ] || die "the package bundles CUDA libraries: $cuda_files"
  echo "== the package's native folder (ldd without LD_LIBRARY_PATH)"
  bash "$here/packaging/native.sh" check "$pkg/runtimes/linux-x64/native"
  check_references "$pkg/lib/netstandard2.0/Fdk.dll"

  build_native "$prefix" "$out/native"
  build_tests "$pkg/lib/netstandard2.0/Fdk.dll" "$out/tests"
  build_example "$pkg/lib/netstandard2.0/Fdk.dll" "$out/example"
  # Nothing of the build tree next to the test and example assemblies.
  [ ! -e "$out/tests/Fdk.dll" ] && [ ! -e "$out/example/Fdk.dll" ] || die "a stray Fdk.dll"

  echo "== C# example (from the package)"
  run_example "$pkg" "$out/example"
  echo "== C# tests (NUnit, from the package)"
  run_tests "$pkg" "$out/tests" "$out/native"
}

command="${1:-}"
shift || true
case "$command" in
  library) [ $# -eq 1 ] || die "usage: build.sh library OUT"; build_library "$1" ;;
  facade) [ $# -eq 1 ] || die "usage: build.sh facade OUT"; build_facade "$1" ;;
  pack) [ $# -eq 3 ] || die "usage: build.sh pack FDK_DLL_DIR LIBFDK OUT"; pack "$1" "$2" "$3" ;;
  tests) [ $# -eq 2 ] || die "usage: build.sh tests FDK_DLL OUT"; build_tests "$1" "$2" ;;
  example) [ $# -eq 2 ] || die "usage: build.sh example FDK_DLL OUT"; build_example "$1" "$2" ;;
  native) [ $# -eq 2 ] || die "usage: build.sh native PREFIX OUT"; build_native "$1" "$2" ;;
  all) [ $# -eq 2 ] || die "usage: build.sh all PREFIX OUT"; all "$1" "$2" ;;
  *) sed -n '2,29p' "${BASH_SOURCE[0]}" >&2; exit 2 ;;
esac
