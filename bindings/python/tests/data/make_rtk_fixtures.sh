#!/usr/bin/env bash
# Regenerates the RTK-written geometry files the interop tests read, with
# itk-rtk 2.7.0 (the venv scripts/rtk-agreement.sh makes):
#   bash bindings/python/tests/data/make_rtk_fixtures.sh [VENV]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
venv="${1:-${FDK_RTK_VENV:-../../../../build/rtk-venv}}"
# Every parameter shared by the views: RTK writes each once, at the top.
"$venv/bin/rtksimulatedgeometry" -o rtk_simulated.xml -n 8 --arc 220 --first_angle 10 \
  --sid 600 --sdd 900 --proj_iso_x 3 --proj_iso_y -2 --source_x 1.5 --source_y 0.5 \
  --out_angle 2 --in_angle 1
# Parameters that change between views: RTK writes those in each <Projection>.
# AddProjection(sid, sdd, gantry, proj_x, proj_y, out_of_plane, in_plane, source_x, source_y)
"$venv/bin/python" - <<'PY'
from itk import RTK as rtk
g = rtk.ThreeDCircularProjectionGeometry.New()
g.AddProjection(600, 900, 10, 3, -2, 1, 2, 1.5, 0.5)
g.AddProjection(610, 905, 50, 4, -2, 1, 2, 1.5, 0.5)
g.AddProjection(620, 910, 370, 4, -1, -3, 2, 1.0, 0.5)
g.AddProjection(600, 900, -45, 0, 0, 0, 2, 0.0, 0.5)
w = rtk.ThreeDCircularProjectionGeometryXMLFileWriter.New()
w.SetFilename("rtk_per_view.xml")
w.SetObject(g)
w.WriteFile()
PY
