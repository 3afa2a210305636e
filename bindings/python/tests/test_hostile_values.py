"""Hostile numbers: every size, count, index, budget and double the binding
passes to C, at the edges of its C field (issue 39: never damage what the
user gave).

ctypes stores 2**32 + 32 in an int32 as 32 and 2**64 in a uint64 as 0
without a word, so each case here is refused in Python, before any C call,
with ValueError (TypeError for what is not a number; IndexError for an
index, as the library's own) naming the field as the user wrote it and,
for a range, the limit. The last tests show that the valid edges still go
through exactly.
"""
import math
import re

import numpy as np
import pytest

import fdk_ct
from fdk_ct import _native, _options, phantom
from fdk_ct.interop import astra, tigre

INT32 = "2147483647"
UINT64 = "18446744073709551615"
NAN, INF = float("nan"), float("inf")

GEO = fdk_ct.Geometry.circular(8, sid=400.0, sdd=600.0, detector_spacing=1.0,
                               detector_shape=(8, 8))
GRID = fdk_ct.Volume((4, 4, 4), 1.0)


def _rec(geometry=GEO, volume=GRID, **options):
    """A Reconstructor on the small scan (closed at once when it is made)."""
    options.setdefault("backend", "cpu")
    options.setdefault("threads", 1)
    fdk_ct.Reconstructor(geometry, volume, **options).close()


def _circular(**kw):
    args = dict(num_views=8, sid=400.0, sdd=600.0, detector_spacing=1.0, detector_shape=(8, 8))
    args.update(kw)
    return fdk_ct.Geometry.circular(**args)


def _case(build, exc, *words, id):
    return pytest.param(build, exc, words, id=id)


def _name(value):
    """A test id for a value: numpy scalars by type, 10**400 by its exponent."""
    if isinstance(value, np.generic):
        return f"np.{type(value).__name__}({value})"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**70:
        return "10**400"
    return repr(value)


# Sizes past int32 and uint64, the signs that are never a size, fractions,
# NaN, and numpy scalars of the same edges (numpy would keep 2**32 + 32 whole).
SIZES = [(2**31, ValueError, INT32), (2**32 + 32, ValueError, INT32),
         (2**63, ValueError, INT32), (2**64, ValueError, INT32), (-1, ValueError, INT32),
         (0, ValueError, INT32), (2.5, ValueError, "whole number"),
         (NAN, ValueError, "whole number"), (np.int64(2**32 + 32), ValueError, INT32),
         (np.uint64(2**64 - 1), ValueError, INT32), (True, TypeError, "bool")]


def _volume_cases():
    for axis in range(3):
        for value, exc, limit in SIZES:
            shape = [4, 4, 4]
            shape[axis] = value

            def build(shape=shape):
                _rec(volume=fdk_ct.Volume(shape))
            yield _case(build, exc, f"volume shape[{axis}]", limit,
                        id=f"volume-shape{axis}-{_name(value)}")


def _detector_cases():
    for axis, name in ((0, "rows"), (1, "cols")):
        for value, exc, limit in SIZES:
            shape = [8, 8]
            shape[axis] = value

            def build(shape=shape):
                _rec(geometry=_circular(detector_shape=shape))
            yield _case(build, exc, f"detector_shape[{axis}] ({name})", limit,
                        id=f"detector-{name}-{_name(value)}")
    # Given to the Reconstructor instead of the Geometry.
    yield _case(lambda: fdk_ct.Reconstructor(_circular(detector_shape=None), GRID,
                                             detector_shape=(8, 2**32 + 64)),
                ValueError, "detector_shape[1] (cols)", INT32, id="reconstructor-detector_shape")


def _num_views_cases():
    for value, exc, limit in SIZES:
        if value == 0 or value is True:
            continue
        yield _case(lambda value=value: _rec(geometry=_circular(num_views=value)), exc,
                    "num_views", limit, id=f"num_views-{_name(value)}")
    yield _case(lambda: _rec(geometry=_circular(num_views=0)), ValueError, "num_views", INT32,
                id="num_views-0")


DOUBLES = [(NAN, "finite"), (INF, "finite"), (-INF, "finite"), (10**400, "too large")]


