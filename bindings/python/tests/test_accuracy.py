"""The volume against the analytic phantom: values, positions and axes."""
import numpy as np
import pytest

import fdk_ct
from conftest import PHANTOM, voxel_of


def _mean_around(vol, index, r=1):
    z, y, x = index
    return float(vol[z - r:z + r + 1, y - r:y + r + 1, x - r:x + r + 1].mean())


def test_attenuation_and_positions_match_the_phantom(small_scan):
    geo, proj, grid = small_scan
    vol = fdk_ct.reconstruct(proj, geo, grid, backend="cpu", threads=2)
    assert vol.shape == (48, 48, 48) and vol.dtype == np.float32
    assert vol.spacing == (1.25, 1.25, 1.25)
    assert vol.origin == pytest.approx((-29.375,) * 3)
    big, dense, light = PHANTOM
    # Inside the big sphere only, away from the small ones.
    assert _mean_around(vol, voxel_of(grid, 0, 0, -12)) == pytest.approx(0.02, rel=0.05)
    # Each small sphere at its own place: x, y and z unmirrored, untransposed.
    assert _mean_around(vol, voxel_of(grid, *dense.centre)) == pytest.approx(0.05, rel=0.1)
    assert _mean_around(vol, voxel_of(grid, *light.centre)) == pytest.approx(0.035, rel=0.1)
    for mirrored in ((-10, 6, -4), (10, -6, -4), (10, 6, 4), (6, 10, -4)):
        assert _mean_around(vol, voxel_of(grid, *mirrored)) == pytest.approx(0.02, abs=0.003)
    # Outside the phantom.
    assert abs(_mean_around(vol, voxel_of(grid, 0, 0, 27))) < 0.002


def test_default_volume_is_one_voxel_per_pixel_at_the_axis(small_scan):
    geo, proj, _ = small_scan
    vol = fdk_ct.reconstruct(proj, geo, backend="cpu", threads=2)
    assert vol.shape == (96, 80, 96)
    assert vol.spacing == pytest.approx((1 / 1.5,) * 3)
    assert vol.origin == pytest.approx((-95 / 3, -79 / 3, -95 / 3))
    centre = voxel_of(vol.volume, 0, 0, -12)
    assert _mean_around(vol, centre) == pytest.approx(0.02, rel=0.05)


def test_float16_storage_stays_within_its_bound(small_scan):
    geo, proj, grid = small_scan
    exact = fdk_ct.reconstruct(proj, geo, grid, backend="cpu", threads=2)
    half = fdk_ct.reconstruct(proj, geo, grid, backend="cpu", threads=2, precision="float16")
    assert not np.array_equal(exact, half)
    assert np.abs(exact - half).max() < 1e-3 * np.abs(exact).max()


def test_strided_and_converted_inputs_give_the_same_bits(small_scan):
    geo, proj, grid = small_scan
    ref = fdk_ct.reconstruct(proj, geo, grid, backend="cpu", threads=2)
    # ASTRA's (rows, views, cols) order seen through moveaxis: strided views.
    astra_order = np.ascontiguousarray(np.moveaxis(proj, 0, 1))
    strided = np.moveaxis(astra_order, 1, 0)
    assert not strided.flags.c_contiguous
    np.testing.assert_array_equal(fdk_ct.reconstruct(strided, geo, grid, backend="cpu",
                                                     threads=2), ref)
    # Rows padded to a wider pitch, and reversed columns read back reversed.
    padded = np.zeros(proj.shape[:2] + (proj.shape[2] + 7,), np.float32)
    padded[:, :, :proj.shape[2]] = proj
    np.testing.assert_array_equal(
        fdk_ct.reconstruct(padded[:, :, :proj.shape[2]], geo, grid, backend="cpu", threads=2),
        ref)
    flipped = proj[:, :, ::-1].copy()[:, :, ::-1]
    np.testing.assert_array_equal(fdk_ct.reconstruct(flipped, geo, grid, backend="cpu",
                                                     threads=2), ref)
    # float64 is converted one view at a time (float32 of float64 of float32 is exact).
    np.testing.assert_array_equal(
        fdk_ct.reconstruct(proj.astype(np.float64), geo, grid, backend="cpu", threads=2), ref)


def test_a_strided_scan_is_not_copied_whole(small_scan):
    import tracemalloc
    geo, proj, grid = small_scan
    strided = np.moveaxis(np.ascontiguousarray(np.moveaxis(proj, 0, 1)), 1, 0)
    tracemalloc.start()
    try:
        vol = fdk_ct.reconstruct(strided, geo, grid, backend="cpu", threads=2)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The volume (and views, one at a time) yes; the scan, no.
    assert peak < vol.nbytes + proj.nbytes // 4, (peak, vol.nbytes, proj.nbytes)


def test_volume_array_keeps_its_grid_only_while_it_fits(small_scan):
    geo, proj, grid = small_scan
    vol = fdk_ct.reconstruct(proj, geo, grid, backend="cpu", threads=2)
    assert (vol * 2).volume == grid
    assert vol[1:].volume is None and vol[1:].spacing is None
    plain = np.ascontiguousarray(vol)
    np.testing.assert_array_equal(plain, vol)


