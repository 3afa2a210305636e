"""Geometry estimation through the binding: the struct against C, the values
and errors carried both ways, lifetimes, the Reconstructor's option, and
(once the method has landed in the library) one accuracy check."""
import ctypes
import math

import numpy as np
import pytest

import fdk_ct
from fdk_ct import _native, errors, geometry_estimate
from fdk_ct.geometry_estimate import GeometryEstimate


SID, SDD, PIXEL = 400.0, 600.0, 1.0
ROWS, COLS, VIEWS = 32, 64, 120


def _geometry(views=VIEWS, **view_parameters):
    return fdk_ct.Geometry.circular(views, SID, SDD, PIXEL, detector_shape=(ROWS, COLS),
                                    **view_parameters)


@pytest.fixture(scope="module")
def scan():
    """A small Shepp-Logan scan in the nominal geometry."""
    geo = _geometry()
    head = fdk_ct.phantom.modified_shepp_logan(scale=16.0, mu=0.02)
    return geo, fdk_ct.phantom.project(geo, head)


def _hand_made(offset_mm=0.75, tilt=0.5):
    return GeometryEstimate(offset_u_mm=offset_mm, offset_u_pixels=offset_mm / PIXEL,
                            tilt_deg=tilt, offset_sigma_pixels=0.05, tilt_sigma_deg=0.01,
                            confidence=0.9, view_pairs=60, views_used=120, rows_used=8,
                            flags=geometry_estimate.OFFSET | geometry_estimate.TILT,
                            basis="by hand")


# ---- the struct -----------------------------------------------------------------
def test_the_struct_and_flags_are_those_of_fdk_h(layout_facts):
    sizes, offsets, enums = layout_facts
    c = _native.GeometryEstimateC
    assert ctypes.sizeof(c) == sizes["fdk_geometry_estimate"]
    fields = [f for f, _ in c._fields_]
    assert sorted(fields) == sorted(f for (s, f) in offsets if s == "fdk_geometry_estimate")
    for f in fields:
        assert getattr(c, f).offset == offsets[("fdk_geometry_estimate", f)], f
    assert c.basis.size == 256
    # fdk_config's 0.7 field, last
    assert _native.Config.estimate_geometry.offset == offsets[("fdk_config", "estimate_geometry")]
    assert ctypes.sizeof(_native.Config) == sizes["fdk_config"]
    for name, value in (("OFFSET", geometry_estimate.OFFSET), ("TILT", geometry_estimate.TILT),
                        ("LOW_STRUCTURE", geometry_estimate.LOW_STRUCTURE),
                        ("FEW_PAIRS", geometry_estimate.FEW_PAIRS)):
        assert enums["FDK_ESTIMATE_" + name] == value


def test_the_library_initialises_the_struct_of_our_size():
    c = _native.GeometryEstimateC(confidence=7.0)
    _native.geometry_estimation().fdk_geometry_estimate_init(ctypes.byref(c))
    assert c.struct_size == ctypes.sizeof(_native.GeometryEstimateC)
    assert c.confidence == 0.0 and c.basis == b""


# ---- the estimate, both ways -------------------------------------------------------
def test_estimate_geometry_returns_a_typed_estimate(scan):
    geo, projections = scan
    est = fdk_ct.estimate_geometry(projections, geo)
    assert isinstance(est, GeometryEstimate)
    for name in ("offset_u_mm", "offset_u_pixels", "tilt_deg", "offset_sigma_pixels",
                 "tilt_sigma_deg", "confidence"):
        value = getattr(est, name)
        assert isinstance(value, float) and math.isfinite(value), name
    for name in ("view_pairs", "views_used", "rows_used", "flags"):
        assert isinstance(getattr(est, name), int), name
    assert 0.0 <= est.confidence <= 1.0
    assert 0 <= est.views_used <= VIEWS and 0 <= est.rows_used <= ROWS
    assert est.flags & ~0xF == 0
    assert isinstance(est.basis, str) and est.basis
    assert est.basis in str(est) and "confidence" in str(est)
    assert repr(est).startswith("GeometryEstimate(") and repr(est.basis) in repr(est)
    with pytest.raises(Exception):
        est.confidence = 1.0  # frozen


def test_flag_properties_read_the_bits():
    est = _hand_made()
    assert est.offset_estimated and est.tilt_estimated
    assert not est.low_structure and not est.few_pairs
    other = GeometryEstimate(0, 0, 0, 0, 0, 0, 0, 0, 0,
                             geometry_estimate.LOW_STRUCTURE | geometry_estimate.FEW_PAIRS, "")
    assert other.low_structure and other.few_pairs and not other.offset_estimated
    assert other.flag_names() == ["low structure", "few pairs"]
    assert "flags: low structure, few pairs" in str(other)


