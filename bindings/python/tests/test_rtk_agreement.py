"""Agreement with itk-rtk's rtkfdk (issue 30): RTK simulates a short scan
with offsets and tilts (rtksimulatedgeometry, rtkprojectshepploganphantom)
and reconstructs it (rtkfdk); fdk_ct reads RTK's XML and projections and
must agree within 1e-3 relative L2 over the field of view. Needs the itk-rtk
virtual environment that scripts/rtk-agreement.sh makes (FDK_RTK_VENV,
default build/rtk-venv); skipped, saying so, without it, unless
FDK_RTK_REQUIRED=1 (CI) makes that a failure. About a minute, nearly all of
it RTK's tools starting."""
import os
import subprocess

import numpy as np
import pytest

import fdk_ct
from fdk_ct.interop import rtk_xml

from _metaimage import read_mha, spacing_origin

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
VENV = os.environ.get("FDK_RTK_VENV") or os.path.join(REPO, "build", "rtk-venv")
BIN = os.path.join(VENV, "bin")
BOUND = 1e-3

# A short scan (220 degrees) with a displaced source, a detector off centre
# both ways and tilted in and out of plane.
GEOMETRY = ["-n", "120", "--arc", "220", "--first_angle", "10", "--sid", "600", "--sdd", "900",
            "--proj_iso_x", "4", "--proj_iso_y", "-2", "--source_x", "1.5", "--source_y", "0.5",
            "--out_angle", "2", "--in_angle", "1"]
DETECTOR = ["--spacing", "1", "--dimension", "128,96"]
VOLUME = ["--spacing", "1.2", "--dimension", "80"]

MISSING = (f"skipped: itk-rtk not installed (no {BIN}/rtkfdk; scripts/rtk-agreement.sh "
           "makes it)")


def rtk(tool, *args, cwd):
    r = subprocess.run([os.path.join(BIN, tool), *args], cwd=cwd, capture_output=True, text=True)
    assert r.returncode == 0, f"{tool} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"


@pytest.fixture(scope="module")
def scan(tmp_path_factory):
    if not os.access(os.path.join(BIN, "rtkfdk"), os.X_OK):
        if os.environ.get("FDK_RTK_REQUIRED") == "1":
            pytest.fail(MISSING.replace("skipped: ", "FDK_RTK_REQUIRED=1 but "))
        pytest.skip(MISSING)
    d = str(tmp_path_factory.mktemp("rtk"))
    rtk("rtksimulatedgeometry", "-o", "geometry.xml", *GEOMETRY, cwd=d)
    rtk("rtkprojectshepploganphantom", "-g", "geometry.xml", "-o", "projections.mha",
        "--phantomscale", "40", *DETECTOR, cwd=d)
    rtk("rtkfdk", "-g", "geometry.xml", "-p", ".", "-r", "projections.mha", "-o", "rtk.mha",
        *VOLUME, cwd=d)
    # rtkfdk weights this short scan's displaced detector by Parker's and
    # the half-fan weights both; fdk's AUTO by Parker's alone (fdk.h,
    # offset_detector), as rtkfdk --nodisplaced does.
    rtk("rtkfdk", "-g", "geometry.xml", "-p", ".", "-r", "projections.mha", "-o", "rtk_parker.mha",
        "--nodisplaced", *VOLUME, cwd=d)
    projections, p_header = read_mha(os.path.join(d, "projections.mha"))
    reference, v_header = read_mha(os.path.join(d, "rtk.mha"))
    (_, sv, su), (_, ov, ou) = spacing_origin(p_header)
    geometry = fdk_ct.Geometry.from_rtk_xml(os.path.join(d, "geometry.xml"), (sv, su),
                                            detector_shape=projections.shape[1:],
                                            detector_origin=(ov, ou))
    spacing, origin = spacing_origin(v_header)
    volume = fdk_ct.Volume(reference.shape, spacing, origin)
    return d, projections, geometry, volume, reference