def test_the_packaged_phantom_projects_as_the_tests_own(small_scan):
    from fdk_ct.phantom import Ellipsoid, project
    geo, proj, _ = small_scan
    mine = [Ellipsoid(tuple(e.centre), tuple(e.axes), e.mu) for e in PHANTOM]
    np.testing.assert_allclose(project(geo, mine), proj, rtol=1e-5, atol=1e-6)
    # Through the centre of a sphere at the isocentre: the diameter.
    ball = project(geo, [Ellipsoid((0, 0, 0), (10, 10, 10), 1.0)])
    assert ball[0, 39:41, 47:49].max() == pytest.approx(20.0, rel=2e-3)  # pixel centres 1/3 mm off the axis


def test_modified_shepp_logan_with_offsets_and_tilts():
    from fdk_ct import phantom
    n = 180
    angles = np.arange(n) * 2.0
    geo = fdk_ct.Geometry.from_views(angles, 500.0, 750.0, 0.8, detector_shape=(96, 128),
                                     source_offset_x=3.0, projection_offset_x=-6.0,
                                     projection_offset_y=4.0,
                                     out_of_plane_angle_deg=6.0, in_plane_angle_deg=5.0)
    # A small bead off every axis, which offsets of the wrong sign would move
    # by more than its radius.
    bead = phantom.Ellipsoid((8.0, 12.0, -6.0), (2.0, 2.0, 2.0), 0.02)
    head = phantom.modified_shepp_logan(scale=30.0, mu=0.02) + [bead]
    proj = phantom.project(geo, head)
    grid = fdk_ct.Volume((56, 64, 56), 1.0)
    vol = fdk_ct.reconstruct(proj, geo, grid, backend="cpu", threads=2)
    # The brain (skull 1 + brain -0.8 = 0.2 of mu) between the ventricles,
    # and the skull's absence outside the head.
    assert _mean_around(vol, voxel_of(grid, 0, 0, 6)) == pytest.approx(0.004, rel=0.1)
    # The bright ellipsoid (0.3 of mu) at (0, -7.5, -10.5): Kak & Slaney's
    # (0, 0.35, -0.25) turned to the y-axis frame.
    assert _mean_around(vol, voxel_of(grid, 0, -7.5, -10.5)) == pytest.approx(0.006, rel=0.1)
    assert abs(_mean_around(vol, voxel_of(grid, 24, 0, 0))) < 0.0005
    assert float(vol[voxel_of(grid, 8, 12, -6)]) == pytest.approx(0.024, rel=0.1)
    for mirrored in ((8, -12, -6), (-8, 12, -6), (8, 12, 6)):
        truth = float(phantom.density_at(head, *mirrored))
        assert float(vol[voxel_of(grid, *mirrored)]) == pytest.approx(truth, abs=0.001)
    # Over the brain (not the thin skull), away from edges: within 10 % on
    # average (streaks from the skull, 180 views, and FDK with 6° tilts).
    truth = phantom.voxelize(head, grid)
    inner = (np.abs(np.gradient(truth)).sum(axis=0) == 0) & (truth > 0) & (truth < 0.01)
    inner[:, :16, :] = inner[:, 48:, :] = False  # the cone's far planes
    assert np.abs(vol[inner] - truth[inner]).mean() < 0.1 * 0.004


def test_out_reuses_a_volume_and_is_checked(small_scan):
    geo, proj, grid = small_scan
    ref = fdk_ct.reconstruct(proj, geo, grid, backend="cpu", threads=2)
    out = fdk_ct.empty_volume(grid)
    out[...] = np.nan
    vol = fdk_ct.reconstruct(proj, geo, grid, backend="cpu", threads=2, out=out)
    assert np.shares_memory(vol, out) and vol.volume == grid
    np.testing.assert_array_equal(vol, ref)
    again = fdk_ct.reconstruct(proj * 2, geo, grid, backend="cpu", threads=2, out=ref)
    assert np.shares_memory(again, ref)
    for bad in (np.empty(grid.shape, np.float32),        # C-contiguous (z, y, x)
                np.empty(grid.shape, np.float64)[:, :, :],
                np.empty((48, 48, 47), np.float32)):
        with pytest.raises(ValueError, match="out must"):
            fdk_ct.reconstruct(proj, geo, grid, backend="cpu", threads=2, out=bad)


def test_the_one_call_push_loop_stops_at_the_first_bad_view(small_scan):
    geo, proj, grid = small_scan
    p = proj.copy()
    p[30, 2, 9] = np.nan
    seen = []
    with pytest.raises(fdk_ct.errors.InvalidArgumentError, match="projection 30"):
        fdk_ct.reconstruct(p, geo, grid, backend="cpu", threads=2,
                           progress=lambda q: seen.append(q.views_pushed))
    assert max(seen) == 30
    # Views in reverse memory order (a negative stride) take the same path.
    rev = proj[::-1]
    geo_rev = fdk_ct.Geometry.from_views(
        [(geo.num_views - 1 - i) * 3.0 for i in range(geo.num_views)], 400.0, 600.0, 1.0,
        detector_shape=(80, 96))
    np.testing.assert_allclose(fdk_ct.reconstruct(rev, geo_rev, grid, backend="cpu", threads=2),
                               fdk_ct.reconstruct(proj, geo, grid, backend="cpu", threads=2),
                               atol=1e-6)
