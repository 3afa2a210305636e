#!/usr/bin/env bash
# Builds the fdk-ct wheel around a libfdk.so that is already built and
# tested: nothing is compiled here.
#
#   build-wheel.sh LIBFDK OUTDIR
#
#   1. LIBFDK and the non-base libraries it needs staged into a temporary
#      folder by bindings/csharp/packaging/native.sh (RUNPATH $ORIGIN, then
#      checked);
#   2. fdk_version() of LIBFDK must equal fdk.h's macros, the top-level
#      CMakeLists.txt's project version (which names the wheel: pyproject.toml)
#      and fdk_ct.__version__ where __init__.py writes it out;
#   3. scikit-build-core (the package's build backend) builds
#      py3-none-linux_x86_64 in a build venv (pinned tools from PyPI:
#      build-requirements.txt) with FDK_CT_PREBUILT_LIB_DIR set to that
#      folder: native/CMakeLists.txt then packages its files as fdk_ct/_lib/
#      and compiles nothing;
#   4. `auditwheel show` names the tag the symbol versions allow (glibc and
#      libstdc++: manylinux_2_35_x86_64 for a Debian 12 build);
#      `auditwheel repair --plat` with that tag grafts what manylinux does not
#      let a wheel assume (libzstd) into fdk_ct.libs/ under a hashed name,
#      and the repaired wheel must then show that tag. Without a manylinux
#      tag the linux_x86_64 wheel goes to OUTDIR as it is.
#
# The code of LIBFDK is not changed; only its dynamic section is (RUNPATH,
# and the grafted libzstd's name). The last line printed is
# "build-wheel.sh: wrote PATH".
# Needs python3 with venv (Debian: python3-venv), cmake >= 3.25, patchelf,
# binutils.
set -euo pipefail
[ $# -eq 2 ] || { sed -n '2,31p' "${BASH_SOURCE[0]}" >&2; exit 2; }
die() { echo "build-wheel.sh: $*" >&2; exit 1; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
package="$(dirname "$here")"
root="$(cd "$package/../.." && pwd)"
python="${PYTHON:-python3}"
libfdk="$(realpath "$1")"
[ -f "$libfdk" ] || die "no library $1"
mkdir -p "$2"
outdir="$(cd "$2" && pwd)"

# The library's own version, not the source tree's: the wheel is named after
# what it carries. A library from another tree than this package fails here.
version="$("$python" - "$libfdk" <<'PY'
import ctypes, sys
v = ctypes.CDLL(sys.argv[1]).fdk_version()
print(f"{v // 10000}.{v // 100 % 100}.{v % 100}")
PY
)"
header="$(sed -n 's/^#define FDK_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\).*/\2/p' \
  "$root/capi/include/fdk/fdk.h" | paste -sd.)"
[ "$version" = "$header" ] || die "$libfdk is version $version, fdk.h says $header"
# The wheel's version (pyproject.toml reads it from the same line).
project="$(sed -n 's/^project(fdk VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")"
[ "$version" = "$project" ] || die "$libfdk is version $version, CMakeLists.txt says $project"
# fdk_ct.__version__, where the package writes it out, must say the same.
init="$package/src/fdk_ct/__init__.py"
written="$(sed -n 's/^__version__ *= *"\(.*\)".*/\1/p' "$init")"
[ -z "$written" ] || [ "$written" = "$version" ] ||
  die "$init says __version__ = \"$written\", the library is $version"
echo "build-wheel.sh: fdk-ct $version from $libfdk"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

staged="$work/lib"
bash "$root/bindings/csharp/packaging/native.sh" stage "$libfdk" "$staged"
bash "$root/bindings/csharp/packaging/native.sh" check "$staged"

"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  -r "$here/build-requirements.txt"

# No build isolation: the pinned scikit-build-core of the venv builds it,
# from the package folder itself (its build folder is a temporary one).
"$work/venv/bin/python" -m pip wheel --quiet --disable-pip-version-check \
  --no-deps --no-build-isolation --wheel-dir "$work/dist" \
  --config-settings=cmake.define.FDK_CT_PREBUILT_LIB_DIR="$staged" "$package"
