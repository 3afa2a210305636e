#!/usr/bin/env bash
# The ABI guard of libfdk (libabigail).
#
#   packaging/abi/check-abi.sh LIBFDK            compare LIBFDK with the baseline
#   packaging/abi/check-abi.sh LIBFDK --update   make LIBFDK's ABI the baseline
#
# LIBFDK must carry debug info (-g: RelWithDebInfo or Debug). The baseline,
# packaging/abi/libfdk.abi, is abidw's description of the exported interface
# (fdk_* functions and the types reachable from them, from fdk.h).
#
# Exit status: 0 when the ABI is unchanged or changed compatibly (functions
# added, fields appended to a struct_size-versioned struct: fdk.abignore),
# or when the change is incompatible but
# FDK_VERSION_MAJOR in fdk.h differs from the baseline's SONAME major (a
# major bump: refresh the baseline with --update). 1 on an incompatible change
# within the same major version, or when abidw/abidiff fail.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
baseline="$here/libfdk.abi"
header="$root/capi/include/fdk/fdk.h"

lib="${1:?usage: check-abi.sh LIBFDK [--update]}"
mode="${2:-check}"
[ -f "$lib" ] || { echo "check-abi: no $lib" >&2; exit 1; }
for tool in abidw abidiff; do
  command -v "$tool" >/dev/null ||
    { echo "check-abi: $tool not found (Debian package abigail-tools)" >&2; exit 1; }
done

# Only what fdk.h declares, no paths or locations, so that the file does not
# depend on the machine, the build folder or the backend built in.
current="$(mktemp)"
trap 'rm -f "$current"' EXIT
abidw --headers-dir "$root/capi/include/fdk" --drop-private-types --drop-undefined-syms \
  --exported-interfaces-only --no-corpus-path --no-comp-dir-path --no-show-locs \
  --no-elf-needed --type-id-style hash "$lib" |
  sed "s|path='[^']*/capi/src/|path='capi/src/|" > "$current"
grep -q "<elf-symbol name='fdk_create'" "$current" ||
  { echo "check-abi: abidw found no fdk_create in $lib (no debug info?)" >&2; exit 1; }

if [ "$mode" = "--update" ]; then
  cp "$current" "$baseline"
  echo "check-abi: baseline updated from $lib"
  exit 0
fi
[ "$mode" = "check" ] || { echo "check-abi: unknown option $mode" >&2; exit 1; }
[ -f "$baseline" ] || { echo "check-abi: no baseline $baseline (run with --update)" >&2; exit 1; }

header_major="$(sed -n 's/^#define FDK_VERSION_MAJOR \([0-9][0-9]*\).*/\1/p' "$header")"
soname_major() { sed -n "s/.*soname='libfdk\.so\.\([0-9][0-9]*\)'.*/\1/p;T;q" "$1"; }
baseline_major="$(soname_major "$baseline")"
lib_major="$(soname_major "$current")"
if [ "$lib_major" != "$header_major" ]; then
  echo "check-abi: $lib has SONAME libfdk.so.$lib_major but fdk.h says FDK_VERSION_MAJOR $header_major" >&2
  exit 1
fi

# abidiff's status bits: 1 error, 2 usage error, 4 ABI change, 8 incompatible
# change. Bit 8 is only set for removed or retyped symbols: a struct whose
# layout changed, or an enumerator renumbered, only sets bit 4. So a second
# pass ignores added functions (the compatible kind of change) and counts any
# change left, after the suppressions of fdk.abignore (fields appended to the
# struct_size-versioned structs), as incompatible too.
suppressions=(--suppressions "$here/fdk.abignore")
set +e
abidiff --no-show-locs "${suppressions[@]}" "$baseline" "$current"
status=$?
abidiff --no-show-locs "${suppressions[@]}" --no-added-syms "$baseline" "$current" >/dev/null
status_existing=$?
set -e
if (( (status | status_existing) & 3 )); then
  echo "check-abi: abidiff failed (status $status / $status_existing)" >&2
  exit 1
fi
if (( (status & 8) || (status_existing & 4) )); then
  if [ "$header_major" != "$baseline_major" ]; then
    echo "check-abi: incompatible ABI change, allowed: FDK_VERSION_MAJOR went from $baseline_major to $header_major."
    echo "check-abi: refresh the baseline: packaging/abi/check-abi.sh $lib --update"
    exit 0
  fi
  echo "check-abi: INCOMPATIBLE ABI change within major version $header_major (abidiff status $status, $status_existing without additions; see above)." >&2
  echo "check-abi: undo it, or bump FDK_VERSION_MAJOR (and the project version) and refresh the baseline." >&2
  exit 1
fi
if (( status & 4 )); then
  echo "check-abi: compatible ABI change (additions, see above); refresh the baseline with --update when it is released."
  exit 0
fi
echo "check-abi: $lib is ABI compatible with the baseline (major $baseline_major; appended struct fields are not reported)"
