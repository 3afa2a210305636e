"""RTK's geometry files (fdk_ct.interop.rtk_xml), on files RTK wrote itself
(data/make_rtk_fixtures.sh) and on damaged ones."""
import os
import re

import numpy as np
import pytest

import fdk_ct
from fdk_ct.interop import rtk_xml

DATA = os.path.join(os.path.dirname(__file__), "data")
SIMULATED = os.path.join(DATA, "rtk_simulated.xml")
PER_VIEW = os.path.join(DATA, "rtk_per_view.xml")


def file_matrices(path):
    text = open(path).read()
    return np.array([[float(x) for x in m.split()]
                     for m in re.findall(r"<Matrix>(.*?)</Matrix>", text, re.S)]).reshape(-1, 3, 4)


def test_reads_rtksimulatedgeometry_with_offsets_and_tilts():
    g = fdk_ct.Geometry.from_rtk_xml(SIMULATED, 0.5, detector_shape=(64, 96))
    assert g.kind == "views" and g.num_views == 8
    assert g.detector_spacing == (0.5, 0.5) and g.detector_shape == (64, 96)
    np.testing.assert_allclose(g.view_table[:, 0], 10 + np.arange(8) * 220 / 8, atol=1e-9)
    # --sid 600 --sdd 900 --source_x 1.5 --source_y 0.5 --proj_iso_x 3
    # --proj_iso_y -2 --in_angle 1 --out_angle 2, written once at the top
    np.testing.assert_array_equal(g.view_table[:, 1:],
                                  np.tile([600, 900, 1.5, 0.5, 3, -2, 1, 2], (8, 1)))


def test_reads_per_view_values_as_rtk_wrote_them():
    g = rtk_xml.read(PER_VIEW, 1.0)
    # AddProjection(sid, sdd, gantry, px, py, out, in, sx, sy) in the script;
    # RTK stores angles wrapped to [0, 360).
    expected = np.array([[10, 600, 900, 1.5, 0.5, 3, -2, 2, 1],
                         [50, 610, 905, 1.5, 0.5, 4, -2, 2, 1],
                         [10, 620, 910, 1.0, 0.5, 4, -1, 2, 357],
                         [315, 600, 900, 0.0, 0.5, 0, 0, 2, 0]], dtype=float)
    np.testing.assert_allclose(g.view_table, expected, atol=1e-9)


@pytest.mark.parametrize("path", [SIMULATED, PER_VIEW])
def test_matrices_equal_rtks(path):
    # The <Matrix> RTK computed from each view against ours, well inside the
    # reader's 0.001: the same frame, angles and offsets as RTK.
    table = rtk_xml.read(path, 1.0).view_table
    ours = np.array([rtk_xml.rtk_matrix(v) for v in table])
    np.testing.assert_allclose(ours, file_matrices(path), rtol=0, atol=1e-9 * 2000)


@pytest.mark.parametrize("path", [SIMULATED, PER_VIEW])
def test_write_then_read_round_trips(tmp_path, path):
    g = rtk_xml.read(path, 1.0)
    out = tmp_path / "again.xml"
    rtk_xml.write_rtk_xml(g, out)
    np.testing.assert_array_equal(rtk_xml.read(out, 1.0).view_table, g.view_table)
    text = out.read_text()
    # RTK's layout: shared values once at the top, the rest per projection.
    head = text.split("<Projection>")[0]
    assert ("<SourceOffsetY>0.5</SourceOffsetY>" in head) and text.count("<Matrix>") == g.num_views


def test_write_circular_expands_views(tmp_path):
    g = fdk_ct.Geometry.circular(4, 500.0, 800.0, 1.0, arc_deg=-180.0, first_angle_deg=10.0,
                                 projection_offset_x=2.0)
    rtk_xml.write_rtk_xml(g, tmp_path / "c.xml")
    back = rtk_xml.read(tmp_path / "c.xml", 1.0).view_table
    np.testing.assert_allclose(back[:, 0], [10, 325, 280, 235])
    assert np.all(back[:, 5] == 2.0)
    with pytest.raises(ValueError, match="matrices"):
        rtk_xml.write_rtk_xml(fdk_ct.Geometry.from_matrices(np.zeros((1, 3, 4)) + 1, 1.0),
                              tmp_path / "m.xml")