shopt -s nullglob
built=("$work/dist"/fdk_ct-"$version"-py3-none-linux_*.whl)
[ ${#built[@]} -eq 1 ] || die "expected one py3-none-linux_* wheel, got: $(ls "$work/dist")"
wheel="${built[0]}"

# The build venv's patchelf (>= 0.14.5) for auditwheel.
export PATH="$work/venv/bin:$PATH"
echo "build-wheel.sh: auditwheel show $(basename "$wheel")"
report="$(auditwheel show "$wheel")"
echo "$report"
# auditwheel 6 words it: '... is consistent with the following platform tag:
# "linux_x86_64"' (libzstd is not grafted yet) and 'This constrains the
# platform tag to "manylinux_2_35_x86_64"' (the symbol versions).
quoted() { tr '\n' ' ' <<<"$2" | grep -o "$1 *\"[^\"]*\"" | head -1 | sed 's/.*"\(.*\)"/\1/'; }
tag="$(quoted 'constrains the platform tag to' "$report")"
[ -n "$tag" ] || tag="$(quoted 'following platform tag:' "$report")"
[ -n "$tag" ] || die "auditwheel show named no platform tag"
echo "build-wheel.sh: the symbol versions allow $tag"

case "$tag" in
  manylinux_*|musllinux_*)
    auditwheel repair --plat "$tag" --wheel-dir "$work/repaired" "$wheel"
    repaired=("$work/repaired"/*.whl)
    [ ${#repaired[@]} -eq 1 ] || die "auditwheel repair wrote ${#repaired[@]} wheels"
    final="${repaired[0]}"
    echo "build-wheel.sh: auditwheel show $(basename "$final")"
    report="$(auditwheel show "$final")"
    echo "$report"
    shown="$(quoted 'following platform tag:' "$report")"
    [ "$shown" = "$tag" ] || die "the repaired wheel shows $shown, not $tag"
    ;;
  *)
    echo "build-wheel.sh: no manylinux tag; the wheel stays $(basename "$wheel")"
    final="$wheel"
    shown="$tag"
    ;;
esac
echo "build-wheel.sh: auditwheel reports the platform tag $shown"

# The licences of the libraries the wheel carries besides libfdk (native.sh's
# and auditwheel's), from their Debian copyright files, as
# dist-info/licenses/THIRD-PARTY-NOTICES.txt; `wheel pack` rewrites RECORD.
notices() {
  local tree="$1" lib name pkg
  echo "fdk-ct wheel: the third-party libraries in fdk_ct/_lib/ and fdk_ct.libs/."
  for lib in "$tree"/fdk_ct/_lib/*.so* "$tree"/fdk_ct.libs/*.so*; do
    name="$(basename "$lib")"
    [ "$name" != libfdk.so ] || continue
    # auditwheel names a grafted library NAME-HASH8.so.VERSION.
    pkg="$(dpkg -S "$(sed 's/-[0-9a-f]\{8\}\(\.so\)/\1/' <<<"$name")" 2>/dev/null | head -1 | cut -d: -f1)"
    [ -n "$pkg" ] && [ -f "/usr/share/doc/$pkg/copyright" ] || die "no Debian copyright file for $name"
    echo
    echo "== $name (Debian package $pkg)"
    cat "/usr/share/doc/$pkg/copyright"
  done
}
wheel unpack --dest "$work/unpacked" "$final" >/dev/null
tree="$(echo "$work/unpacked"/fdk_ct-*)"
info="$tree/fdk_ct-$version.dist-info"
notices "$tree" > "$info/licenses/THIRD-PARTY-NOTICES.txt"
sed -i 's|^License-File: LICENSE$|&\nLicense-File: THIRD-PARTY-NOTICES.txt|' "$info/METADATA"
grep -q '^License-File: THIRD-PARTY-NOTICES.txt$' "$info/METADATA" || die "METADATA has no License-File: LICENSE line"
mkdir "$work/final"
wheel pack --dest-dir "$work/final" "$tree" >/dev/null
final="$(echo "$work/final"/*.whl)"
echo "build-wheel.sh: notices for $(grep -c '^== ' "$info/licenses/THIRD-PARTY-NOTICES.txt") bundled libraries added"
repacked="$(quoted 'following platform tag:' "$(auditwheel show "$final" 2>/dev/null)")"
[ "$repacked" = "$shown" ] || die "the repacked wheel shows $repacked, not $shown"

case "$(basename "$final")" in
  *-py3-none-*.whl) ;;
  *) die "$(basename "$final") is not tagged py3-none-<platform>" ;;
esac
cp "$final" "$outdir/"
echo "build-wheel.sh: wrote $outdir/$(basename "$final")"
