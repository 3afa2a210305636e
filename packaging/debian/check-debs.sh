#!/usr/bin/env bash
# Makes the Debian packages of a configured and built tree with CPack and
# checks them as Debian would, then as a user of them would (.ci/packaging.sh,
# step 5):
#   - libfdk0, libfdk-frames0, libfdk-dev, fdk-tools, their -dbgsym, and a
#     .tar.gz; each package's files, Depends and metadata; nothing of CUDA
#     (no CUDA package in Depends/Recommends/Suggests, no CUDA library in a
#     package, no toolkit in a description; libfdk0's says the GPU needs the
#     NVIDIA driver 580 or newer);
#   - the symbols files (packaging/debian/*.symbols) match the libraries
#     exactly (dpkg-gensymbols -c4), the shipped ELF files are stripped and
#     their debug information is in the -dbgsym packages;
#   - lintian reports no error;
#   - the packages unpacked into an empty root: CMake (fdk::fdk,
#     fdk::frames) and pkg-config (C99, -Wall -Wextra -Werror) consumers
#     built from there reconstruct a phantom; fdk-scan-sim and fdk-convert
#     from fdk-tools make a small volume.
#   usage: check-debs.sh BUILD_DIR WORK_DIR MAJOR VERSION
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:?usage: check-debs.sh BUILD_DIR WORK_DIR MAJOR VERSION}" && pwd)"
work="${2:?}"
major="${3:?}"
version="${4:?}"
fail() { echo "packaging: FAILED: $*" >&2; exit 1; }
mkdir -p "$work"
work="$(cd "$work" && pwd)"