def _double_cases():
    for value, words in DOUBLES:
        for name in ("sid", "sdd", "source_offset_x", "projection_offset_y",
                     "in_plane_angle_deg", "first_angle_deg", "arc_deg"):
            yield _case(lambda name=name, value=value: _rec(geometry=_circular(**{name: value})),
                        ValueError, name, words, id=f"{name}-{_name(value)}")
        yield _case(lambda value=value: _rec(volume=fdk_ct.Volume(4, spacing=(1.0, value, 1.0))),
                    ValueError, "volume spacing[1]", words, id=f"volume-spacing-{_name(value)}")
        yield _case(lambda value=value: _rec(volume=fdk_ct.Volume(4, origin=(value, 0, 0))),
                    ValueError, "volume origin[0]", words, id=f"volume-origin-{_name(value)}")
        yield _case(lambda value=value: _rec(geometry=_circular(detector_spacing=(1.0, value))),
                    ValueError, "detector_spacing[1]", words,
                    id=f"detector-spacing-{_name(value)}")
        yield _case(lambda value=value: _rec(geometry=_circular(detector_origin=(value, 0.0))),
                    ValueError, "detector_origin[0]", words,
                    id=f"detector-origin-{_name(value)}")
        for name in ("cutoff", "truncation_padding", "hann_cutoff_v"):
            yield _case(lambda name=name, value=value: _rec(**{name: value}), ValueError, name,
                        words, id=f"option-{name}-{_name(value)}")
    for name, value in (("sid", 0.0), ("sdd", -600.0)):
        yield _case(lambda name=name, value=value: _rec(geometry=_circular(**{name: value})),
                    ValueError, name, "> 0", id=f"{name}-{_name(value)}")
    for value in (0.0, -1.0):
        yield _case(lambda value=value: _rec(volume=fdk_ct.Volume(4, spacing=value)),
                    ValueError, "volume spacing[0]", "> 0", id=f"volume-spacing-{_name(value)}")
    # A huge spacing makes the centred origin overflow to inf.
    yield _case(lambda: fdk_ct.Volume((2**30, 4, 4), spacing=1e300), ValueError,
                "volume origin (centred)[0]", "finite", id="volume-origin-centred-overflow")


def _table_cases():
    table = np.tile([0.0, 400.0, 600.0], (8, 1))
    table[:, 0] = np.arange(8) * 45.0
    sid = table[:, 1].copy()
    sid[3] = NAN
    yield _case(lambda: _rec(geometry=fdk_ct.Geometry.from_views(
        table[:, 0], sid, 600.0, 1.0, detector_shape=(8, 8))), ValueError, "sid of view 3",
        id="views-sid-nan")
    yield _case(lambda: _rec(geometry=fdk_ct.Geometry.from_views(
        table[:, 0], 400.0, 600.0, 1.0, detector_shape=(8, 8), source_offset_y=10**400)),
        ValueError, "source_offset_y", "too large", id="views-offset-huge")
    matrices = np.zeros((8, 3, 4))
    matrices[:, 0, 0] = matrices[:, 1, 1] = 600.0
    matrices[:, 2, 3] = 400.0
    matrices[5, 1, 2] = INF
    yield _case(lambda: _rec(geometry=fdk_ct.Geometry.from_matrices(
        matrices, 1.0, detector_shape=(8, 8))), ValueError, "matrix[1][2] of view 5",
        id="matrices-inf")
    # Made directly: C would read 8 matrices from an array of 2.
    yield _case(lambda: _rec(geometry=fdk_ct.Geometry(
        kind="matrices", num_views=8, detector_spacing=(1.0, 1.0), detector_shape=(8, 8),
        matrices=np.ascontiguousarray(matrices[:2]))), ValueError, "matrices", "(8, 3, 4)",
        id="matrices-fewer-than-num_views")


def _budget_cases():
    for name in ("budget", "gpu_budget"):
        for value, exc, words in ((2**64, ValueError, UINT64), (2**64 + 1, ValueError, UINT64),
                                  (2**65, ValueError, UINT64), (-1, ValueError, UINT64),
                                  (2.5, ValueError, "whole number"),
                                  ("20000000 TiB", ValueError, UINT64),
                                  ("0.5 b", ValueError, "whole number of bytes"),
                                  (True, TypeError, "bool")):
            yield _case(lambda name=name, value=value: _rec(**{name: value}), exc, name, words,
                        id=f"{name}-{_name(value)}")


def _device_cases():
    for value, exc, words in (([0] * 17, ValueError, "1 to 16"), ([], ValueError, "1 to 16"),
                              ([-1], ValueError, "devices[0]"),
                              ([0, 2**32], ValueError, "devices[1]"),
                              ([2**64], ValueError, "devices[0]"),
                              ([0, 1.5], ValueError, "devices[1]"),
                              ([np.int64(2**31)], ValueError, "devices[0]"),
                              ("01", TypeError, "devices"), (3, TypeError, "devices")):
        yield _case(lambda value=value: _rec(devices=value), exc, words,
                    id=f"devices-{_name(value)}")


def _count_cases():
    for name in ("threads", "slab_thickness"):
        for value, exc, words in ((2**32 + 2, ValueError, INT32), (2**31, ValueError, INT32),
                                  (-1, ValueError, INT32), (2**64, ValueError, INT32),
                                  (2.5, ValueError, "whole number"), (True, TypeError, "bool")):
            yield _case(lambda name=name, value=value: _rec(**{name: value}), exc, name, words,
                        id=f"{name}-{_name(value)}")
    for name in ("short_scan", "offset_detector"):
        yield _case(lambda name=name: _rec(**{name: "false"}), TypeError, name, "True or False",
                    id=f"{name}-str")