def test_values_persist_into_later_projections():
    views = rtk_xml.parse(
        '<RTKThreeDCircularGeometry version="3"><SourceToIsocenterDistance>1000'
        "</SourceToIsocenterDistance><sourcetodetectordistance>1500</sourcetodetectordistance>"
        "<Projection><Angle>10</Angle><SourceToIsocenterDistance>990"
        "</SourceToIsocenterDistance></Projection>"
        "<Projection><GantryAngle>20</GantryAngle><CollimationU1>5</CollimationU1></Projection>"
        "</RTKThreeDCircularGeometry>")
    assert [v[:3] for v in views] == [[10, 990, 1500], [20, 990, 1500]]


HEAD = '<RTKThreeDCircularGeometry version="3">'
GOOD = ("<SourceToIsocenterDistance>1000</SourceToIsocenterDistance>"
        "<SourceToDetectorDistance>1500</SourceToDetectorDistance>")
TAIL = "</RTKThreeDCircularGeometry>"
M0 = "-1500 0 0 0 0 -1500 0 0 0 0 1 -1000"  # RTK's matrix of gantry 0, SID 1000, SDD 1500


@pytest.mark.parametrize("text, message", [
    ("<RTKGeometry version='3'/>", "not an RTK geometry file"),
    ("<RTKThreeDCircularGeometry>" + GOOD + "<Projection/>" + TAIL, "no version"),
    ('<RTKThreeDCircularGeometry version="4">' + GOOD + "<Projection/>" + TAIL, "version '4'"),
    (HEAD + GOOD + TAIL, "no <Projection>"),
    (HEAD + "<SourceToDetectorDistance>1500</SourceToDetectorDistance><Projection/>" + TAIL,
     "projection 0: SourceToIsocenterDistance"),
    (HEAD + "<SourceToIsocenterDistance>1000</SourceToIsocenterDistance><Projection/>" + TAIL,
     "parallel"),
    (HEAD + "<SourceToIsocenterDistance>10a</SourceToIsocenterDistance>" + TAIL,
     "<SourceToIsocenterDistance> '10a' is not a number"),
    (HEAD + GOOD + "<Projection><GantryAngle>nan</GantryAngle></Projection>" + TAIL,
     "<GantryAngle> 'nan'"),
    (HEAD + GOOD + "<Projection><GantryAngle>2e6</GantryAngle></Projection>" + TAIL, "1e6"),
    (HEAD + GOOD + "<Projection><Matrix>1 2 3</Matrix></Projection>" + TAIL, "12 numbers"),
    (HEAD + GOOD + "<Projection><GantryAngle>1</GantryAngle><Matrix>" + M0 +
     "</Matrix></Projection>" + TAIL, "projection 0: the <Matrix> does not match"),
    (HEAD + GOOD + "<RadiusCylindricalDetector>300</RadiusCylindricalDetector><Projection/>"
     + TAIL, "cylindrical"),
    (HEAD + GOOD + "<Projection>" + TAIL, "not well-formed"),
    (HEAD + GOOD + "<Projection/>\0" + TAIL, "NUL byte"),
])
def test_wrong_files_fail_naming_the_element(text, message):
    with pytest.raises(ValueError) as e:
        rtk_xml.parse(text, "bad.xml")
    assert message in str(e.value) and "bad.xml" in str(e.value)


def test_version_is_a_number():
    text = '<RTKThreeDCircularGeometry version="3.0">' + GOOD + "<Projection/>" + TAIL
    assert rtk_xml.parse(text)[0][1:3] == [1000, 1500]


def test_a_matching_matrix_is_accepted():
    views = rtk_xml.parse(HEAD + GOOD + "<Projection><GantryAngle>0</GantryAngle><Matrix>" + M0
                          + "</Matrix></Projection>" + TAIL)
    assert views == [[0, 1000, 1500, 0, 0, 0, 0, 0, 0]]


def test_reconstructs_like_the_same_circular_scan():
    # A per-view geometry read from a file reconstructs exactly as the
    # circular description of the same views.
    g = fdk_ct.Geometry.circular(8, 600.0, 900.0, 1.0, arc_deg=360.0)
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "g.xml")
        rtk_xml.write_rtk_xml(g, path)
        back = fdk_ct.Geometry.from_rtk_xml(path, 1.0)
    rng = np.random.default_rng(1)
    proj = rng.random((8, 16, 20), dtype=np.float32)
    vol = fdk_ct.Volume((12, 10, 14), 0.8)
    a = fdk_ct.reconstruct(proj, g, vol, backend="cpu")
    b = fdk_ct.reconstruct(proj, back, vol, backend="cpu")
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
