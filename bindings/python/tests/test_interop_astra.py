"""ASTRA's cone_vec in RTK's frame (fdk_ct.interop.astra)."""
import numpy as np
import pytest

import fdk_ct
from fdk_ct.interop import astra

from _sphere import centroid, project_balls, rel_l2

DSO, ODD = 150.0, 75.0
ROWS, COLS, SX, SY = 40, 48, 1.25, 1.0
N_VIEWS = 72
ANGLES = np.linspace(0, 2 * np.pi, N_VIEWS, endpoint=False)
# A volume that is not a cube and not centred on the axis, so that a swapped
# or mirrored axis moves the ball or changes the grid.
VOL_GEOM = {"GridRowCount": 28, "GridColCount": 32, "GridSliceCount": 24,
            "option": {"WindowMinX": -16.0, "WindowMaxX": 16.0, "WindowMinY": -13.0,
                       "WindowMaxY": 15.0, "WindowMinZ": -12.0, "WindowMaxZ": 12.0}}
BALL = (np.array([6.5, -5.5, 3.5]), 3.0, 0.02)  # ASTRA (x, y, z): a voxel centre


def astra_projections(vectors):
    """(rows, views, cols), as ASTRA lays them out, from the cone_vec rows."""
    src, d, u, v = (vectors[:, 3 * k:3 * k + 3] for k in range(4))
    c = np.arange(COLS) - (COLS - 1) / 2
    r = np.arange(ROWS) - (ROWS - 1) / 2
    pixels = (d[:, None, None, :] + c[None, None, :, None] * u[:, None, None, :]
              + r[None, :, None, None] * v[:, None, None, :])
    return np.moveaxis(project_balls(src, pixels, [BALL]), 0, 1)  # (views, r, c) -> ASTRA's


def expected_index():
    """The ball's voxel in ASTRA's (slice, row, col) array."""
    o = VOL_GEOM["option"]
    x, y, z = BALL[0]
    return np.array([z - o["WindowMinZ"] - 0.5, y - o["WindowMinY"] - 0.5,
                     x - o["WindowMinX"] - 0.5])


@pytest.fixture(scope="module")
def scan():
    vectors = astra.cone_to_cone_vec(SX, SY, ANGLES, DSO, ODD)
    return vectors, astra_projections(vectors)


def test_cone_to_cone_vec_is_astras_formula():
    v = astra.cone_to_cone_vec(SX, SY, [np.pi / 2], DSO, ODD)[0]
    # ASTRA at 90 degrees: source on +x, detector on -x, u along +y, v along +z.
    np.testing.assert_allclose(v, [DSO, 0, 0, -ODD, 0, 0, 0, SX, 0, 0, 0, SY], atol=1e-12)


def test_volume_covers_astras_grid():
    vol = astra.volume_from_astra(VOL_GEOM)
    assert vol.shape == (28, 24, 32)  # fdk (z, y, x) = ASTRA (rows, slices, cols)
    assert vol.spacing == (1.0, 1.0, 1.0)
    # fdk's z is ASTRA's -y: its first plane is ASTRA's last row (y = 14.5).
    assert vol.origin == (-14.5, -11.5, -15.5)


def test_ball_lands_in_astras_voxel_and_matches_circular(scan):
    vectors, proj = scan
    geometry, volume = astra.from_cone_vec(vectors, ROWS, COLS, VOL_GEOM)
    assert geometry.kind == "matrices" and geometry.detector_spacing == (SY, SX)
    p = astra.projections_from_astra(proj)
    rec = fdk_ct.reconstruct(p, geometry, volume, backend="cpu")
    in_astra = astra.volume_to_astra(rec)
    assert in_astra.shape == (24, 28, 32)
    np.testing.assert_allclose(centroid(in_astra), expected_index(), atol=0.25)
    # The same scan as RTK's circular parameters: gantry angle = ASTRA's angle.
    circular = fdk_ct.Geometry.circular(N_VIEWS, DSO, DSO + ODD, (SY, SX))
    ref = fdk_ct.reconstruct(p, circular, volume, backend="cpu")
    assert rel_l2(rec, ref) < 1e-5
    # from_cone (no matrices) gives the same.
    g_cone, _ = astra.from_cone(SX, SY, ROWS, COLS, ANGLES, DSO, ODD)
    assert rel_l2(fdk_ct.reconstruct(p, g_cone, volume, backend="cpu"), ref) < 1e-5


def test_a_wrong_rotation_sense_would_be_caught(scan):
    # The check above must be able to fail: the opposite rotation (RTK's
    # angle = -ASTRA's) puts the ball elsewhere.
    _, proj = scan
    volume = astra.volume_from_astra(VOL_GEOM)
    wrong = fdk_ct.Geometry.circular(N_VIEWS, DSO, DSO + ODD, (SY, SX), arc_deg=-360.0)
    rec = fdk_ct.reconstruct(astra.projections_from_astra(proj), wrong, volume, backend="cpu")
    assert np.max(np.abs(centroid(astra.volume_to_astra(rec)) - expected_index())) > 2.0


def test_mirrored_detector_is_refused(scan):
    vectors = scan[0].copy()
    vectors[:, 6:9] *= -1  # u reversed: the image seen from the source is mirrored
    with pytest.raises(ValueError, match="mirrored"):
        astra.from_cone_vec(vectors, ROWS, COLS)


def test_bad_vectors_are_refused(scan):
    vectors = scan[0]
    with pytest.raises(ValueError, match=r"\(views, 12\)"):
        astra.from_cone_vec(vectors[:, :11], ROWS, COLS)
    changing = vectors.copy()
    changing[1, 6:9] *= 1.01
    with pytest.raises(ValueError, match="pitch changes"):
        astra.from_cone_vec(changing, ROWS, COLS)
    skewed = vectors.copy()
    skewed[:, 9:12] += 0.1 * skewed[:, 6:9]
    with pytest.raises(ValueError, match="perpendicular"):
        astra.from_cone_vec(skewed, ROWS, COLS)
    nan = vectors.copy()
    nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        astra.from_cone_vec(nan, ROWS, COLS)
    with pytest.raises(ValueError, match="missing"):
        astra.volume_from_astra({"GridRowCount": 2})