def test_the_streaming_estimator_takes_views_in_any_order_and_replaces_them(scan):
    geo, projections = scan
    whole = fdk_ct.estimate_geometry(projections, geo)
    with fdk_ct.GeometryEstimator(geo) as estimator:
        estimator.push(0, np.zeros((ROWS, COLS), np.float32))  # replaced below
        for i in reversed(range(VIEWS)):
            estimator.push(i, projections[i].astype(np.float64))  # converted per view
        assert estimator.estimate() == whole
    assert estimator.closed


def test_too_few_views_is_an_estimate_not_an_error(scan):
    geo, projections = scan
    with fdk_ct.GeometryEstimator(geo) as estimator:
        est = estimator.estimate()  # nothing pushed
        estimator.push(3, projections[3])
        assert estimator.estimate().confidence == 0.0
    assert est.confidence == 0.0 and est.basis


# ---- corrected(): the library's correction, on the right fields -------------------
def test_corrected_keeps_a_circular_geometry_circular():
    geo = _geometry(projection_offset_x=1.0, in_plane_angle_deg=0.2, source_offset_x=0.3,
                    first_angle_deg=10.0, arc_deg=200.0)
    fixed = _hand_made(offset_mm=0.75, tilt=0.5).corrected(geo)
    assert fixed.kind == "circular" and fixed.num_views == geo.num_views
    assert fixed.first_angle_deg == 10.0 and fixed.arc_deg == 200.0
    assert fixed.detector_shape == geo.detector_shape
    assert fixed.uniform.projection_offset_x == pytest.approx(1.75)
    assert fixed.uniform.in_plane_angle_deg == pytest.approx(0.7)
    untouched = ("gantry_angle_deg", "sid", "sdd", "source_offset_x", "source_offset_y",
                 "projection_offset_y", "out_of_plane_angle_deg")
    for f in untouched:
        assert getattr(fixed.uniform, f) == getattr(geo.uniform, f), f
    assert geo.uniform.projection_offset_x == 1.0  # the original is unchanged


def test_corrected_corrects_every_view_of_a_per_view_geometry():
    angles = np.linspace(0, 358, 180)
    offsets = np.linspace(-1, 1, 180)
    geo = fdk_ct.Geometry.from_views(angles, SID, SDD, PIXEL, detector_shape=(ROWS, COLS),
                                     projection_offset_x=offsets, in_plane_angle_deg=0.1)
    fixed = _hand_made(offset_mm=-0.25, tilt=0.3).corrected(geo)
    assert fixed.kind == "views" and fixed.num_views == 180
    before, after = geo.view_parameters(), fixed.view_parameters()
    np.testing.assert_allclose(after[:, 5], offsets - 0.25)
    np.testing.assert_allclose(after[:, 7], 0.4)
    others = [0, 1, 2, 3, 4, 6, 8]
    np.testing.assert_array_equal(after[:, others], before[:, others])


def test_apply_corrects_one_view():
    view = fdk_ct.ViewGeometry(30.0, SID, SDD, projection_offset_x=2.0)
    fixed = _hand_made(offset_mm=1.0, tilt=-0.5).apply(view)
    assert fixed.projection_offset_x == pytest.approx(3.0)
    assert fixed.in_plane_angle_deg == pytest.approx(-0.5)
    assert fixed.gantry_angle_deg == 30.0


def test_a_geometry_of_matrices_cannot_be_corrected():
    m = np.tile(np.eye(3, 4), (4, 1, 1))
    geo = fdk_ct.Geometry.from_matrices(m, PIXEL, detector_shape=(ROWS, COLS))
    with pytest.raises(ValueError, match="matrices"):
        _hand_made().corrected(geo)


def test_a_hand_made_estimate_is_checked_before_c():
    bad = GeometryEstimate(float("nan"), 0, 0, 0, 0, 0, 0, 0, 0, 0, "")
    with pytest.raises(ValueError, match="offset_u_mm"):
        bad.apply(fdk_ct.ViewGeometry(0.0, SID, SDD))
    long_basis = GeometryEstimate(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "é" * 300)
    assert long_basis._to_c().basis.decode() == "é" * 127  # cut at a character


