#!/usr/bin/env bash
# Installs a fdk-ct wheel into a fresh venv (no system site packages; numpy
# from PyPI) and runs smoke_wheel.py there from an empty folder outside the
# source tree, with FDK_CT_LIBRARY, LD_LIBRARY_PATH, LD_PRELOAD and
# PYTHONPATH unset: the wheel alone must reconstruct a sphere and map its own
# libfdk.so, libkissfft and libzstd. Exits non-zero on any failure.
#
# First, without installing anything: no CUDA library in the wheel and none
# a NEEDED entry of a library in it (readelf -d): the GPU needs only the
# NVIDIA driver, which libfdk loads itself at run time (libcuda.so.1, not
# linked either), and no CUDA toolkit (libcudart, libcufft, libnvrtc,
# libnvJitLink) at all.
#
#   check-wheel.sh WHEEL
set -euo pipefail
[ $# -eq 1 ] || { sed -n '2,14p' "${BASH_SOURCE[0]}" >&2; exit 2; }
die() { echo "check-wheel.sh: $*" >&2; exit 1; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ -f "$1" ] || die "no wheel $1"
wheel="$(realpath "$1")"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# No CUDA library in the wheel, by name or as a NEEDED entry.
mkdir "$work/unpacked"
cuda='^(lib)?(cuda|nvcuda|cudart|cufft|nvrtc|nvjitlink)([._-].*)?\.(so|dll)(\..*)?$'
"${PYTHON:-python3}" - "$wheel" "$work/unpacked" "$cuda" <<'PY' || die "$(basename "$wheel") bundles CUDA libraries"
import re, sys, zipfile
wheel, out, cuda = sys.argv[1], sys.argv[2], re.compile(sys.argv[3], re.IGNORECASE)
with zipfile.ZipFile(wheel) as z:
    bad = [n for n in z.namelist() if cuda.match(n.rsplit("/", 1)[-1])]
    for n in bad:
        print(f"check-wheel.sh: the wheel holds {n}, a CUDA library", file=sys.stderr)
    z.extractall(out, [n for n in z.namelist() if ".so" in n.rsplit("/", 1)[-1]])
sys.exit(1 if bad else 0)
PY
while IFS= read -r -d '' lib; do
  for name in $(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    if grep -qiE "$cuda" <<<"$name"; then
      die "${lib#"$work/unpacked/"} has NEEDED $name: no CUDA library is linked (the NVIDIA driver is loaded at run time)"
    fi
  done
done < <(find "$work/unpacked" -type f -name '*.so*' -print0)
echo "check-wheel.sh: no CUDA library in $(basename "$wheel"), none NEEDED"

env -u PYTHONPATH "${PYTHON:-python3}" -m venv "$work/venv"
env -u PYTHONPATH "$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel" ||
  die "pip install $(basename "$wheel") failed"
mkdir "$work/run"
cp "$here/smoke_wheel.py" "$work/run/"
cd "$work/run"
# -I: no PYTHON* variables, no user site-packages, not even the script's folder.
env -u FDK_CT_LIBRARY -u LD_LIBRARY_PATH -u LD_PRELOAD -u PYTHONPATH \
  "$work/venv/bin/python" -I smoke_wheel.py || die "$(basename "$wheel") failed its smoke test"
echo "check-wheel.sh: $(basename "$wheel") passed"
