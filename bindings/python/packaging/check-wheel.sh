#!/usr/bin/env bash
# Installs a fdk-ct wheel into a fresh venv (no system site packages; numpy
# from PyPI) and runs smoke_wheel.py there from an empty folder outside the
# source tree, with FDK_CT_LIBRARY, LD_LIBRARY_PATH, LD_PRELOAD and
# PYTHONPATH unset: the wheel alone must reconstruct a sphere and map its own
# libfdk.so, libkissfft and libzstd. Exits non-zero on any failure.
#
#   check-wheel.sh WHEEL
set -euo pipefail
[ $# -eq 1 ] || { sed -n '2,8p' "${BASH_SOURCE[0]}" >&2; exit 2; }
die() { echo "check-wheel.sh: $*" >&2; exit 1; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ -f "$1" ] || die "no wheel $1"
wheel="$(realpath "$1")"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
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