# ---- errors ------------------------------------------------------------------------------
def test_wrong_shapes_and_types_are_refused_before_c(scan):
    geo, projections = scan
    with pytest.raises(ValueError, match="3-D"):
        fdk_ct.estimate_geometry(projections[0], geo)
    with pytest.raises(ValueError, match="views"):
        fdk_ct.estimate_geometry(projections[:10], geo)
    with pytest.raises(ValueError, match="do not match"):
        fdk_ct.estimate_geometry(projections[:, :16], geo)
    with pytest.raises(TypeError, match="floating"):
        fdk_ct.estimate_geometry(projections.astype(np.int32), geo)
    with pytest.raises(TypeError, match="Geometry"):
        fdk_ct.estimate_geometry(projections, "geometry")
    with fdk_ct.GeometryEstimator(geo) as estimator:
        with pytest.raises(ValueError, match="does not match"):
            estimator.push(0, projections[0, :, :10])
        with pytest.raises(TypeError):
            estimator.push(0.0, projections[0])
        with pytest.raises(errors.OutOfRangeError, match="view index"):
            estimator.push(2**40, projections[0])


def test_the_library_refuses_a_nan_view_and_an_index_out_of_range(scan):
    geo, projections = scan
    views = projections.copy()
    views[7, 3, 5] = np.nan
    with pytest.raises(errors.InvalidArgumentError) as e:
        fdk_ct.estimate_geometry(views, geo)
    assert e.value.message and e.value.status == 1
    with fdk_ct.GeometryEstimator(geo) as estimator:
        with pytest.raises(errors.OutOfRangeError) as e:
            estimator.push(VIEWS, projections[0])
        assert e.value.message
        estimator.push(0, projections[0])  # still usable


def test_the_library_refuses_a_geometry_of_matrices():
    m = np.tile(np.array([[-SDD, 0, 0, 0], [0, -SDD, 0, 0], [0, 0, 1, -SID]]), (4, 1, 1))
    geo = fdk_ct.Geometry.from_matrices(m, PIXEL, detector_shape=(ROWS, COLS))
    with pytest.raises(errors.InvalidArgumentError) as e:
        fdk_ct.GeometryEstimator(geo)
    assert e.value.message


def test_a_closed_estimator_refuses_every_call(scan):
    geo, projections = scan
    estimator = fdk_ct.GeometryEstimator(geo)
    estimator.close()
    estimator.close()  # idempotent
    with pytest.raises(errors.InvalidStateError, match="closed"):
        estimator.push(0, projections[0])
    with pytest.raises(errors.InvalidStateError, match="closed"):
        estimator.estimate()


# ---- the Reconstructor's option -------------------------------------------------------------
def test_a_reconstructor_estimates_when_asked(scan):
    geo, projections = scan
    with fdk_ct.Reconstructor(geo, fdk_ct.Volume(16, 2.0), backend="cpu", threads=2,
                              estimate_geometry=True) as rec:
        for i in range(VIEWS):
            rec.push(i, projections[i])
        during = rec.geometry_estimate()
        rec.finish()
        after = rec.geometry_estimate()
    assert isinstance(during, GeometryEstimate) and isinstance(after, GeometryEstimate)
    assert 0.0 <= after.confidence <= 1.0 and after.basis


def test_a_reconstructor_without_the_option_has_no_estimate(scan):
    geo, _ = scan
    with fdk_ct.Reconstructor(geo, fdk_ct.Volume(16, 2.0), backend="cpu", threads=2) as rec:
        with pytest.raises(errors.InvalidStateError) as e:
            rec.geometry_estimate()
        assert e.value.message
    with pytest.raises(errors.InvalidStateError, match="closed"):
        rec.geometry_estimate()


def test_the_option_is_a_bool_and_reconstruct_points_elsewhere(scan):
    geo, projections = scan
    with pytest.raises(TypeError, match="estimate_geometry"):
        fdk_ct.Reconstructor(geo, backend="cpu", estimate_geometry="yes")
    with pytest.raises(TypeError, match="estimate_geometry"):
        fdk_ct.reconstruct(projections, geo, estimate_geometry=True)


# ---- accuracy (once the method has landed) ---------------------------------------------------
def test_a_detector_offset_of_three_pixels_is_recovered():
    offset_px = 3.0
    nominal = fdk_ct.Geometry.circular(360, 500.0, 750.0, PIXEL, detector_shape=(64, 128))
    true = fdk_ct.Geometry.circular(360, 500.0, 750.0, PIXEL, detector_shape=(64, 128),
                                    projection_offset_x=offset_px * PIXEL)
    head = fdk_ct.phantom.modified_shepp_logan(scale=30.0, mu=0.02)
    est = fdk_ct.estimate_geometry(fdk_ct.phantom.project(true, head), nominal)
    assert est.offset_estimated, str(est)
    assert abs(est.offset_u_pixels - offset_px) < 0.2, str(est)
    assert est.offset_u_mm == pytest.approx(est.offset_u_pixels * PIXEL)
    fixed = est.corrected(nominal)
    assert abs(fixed.uniform.projection_offset_x - offset_px * PIXEL) < 0.2 * PIXEL
