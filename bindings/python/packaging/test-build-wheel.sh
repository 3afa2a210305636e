#!/usr/bin/env bash
# Shows that build-wheel.sh refuses a wheel whose versions disagree: on a
# copy of the files it reads, with fdk.h's FDK_VERSION_PATCH bumped, then
# with the top-level CMakeLists.txt's project version (the wheel's version)
# changed, then with fdk_ct/__init__.py's __version__ changed, it must fail
# and name the mismatch (before any venv is made, so this needs no network).
#
#   test-build-wheel.sh LIBFDK
set -euo pipefail
[ $# -eq 1 ] || { sed -n '2,8p' "${BASH_SOURCE[0]}" >&2; exit 2; }
die() { echo "test-build-wheel.sh: $*" >&2; exit 1; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
libfdk="$(realpath "$1")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# A tree laid out as the repository, holding what build-wheel.sh reads.
fresh_tree() {
  rm -rf "$work/tree"
  mkdir -p "$work/tree/capi/include/fdk" "$work/tree/bindings/csharp/packaging"
  cp "$root/capi/include/fdk/fdk.h" "$work/tree/capi/include/fdk/"
  cp "$root/CMakeLists.txt" "$work/tree/"
  cp "$root/bindings/csharp/packaging/native.sh" "$work/tree/bindings/csharp/packaging/"
  cp -rL "$root/bindings/python" "$work/tree/bindings/python"
}

# expect_refusal WHAT MESSAGE: build-wheel.sh on the tree must fail saying MESSAGE.
expect_refusal() {
  if bash "$work/tree/bindings/python/packaging/build-wheel.sh" "$libfdk" "$work/out" \
       >"$work/log" 2>&1; then
    cat "$work/log"; die "build-wheel.sh built a wheel with $1"
  fi
  grep -q -- "$2" "$work/log" || { cat "$work/log"; die "build-wheel.sh failed, but not with '$2'"; }
  echo "test-build-wheel.sh: refused $1: $(grep -- "$2" "$work/log" | tail -1)"
}

fresh_tree
sed -i 's/^#define FDK_VERSION_PATCH [0-9]*/#define FDK_VERSION_PATCH 99/' \
  "$work/tree/capi/include/fdk/fdk.h"
expect_refusal "fdk.h's version unlike the library's" 'fdk.h says'

fresh_tree
grep -q '^project(fdk VERSION ' "$work/tree/CMakeLists.txt" || die "CMakeLists.txt has no project(fdk VERSION ...) to change"
sed -i 's/^project(fdk VERSION [0-9.]*/project(fdk VERSION 99.0.0/' "$work/tree/CMakeLists.txt"
expect_refusal "CMakeLists.txt's version unlike the library's" 'CMakeLists.txt says 99.0.0'

fresh_tree
init="$work/tree/bindings/python/src/fdk_ct/__init__.py"
grep -q '^__version__ *= *"' "$init" || die "$init writes no __version__ to change"
sed -i 's/^__version__ *= *".*"/__version__ = "99.0.0"/' "$init"
expect_refusal "a __version__ unlike the library's" 'says __version__ = "99.0.0"'
echo "test-build-wheel.sh: build-wheel.sh refuses the three version mismatches"