def field_of_view(geometry, volume):
    """(z, y, x) mask of the voxels whose centres every view's matrix maps
    inside the detector (between its first and last pixel centres)."""
    rows, cols = geometry.detector_shape
    ov, ou = geometry.resolved_detector_origin()
    sv, su = geometry.detector_spacing
    z, y, x = np.meshgrid(*(volume.coordinates(a) for a in range(3)), indexing="ij")
    points = np.stack([x.ravel(), y.ravel(), z.ravel(), np.ones(x.size)])
    mask = np.ones(x.size, dtype=bool)
    for view in geometry.view_table:
        p = rtk_xml.rtk_matrix(view) @ points
        u = (p[0] / p[2] - ou) / su
        v = (p[1] / p[2] - ov) / sv
        mask &= (u >= 0) & (u <= cols - 1) & (v >= 0) & (v <= rows - 1)
    return mask.reshape(x.shape)


def rel_l2(a, b, mask):
    a, b = np.asarray(a, np.float64)[mask], np.asarray(b, np.float64)[mask]
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def test_agrees_with_rtkfdk_inside_the_field_of_view(scan):
    _, projections, geometry, volume, reference = scan
    fov = field_of_view(geometry, volume)
    assert fov.mean() > 0.3  # a real comparison, not a handful of voxels
    # rtkfdk's weighting of a short scan with a displaced detector: the
    # product of Parker's and the half-fan weights, which fdk gives on ON.
    ours = fdk_ct.reconstruct(projections, geometry, volume, backend="cpu", offset_detector=True)
    assert ours.shape == reference.shape and ours.origin == volume.origin
    error = rel_l2(ours, reference, fov)
    print(f"rel L2 vs rtkfdk over the FOV ({fov.mean():.2f} of the voxels): {error:.2e}")
    assert error <= BOUND


def test_auto_agrees_with_rtkfdk_nodisplaced(scan):
    # On AUTO a short scan takes Parker's weights alone: rtkfdk --nodisplaced.
    d, projections, geometry, volume, _ = scan
    parker, _ = read_mha(os.path.join(d, "rtk_parker.mha"))
    fov = field_of_view(geometry, volume)
    ours = fdk_ct.reconstruct(projections, geometry, volume, backend="cpu")
    error = rel_l2(ours, parker, fov)
    print(f"rel L2 vs rtkfdk --nodisplaced over the FOV: {error:.2e}")
    assert error <= BOUND


def test_would_fail_with_a_wrong_offset_sign(scan):
    # The bound above means something: the detector offset mirrored (+4 mm
    # read as -4 mm) is far outside it.
    _, projections, geometry, volume, reference = scan
    table = geometry.view_table.copy()
    table[:, 5] *= -1
    wrong = fdk_ct.Geometry.from_views(
        table[:, 0], table[:, 1], table[:, 2], geometry.detector_spacing,
        detector_shape=geometry.detector_shape, detector_origin=geometry.detector_origin, source_offset_x=table[:, 3],
        source_offset_y=table[:, 4], projection_offset_x=table[:, 5],
        projection_offset_y=table[:, 6], in_plane_angle_deg=table[:, 7],
        out_of_plane_angle_deg=table[:, 8])
    fov = field_of_view(geometry, volume)
    ours = fdk_ct.reconstruct(projections, wrong, volume, backend="cpu", offset_detector=True)
    error = rel_l2(ours, reference, fov)
    print(f"rel L2 vs rtkfdk with the detector offset mirrored: {error:.2e}")
    assert error > 20 * BOUND


def test_rtk_reads_what_write_rtk_xml_writes(scan):
    # RTK's reader checks each <Matrix> against the parameters; its
    # projections through our file equal those through its own.
    d, projections, geometry, _, _ = scan
    rtk_xml.write_rtk_xml(geometry, os.path.join(d, "ours.xml"))
    rtk("rtkprojectshepploganphantom", "-g", "ours.xml", "-o", "ours.mha", "--phantomscale", "40",
        *DETECTOR, cwd=d)
    again, _ = read_mha(os.path.join(d, "ours.mha"))
    np.testing.assert_allclose(again, projections, rtol=0, atol=1e-5 * float(projections.max()))
