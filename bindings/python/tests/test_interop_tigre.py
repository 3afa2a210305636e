"""TIGRE's geometry object in RTK's frame (fdk_ct.interop.tigre)."""
from types import SimpleNamespace

import numpy as np
import pytest

import fdk_ct
from fdk_ct.interop import tigre

from _sphere import centroid, project_balls, rel_l2

N_VIEWS = 72
ANGLES = np.linspace(0, 2 * np.pi, N_VIEWS, endpoint=False)
BALL = (np.array([3.0, -4.0, 6.0]), 3.0, 0.02)  # TIGRE (x, y, z), mm


def make_geo(**over):
    """A TIGRE-like geometry: (z, y, x) image orders, (v, u) detector orders,
    an image off the axis and a detector off centre."""
    geo = SimpleNamespace(
        mode="cone", DSD=240.0, DSO=160.0,
        nDetector=np.array([40, 48]), dDetector=np.array([1.0, 1.25]),
        offDetector=np.array([-2.0, 3.0]),  # (v, u)
        nVoxel=np.array([24, 28, 32]), dVoxel=np.array([1.0, 1.0, 1.0]),
        offOrigin=np.array([1.0, -1.0, 0.0]),  # (z, y, x)
        rotDetector=np.array([0.0, 0.0, 0.0]), COR=0.0, angles=ANGLES)
    geo.sVoxel = geo.nVoxel * geo.dVoxel
    for k, v in over.items():
        setattr(geo, k, v)
    return geo


def tigre_projections(geo):
    """(angles, v, u) line integrals, from TIGRE's pixel positions: source
    Rz(a) (DSO, 0, 0); pixel (v, u) at Rz(a) (-(DSD-DSO), y_u + offU, z_v + offV)."""
    nv, nu = geo.nDetector
    dv, du = geo.dDetector
    a = np.asarray(geo.angles)
    c, s = np.cos(a), np.sin(a)
    y = du * (np.arange(nu) - nu / 2 + 0.5) + geo.offDetector[1]
    z = dv * (np.arange(nv) - nv / 2 + 0.5) + geo.offDetector[0]
    x0 = -(geo.DSD - geo.DSO)
    px = c[:, None, None] * x0 - s[:, None, None] * y[None, None, :]
    py = s[:, None, None] * x0 + c[:, None, None] * y[None, None, :]
    pz = np.broadcast_to(z[None, :, None], (a.size, nv, nu))
    pixels = np.stack([np.broadcast_to(px, pz.shape), np.broadcast_to(py, pz.shape), pz], -1)
    source = np.stack([geo.DSO * c, geo.DSO * s, 0 * a], axis=1)
    return project_balls(source, pixels, [BALL])


def expected_index(geo):
    """The ball's voxel in TIGRE's (z, y, x) image."""
    centre = BALL[0][::-1]  # (z, y, x)
    first = -geo.sVoxel / 2 + geo.dVoxel / 2 + geo.offOrigin
    return (centre - first) / geo.dVoxel


def test_volume_is_tigres_grid():
    vol = tigre.volume_from_tigre(make_geo())
    # fdk (z, y, x) = TIGRE (x, z, y); first voxel centre -s/2 + d/2 + offOrigin
    assert vol.shape == (32, 24, 28)
    assert vol.origin == (-15.5, -10.5, -14.5)


def test_ball_lands_in_tigres_voxel_and_matches_rtk_parameters():
    geo = make_geo()
    proj = tigre_projections(geo)
    geometry, volume = tigre.from_tigre(geo)
    assert geometry.detector_spacing == (1.0, 1.25)
    rec = fdk_ct.reconstruct(proj, geometry, volume, backend="cpu")
    image = tigre.volume_to_tigre(rec)
    assert image.shape == tuple(geo.nVoxel)
    np.testing.assert_allclose(centroid(image), expected_index(geo), atol=0.25)
    # RTK's parameters of the same scan: offDetector (v, u) = projection offsets (y, x).
    rtk = fdk_ct.Geometry.circular(N_VIEWS, geo.DSO, geo.DSD, (1.0, 1.25),
                                   projection_offset_x=3.0, projection_offset_y=-2.0)
    assert rel_l2(rec, fdk_ct.reconstruct(proj, rtk, volume, backend="cpu")) < 1e-5