def _phantom_cases():
    for value, words in ((-1.0, "> 0"), (0.0, "> 0"), (-0.0, "> 0"), (NAN, "finite"),
                         (INF, "finite"), ("30", "number")):
        exc = TypeError if isinstance(value, str) else ValueError
        yield _case(lambda value=value: phantom.modified_shepp_logan(scale=value), exc, "scale",
                    words, id=f"shepp-scale-{_name(value)}")
    for value, words in ((-0.02, ">= 0"), (NAN, "finite"), (INF, "finite")):
        yield _case(lambda value=value: phantom.modified_shepp_logan(mu=value), ValueError, "mu",
                    words, id=f"shepp-mu-{_name(value)}")
    E = phantom.Ellipsoid
    for build, words, id in (
            (lambda: E((0, 0, 0), (1, 0, 1), 1.0), "semi_axes y", "ellipsoid-axis-zero"),
            (lambda: E((0, 0, 0), (-1, 1, 1), 1.0), "semi_axes x", "ellipsoid-axis-negative"),
            (lambda: E((0, 0, 0), (1, 1, NAN), 1.0), "semi_axes z", "ellipsoid-axis-nan"),
            (lambda: E((INF, 0, 0), (1, 1, 1), 1.0), "centre x", "ellipsoid-centre-inf"),
            (lambda: E((0, 0, 0), (1, 1, 1), NAN), "density", "ellipsoid-density-nan"),
            (lambda: E((0, 0, 0), (1, 1, 1), 1.0, INF), "angle_deg", "ellipsoid-angle-inf"),
            (lambda: E((0, 0), (1, 1, 1), 1.0), "centre", "ellipsoid-centre-two")):
        yield _case(build, ValueError, words, id=id)
    yield _case(lambda: phantom.project(GEO, [(0, 0, 0)]), TypeError, "ellipsoids[0]",
                id="project-not-an-ellipsoid")
    yield _case(lambda: phantom.project(GEO, phantom.modified_shepp_logan(10.0),
                                        detector_shape=(8, 2**32 + 8)), ValueError,
                "detector_shape[1]", INT32, id="project-detector-shape")


def _interop_cases():
    vec = astra.cone_to_cone_vec(1.0, 1.0, np.linspace(0, 2 * np.pi, 8, endpoint=False),
                                 400.0, 200.0)
    yield _case(lambda: astra.from_cone_vec(vec, 2.5, 8), ValueError, "det_row_count",
                "whole number", id="astra-rows-fraction")
    yield _case(lambda: astra.from_cone_vec(vec, 8, 2**32 + 8), ValueError, "det_col_count", INT32,
                id="astra-cols-huge")
    yield _case(lambda: astra.from_cone(1.0, 1.0, 8, 2**32 + 8, [0.0, 1.0], 400.0, 200.0),
                ValueError, "det_col_count", INT32, id="astra-cone-cols-huge")
    grid = {"GridRowCount": 2**32 + 4, "GridColCount": 4, "GridSliceCount": 4,
            "option": {"WindowMinX": -2, "WindowMaxX": 2, "WindowMinY": -2, "WindowMaxY": 2,
                       "WindowMinZ": -2, "WindowMaxZ": 2}}
    yield _case(lambda: astra.volume_from_astra(grid), ValueError, "GridRowCount", INT32,
                id="astra-volume-count-huge")

    class Tigre:
        DSO, DSD = 400.0, 600.0
        nDetector = (8, 8)
        dDetector = (1.0, 1.0)
        nVoxel = (4, 2**64, 4)
        dVoxel = (1.0, 1.0, 1.0)
    yield _case(lambda: tigre.volume_from_tigre(Tigre()), ValueError, "nVoxel[1]", INT32,
                id="tigre-nvoxel-huge")


CASES = (list(_volume_cases()) + list(_detector_cases()) + list(_num_views_cases())
         + list(_double_cases()) + list(_table_cases()) + list(_budget_cases())
         + list(_device_cases()) + list(_count_cases()) + list(_phantom_cases())
         + list(_interop_cases()))


@pytest.mark.parametrize("build, exc, words", CASES)
def test_hostile_value_is_refused_by_name(build, exc, words):
    with pytest.raises(exc) as info:
        build()
    # The binding's own error (the library's is an FdkError), naming the field.
    assert not isinstance(info.value, fdk_ct.FdkError), info.value
    for w in words:
        assert w in str(info.value), (w, str(info.value))


# ---- indices: an IndexError (OutOfRangeError), as the library's own --------------
@pytest.fixture
def rec():
    r = fdk_ct.Reconstructor(GEO, GRID, backend="cpu", threads=1)
    yield r
    r.close()


