#!/usr/bin/env bash
# Shows that check-wheel.sh can fail: it must reject copies of a good wheel
#   - without fdk_ct/_lib/libfdk.so (the package would load another libfdk,
#     or none);
#   - without fdk_ct/_lib/libkissfft-float.so.* (on a machine that has
#     Debian's libkissfft-float, the loader quietly takes the system's: only
#     the mapped-files check sees it);
#   - with a CUDA toolkit library added (fdk_ct.libs/libcufft.so.12): the
#     GPU needs only the driver, and nothing of CUDA may travel in a wheel.
# Each copy is the wheel minus that file, its RECORD line dropped, so that
# pip installs it and the failure is check-wheel.sh's own.
#
#   test-check-wheel.sh WHEEL
set -euo pipefail
[ $# -eq 1 ] || { sed -n '2,13p' "${BASH_SOURCE[0]}" >&2; exit 2; }
die() { echo "test-check-wheel.sh: $*" >&2; exit 1; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
wheel="$(realpath "$1")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# without PATTERN OUT: the wheel minus the member matching PATTERN (a regex).
without() {
  "${PYTHON:-python3}" - "$wheel" "$1" "$2" <<'PY'
import re, sys, zipfile
src, pattern, out = sys.argv[1], re.compile(sys.argv[2]), sys.argv[3]
dropped = []
with zipfile.ZipFile(src) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
    for item in zin.infolist():
        if pattern.fullmatch(item.filename):
            dropped.append(item.filename)
            continue
        data = zin.read(item)
        if item.filename.endswith(".dist-info/RECORD"):
            data = b"".join(line for line in data.splitlines(keepends=True)
                            if not pattern.fullmatch(line.split(b",")[0].decode()))
        zout.writestr(item, data)
if len(dropped) != 1:
    sys.exit(f"expected one member matching {pattern.pattern}, found {dropped}")
print(f"test-check-wheel.sh: {out.rsplit('/', 1)[-1]} lacks {dropped[0]}")
PY
}

# expect_failure NAME PATTERN MESSAGE: check-wheel.sh must fail on the wheel
# without PATTERN, and say MESSAGE (so that it fails for that reason).
expect_failure() {
  mkdir "$work/$1"
  local broken="$work/$1/$(basename "$wheel")"
  without "$2" "$broken"
  if bash "$here/check-wheel.sh" "$broken" >"$work/$1.log" 2>&1; then
    cat "$work/$1.log"; die "check-wheel.sh passed a wheel without $2"
  fi
  grep -q -- "$3" "$work/$1.log" || { cat "$work/$1.log"; die "check-wheel.sh failed, but not with '$3'"; }
  echo "test-check-wheel.sh: rejected, as it should be: $(grep -- "$3" "$work/$1.log" | tail -1)"
}

# with NAME MEMBER OUT: the wheel plus MEMBER (a few bytes, in RECORD).
with() {
  "${PYTHON:-python3}" - "$wheel" "$1" "$2" <<'PY'
import base64, hashlib, sys, zipfile
src, member, out = sys.argv[1:]
data = b"\x7fELF not really"
digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
with zipfile.ZipFile(src) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
    for item in zin.infolist():
        content = zin.read(item)
        if item.filename.endswith(".dist-info/RECORD"):
            content += f"{member},sha256={digest},{len(data)}\n".encode()
        zout.writestr(item, content)
    zout.writestr(member, data)
print(f"test-check-wheel.sh: {out.rsplit('/', 1)[-1]} holds {member}")
PY
}

mkdir "$work/cufft"
with_cufft="$work/cufft/$(basename "$wheel")"
with fdk_ct.libs/libcufft.so.12 "$with_cufft"
if bash "$here/check-wheel.sh" "$with_cufft" >"$work/cufft.log" 2>&1; then
  cat "$work/cufft.log"; die "check-wheel.sh passed a wheel holding libcufft.so.12"
fi
grep -q 'a CUDA library' "$work/cufft.log" || { cat "$work/cufft.log"; die "check-wheel.sh failed, but not for libcufft"; }
echo "test-check-wheel.sh: rejected, as it should be: $(grep 'a CUDA library' "$work/cufft.log" | tail -1)"

expect_failure no-libfdk 'fdk_ct/_lib/libfdk\.so' 'LibraryNotFoundError\|FAILED: libfdk.so'
expect_failure no-kissfft 'fdk_ct/_lib/libkissfft-float\.so\..*' 'FAILED: libkissfft'
echo "test-check-wheel.sh: check-wheel.sh rejects the three broken wheels"