def test_a_wrong_detector_offset_sign_would_be_caught():
    geo = make_geo()
    proj = tigre_projections(geo)
    wrong = fdk_ct.Geometry.circular(N_VIEWS, geo.DSO, geo.DSD, (1.0, 1.25),
                                     projection_offset_x=-3.0, projection_offset_y=2.0)
    rec = fdk_ct.reconstruct(proj, wrong, tigre.volume_from_tigre(geo), backend="cpu")
    assert np.max(np.abs(centroid(tigre.volume_to_tigre(rec)) - expected_index(geo))) > 1.0


def test_per_view_arrays_and_euler_angles_are_read():
    geo = make_geo()
    g1, _ = tigre.from_tigre(geo)
    n = N_VIEWS
    g2, _ = tigre.from_tigre(make_geo(DSO=np.full(n, geo.DSO), DSD=np.full(n, geo.DSD),
                                      offDetector=np.tile(geo.offDetector, (n, 1)),
                                      angles=np.stack([ANGLES, 0 * ANGLES, 0 * ANGLES], 1)))
    np.testing.assert_allclose(g1.matrices, g2.matrices, atol=1e-9)
    # COR moves source and detector along the rotated y: at angle 0 that is
    # RTK's x, so source and projection offsets x both become COR.
    g3, _ = tigre.from_tigre(make_geo(COR=2.0, offDetector=np.array([0.0, 0.0]),
                                      angles=np.array([0.0])))
    rtk = fdk_ct.interop.rtk_xml.rtk_matrix([0, 160, 240, 2.0, 0, 2.0, 0, 0, 0])
    np.testing.assert_allclose(g3.matrices[0], rtk, atol=1e-9)


def test_detector_yaw_is_rtks_in_plane_angle():
    # rotDetector's yaw turns the panel in its own plane about its centre:
    # with a centred detector, exactly RTK's in-plane angle.
    g, _ = tigre.from_tigre(make_geo(offDetector=np.zeros(2), rotDetector=np.array([0, 0, 0.05]),
                                     angles=np.array([np.radians(30)])))
    m = g.matrices[0] / np.linalg.norm(g.matrices[0][2, :3])
    rtk = fdk_ct.interop.rtk_xml.rtk_matrix([30, 160, 240, 0, 0, 0, 0, np.degrees(0.05), 0])
    np.testing.assert_allclose(m, rtk, atol=1e-9)


def test_per_view_origin_moves_the_scanner_not_the_volume():
    geo = make_geo()
    g1, v1 = tigre.from_tigre(geo)
    shifted = np.tile(geo.offOrigin, (N_VIEWS, 1))
    shifted[1:, 2] += 2.0  # later views see the image 2 mm further along TIGRE's x
    g2, v2 = tigre.from_tigre(make_geo(offOrigin=shifted))
    assert v1 == v2
    np.testing.assert_allclose(g1.matrices[0], g2.matrices[0], atol=1e-9)
    # In view 1 the image sits 2 mm further along TIGRE's x (RTK's z): a
    # volume point projects where, unshifted, the point 2 mm along did.
    x = np.array([1.0, -3.0, 4.0, 1.0])
    p1 = g1.matrices[1] @ (x + [0, 0, 2.0, 0])
    p2 = g2.matrices[1] @ x
    np.testing.assert_allclose(p1[:2] / p1[2], p2[:2] / p2[2], atol=1e-9)


def test_unsupported_is_refused():
    with pytest.raises(ValueError, match="parallel"):
        tigre.from_tigre(make_geo(mode="parallel"))
    with pytest.raises(ValueError, match="DSO"):
        tigre.from_tigre(make_geo(DSO=300.0))
    with pytest.raises(ValueError, match="offDetector"):
        tigre.from_tigre(make_geo(offDetector=np.zeros((3, 2))))
    with pytest.raises(ValueError, match="angles"):
        tigre.from_tigre(make_geo(angles=np.zeros((4, 2))))
    with pytest.raises(ValueError, match="mirrored"):
        # pitch pi turns the panel to face away: u x v points away from the source
        tigre.from_tigre(make_geo(rotDetector=np.array([0.0, np.pi, 0.0])))
