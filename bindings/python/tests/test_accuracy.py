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