VIEW = np.zeros((8, 8), np.float32)

INDEX_CASES = [
    pytest.param(lambda r: r.push(2**32, VIEW), "view index", id="push-2**32"),
    pytest.param(lambda r: r.push(2**32 + 3, VIEW), "view index", id="push-2**32+3"),
    pytest.param(lambda r: r.push(-2**31 - 1, VIEW), "view index", id="push-below-int32"),
    pytest.param(lambda r: r.push(np.uint64(2**64 - 1), VIEW), "view index", id="push-uint64-max"),
    pytest.param(lambda r: r.view_state(2**32 + 1), "view index", id="view_state-2**32+1"),
    pytest.param(lambda r: r.slab_ready(2**32), "slab index", id="slab_ready-2**32"),
    pytest.param(lambda r: r.slab_planes(2**63), "slab index", id="slab_planes-2**63"),
    pytest.param(lambda r: r.read_slab(2**32), "slab index", id="read_slab-2**32"),
    pytest.param(lambda r: r.read_slab(-1), "slab index", id="read_slab--1"),
]


@pytest.mark.parametrize("call, words", INDEX_CASES)
def test_hostile_index_is_refused_by_name(rec, call, words):
    with pytest.raises(IndexError, match=re.escape(words)):
        call(rec)
    rec.push(0, VIEW)  # the reconstruction is still usable


@pytest.mark.parametrize("call", [
    pytest.param(lambda r: r.push(1.0, VIEW), id="push-float"),
    pytest.param(lambda r: r.push(True, VIEW), id="push-bool"),
    pytest.param(lambda r: r.read_slab(0.0), id="read_slab-float"),
    pytest.param(lambda r: r.push(0, VIEW, fdk_ct.ViewGeometry(0.0, 400.0, NAN)), id="view-nan"),
])
def test_hostile_push_arguments(rec, call):
    with pytest.raises((TypeError, ValueError)) as info:
        call(rec)
    assert not isinstance(info.value, fdk_ct.FdkError)
    rec.push(0, VIEW)


# ---- the valid edges still go through, exactly ---------------------------------
@pytest.mark.parametrize("value, expected", [
    pytest.param(2**64 - 1, 2**64 - 1, id="int-2**64-1"),
    pytest.param(np.uint64(2**64 - 1), 2**64 - 1, id="np.uint64-2**64-1"),
    pytest.param(float(2**63), 2**63, id="float-2**63"),
    pytest.param(str(2**64 - 1), 2**64 - 1, id="str-2**64-1"),
    pytest.param("1.5 KiB", 1536, id="1.5 KiB"), pytest.param("0.1 KB", 100, id="0.1 KB")])
def test_largest_budget_is_passed_exactly(value, expected):
    cfg = _native.Config()
    _options.fill(cfg, budget=value, gpu_budget=value)
    assert cfg.host_memory_budget == expected
    assert cfg.gpu_memory_budget == expected


def test_largest_budget_reconstructs():
    _rec(budget=2**64 - 1)


def test_sixteen_devices_and_int32_edges_are_passed_exactly():
    cfg = _native.Config()
    devices = [0, 1, 2**31 - 1] + [np.int64(3)] * 13
    _options.fill(cfg, devices=devices, threads=np.int32(2**31 - 1),
                  slab_thickness=float(2**31 - 1))
    assert cfg.num_devices == 16
    assert list(cfg.devices) == [int(d) for d in devices]
    assert cfg.num_threads == cfg.slab_thickness == 2**31 - 1


def test_largest_int32_shapes_reach_the_struct_exactly():
    vol = fdk_ct.Volume((2**31 - 1, np.int64(3), 4.0), spacing=1e-6)
    c = _native.VolumeC()
    vol._to_c(c)
    assert list(c.size) == [4, 3, 2**31 - 1]
    geo = _circular(num_views=np.uint32(2**31 - 1), detector_shape=(np.uint16(8), 2**31 - 1))
    cfg = _native.Config()
    geo._fill(cfg)
    assert cfg.scan.num_views == 2**31 - 1
    assert list(cfg.detector.size) == [2**31 - 1, 8]


def test_numpy_scalars_and_whole_floats_reconstruct():
    vol = fdk_ct.Volume((np.int64(4), np.uint8(4), 4.0), spacing=np.float32(1.0))
    geo = _circular(num_views=np.int16(8), sid=np.float32(400.0))
    proj = phantom.project(geo, phantom.modified_shepp_logan(np.float32(2.0), mu=np.float64(0.02)))
    out = fdk_ct.reconstruct(proj, geo, vol, backend="cpu", threads=np.int64(1))
    assert out.shape == (4, 4, 4) and np.isfinite(out).all()
    assert math.isfinite(float(out.sum()))