echo "== packaging: CPack: Debian packages and .tar.gz"
rm -rf "$build/packages"
(cd "$build" && cpack -G "DEB;TGZ" </dev/null)
packages="$build/packages"
bash "$root/packaging/debian/finish-dbgsym.sh" "$packages"/*.ddeb
revision="$(sed -n 's/^FDK_PACKAGE_RELEASE:STRING=//p' "$build/CMakeCache.txt")"
full="$version-$revision"
runtime="$packages/libfdk${major}_${full}_amd64.deb"
frames="$packages/libfdk-frames${major}_${full}_amd64.deb"
dev="$packages/libfdk-dev_${full}_amd64.deb"
tools="$packages/fdk-tools_${full}_amd64.deb"
tarball="$packages/fdk-${version}-Linux.tar.gz"
for f in "$runtime" "$frames" "$dev" "$tools" "$tarball"; do [ -f "$f" ] || fail "CPack made no $f"; done
for deb in "$runtime" "$frames" "$tools"; do
  dbg="$packages/$(basename "$deb" | sed "s/_${full}_/-dbgsym_${full}_/; s/\.deb\$/.ddeb/")"
  [ -f "$dbg" ] || fail "no debug-symbols package $dbg"
done
for deb in "$packages"/*.deb "$packages"/*.ddeb; do
  echo "  $(basename "$deb"): $(stat -c %s "$deb") bytes; Depends: $(dpkg-deb --field "$deb" Depends)"
done

contents() { dpkg-deb --contents "$1" | awk '{print $6}'; }
expect() {  # PACKAGE FILE...: each FILE (a path under /) is in PACKAGE
  local deb="$1" files
  shift
  files="$(contents "$deb")"
  for f in "$@"; do
    grep -qx "\./$f" <<<"$files" || fail "$(basename "$deb") lacks /$f"
  done
}
expect "$runtime" "usr/lib/libfdk.so.$version" "usr/lib/libfdk.so.$major" "usr/share/doc/libfdk$major/copyright" \
  "usr/share/doc/libfdk$major/changelog.Debian.gz"
expect "$frames" "usr/lib/libfdk_frames.so.$version" "usr/lib/libfdk_frames.so.$major" \
  "usr/share/doc/libfdk-frames$major/copyright"
expect "$dev" usr/include/fdk/fdk.h usr/include/fdk/fdk_preview.h usr/include/fdk/fdk_frames.h usr/lib/libfdk.so usr/lib/libfdk_frames.so \
  usr/lib/cmake/fdk/fdkConfig.cmake usr/lib/cmake/fdk/fdkTargets.cmake usr/lib/pkgconfig/fdk.pc \
  usr/lib/pkgconfig/fdk-frames.pc usr/share/doc/libfdk-dev/copyright
expect "$tools" usr/bin/fdk-convert usr/bin/fdk-scan-sim usr/bin/fdk-bench usr/share/doc/fdk-tools/copyright
if contents "$runtime" | grep -q 'include/\|cmake/\|pkgconfig/\|bin/'; then fail "libfdk$major holds development files or tools"; fi
depends() { dpkg-deb --field "$1" Depends; }
grep -q "libfdk${major} (= $full)" <<<"$(depends "$dev")" || fail "libfdk-dev does not depend on libfdk${major} (= $full)"
grep -q "libfdk-frames${major} (= $full)" <<<"$(depends "$dev")" || fail "libfdk-dev does not depend on libfdk-frames${major}"
grep -q "libfdk${major}" <<<"$(depends "$frames")" || fail "libfdk-frames${major} does not depend on libfdk${major}"
grep -q "libzstd1" <<<"$(depends "$runtime")" || fail "libfdk${major}'s Depends (dpkg-shlibdeps) lack libzstd1"
# The GPU needs only the NVIDIA driver, which libfdk loads at run time: no
# package names a CUDA package in its relations, and none holds a CUDA
# library (toolkit or driver) or the toolkit's name in its description.
for deb in "$packages"/*.deb; do
  relations="$(for f in Depends Pre-Depends Recommends Suggests; do dpkg-deb --field "$deb" "$f"; done)"
  if grep -qiE 'cuda|cufft|cudart|nvrtc|nvjitlink' <<<"$relations"; then
    fail "$(basename "$deb") relates to CUDA packages: $(echo $relations)"
  fi
  cuda_files="$(contents "$deb" | grep -iE '/lib(cuda|cudart|cufft|nvrtc|nvjitlink)[^/]*\.so' || true)"
  [ -z "$cuda_files" ] || fail "$(basename "$deb") holds CUDA libraries: $cuda_files"
  if dpkg-deb --field "$deb" Description | grep -qi 'toolkit'; then
    fail "$(basename "$deb")'s description mentions a toolkit: the packages need only the NVIDIA driver"
  fi
done
grep -q 'NVIDIA driver 580' <<<"$(dpkg-deb --field "$runtime" Description)" ||
  fail "libfdk${major}'s description does not say the GPU needs the NVIDIA driver 580 or newer"
for deb in "$runtime" "$frames" "$dev" "$tools"; do
  maintainer="$(dpkg-deb --field "$deb" Maintainer)"
  grep -q '@' <<<"$maintainer" || fail "$(basename "$deb"): Maintainer '$maintainer' has no address"
  grep -qi 'localhost' <<<"$maintainer $(dpkg-deb --field "$deb" Homepage)" && fail "$(basename "$deb"): placeholder metadata"
done
tar_files="$(tar -tzf "$tarball")"
if grep -qiE '/lib(cuda|cudart|cufft|nvrtc|nvjitlink)[^/]*\.so' <<<"$tar_files"; then fail "$tarball holds CUDA libraries"; fi
for f in include/fdk/fdk.h include/fdk/fdk_preview.h include/fdk/fdk_frames.h "lib/libfdk.so.$major" "lib/libfdk_frames.so.$major" \
         lib/cmake/fdk/fdkConfig.cmake lib/pkgconfig/fdk.pc; do
  grep -q "/$f\$" <<<"$tar_files" || fail "$tarball lacks $f"
done

echo "== packaging: symbols files, stripping, debug symbols"
unpacked="$work/unpacked"
rm -rf "$unpacked"
for deb in "$packages"/*.deb "$packages"/*.ddeb; do dpkg-deb -x "$deb" "$unpacked"; done
for pair in "libfdk${major}:libfdk.so.$version" "libfdk-frames${major}:libfdk_frames.so.$version"; do
  package="${pair%%:*}" file="${pair#*:}"
  # -c4: any symbol added, removed or versioned differently than the file says.
  dpkg-gensymbols -q -c4 "-p$package" "-v$full" "-e$unpacked/usr/lib/$file" \
    "-I$root/packaging/debian/$package.symbols" -O"$work/$package.symbols.out" ||
    fail "packaging/debian/$package.symbols does not match $file (diff above)"
  echo "  $package: the symbols file matches $file"
done
for elf in "$unpacked/usr/lib/libfdk.so.$version" "$unpacked/usr/lib/libfdk_frames.so.$version" "$unpacked"/usr/bin/*; do
  file -L "$elf" | grep -q 'not stripped' && fail "$elf is not stripped"
  id="$(readelf -n "$elf" | sed -n 's/.*Build ID: \([0-9a-f]*\)/\1/p')"
  [ -f "$unpacked/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ] || fail "no debug symbols for $(basename "$elf") (build id $id)"
done
echo "  shipped ELF files stripped; their debug information is in the -dbgsym packages"

echo "== packaging: lintian"
lintian_out="$(lintian --tag-display-limit 0 "$packages"/*.deb "$packages"/*.ddeb 2>&1 || true)"
grep -v '^running with root' <<<"$lintian_out" || true
if grep -q '^E: ' <<<"$lintian_out"; then fail "lintian reports errors"; fi
echo "  lintian: no errors ($(grep -c '^W: ' <<<"$lintian_out" || true) warnings)"

echo "== packaging: consumers built from the unpacked packages"
prefix="$unpacked/usr"
cmake -S "$root/tests/packaging/consumer" -B "$work/consumer-deb" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release </dev/null >/dev/null
cmake --build "$work/consumer-deb" </dev/null >/dev/null
export LD_LIBRARY_PATH="$prefix/lib"
"$work/consumer-deb/fdk_consumer"
"$work/consumer-deb/fdk_frames_consumer"
for pc in fdk fdk-frames; do
  PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --exists "$pc" || fail "pkg-config finds no $pc in the package"
done
for c in consumer frames_consumer; do
  module=fdk
  [ "$c" = frames_consumer ] && module=fdk-frames
  # shellcheck disable=SC2046
  cc -std=c99 -Wall -Wextra -pedantic -Werror "$root/tests/packaging/consumer/$c.c" -o "$work/$c-pkgconfig-deb" \
    $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs "$module") -lm
  "$work/$c-pkgconfig-deb"
done
echo "== packaging: the tools of fdk-tools"
"$prefix/bin/fdk-scan-sim" --help >/dev/null 2>&1 || fail "fdk-scan-sim --help failed"
"$prefix/bin/fdk-convert" --help >/dev/null 2>&1 || fail "fdk-convert --help failed"
"$prefix/bin/fdk-bench" --help >/dev/null 2>&1 || fail "fdk-bench --help failed"
unset LD_LIBRARY_PATH
echo "  fdk-scan-sim, fdk-convert, fdk-bench run from the package"
ls -l "$packages"
