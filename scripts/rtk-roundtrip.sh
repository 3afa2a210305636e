#!/usr/bin/env bash
# RTK's own scan files (rtksimulatedgeometry's XML, rtkprojectshepploganphantom's
# MetaImage stack) through fdk-convert with no detector flag, compared with
# rtkfdk's volume as SimpleITK and tifffile read them (scripts/rtk_roundtrip.py
# says what is checked). Installs itk-rtk, SimpleITK and tifffile from PyPI
# into the venv scripts/rtk-agreement.sh uses; builds fdk-convert when needed.
#   usage: scripts/rtk-roundtrip.sh        env: FDK_RTK_VENV (build/rtk-venv),
#          FDK_ROUNDTRIP_WORK (build/roundtrip), FDK_ROUNDTRIP_BACKEND (cpu)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
venv="${FDK_RTK_VENV:-build/rtk-venv}"
if [ ! -x "$venv/bin/rtkfdk" ]; then
  echo "rtk-roundtrip: installing itk-rtk 2.7.0 into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet itk-rtk==2.7.0
fi
if ! "$venv/bin/python" -c "import SimpleITK, tifffile" 2>/dev/null; then
  "$venv/bin/pip" install --quiet SimpleITK tifffile
fi
if [ ! -f build/CMakeCache.txt ]; then
  echo "rtk-roundtrip: configure build/ first (scripts/test.sh or scripts/run-sample.sh)" >&2
  exit 2
fi
cmake --build build --target fdk-convert >/dev/null
echo "rtk-roundtrip: $("$venv/bin/pip" show itk-rtk | sed -n 's/^Version: /itk-rtk /p'), SimpleITK $("$venv/bin/python" -c 'import SimpleITK; print(SimpleITK.Version.VersionString())'), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
exec "$venv/bin/python" scripts/rtk_roundtrip.py --convert build/tools/fdk-convert/fdk-convert \
  --rtk-bin "$venv/bin" --work "${FDK_ROUNDTRIP_WORK:-build/roundtrip}" --backend "${FDK_ROUNDTRIP_BACKEND:-cpu}"
