"""Every status as its exception class, and bad arrays refused clearly; the
reconstruction stays usable and its stored views intact after each error."""
import numpy as np
import pytest

import fdk_ct
from fdk_ct import errors


def _rec(small_scan, **kw):
    geo, _, grid = small_scan
    kw.setdefault("backend", "cpu")
    kw.setdefault("threads", 2)
    return fdk_ct.Reconstructor(geo, grid, **kw)


ALL = [errors.InvalidArgumentError, errors.OutOfRangeError, errors.InvalidStateError,
       errors.DuplicateError, errors.BudgetError, errors.OutOfMemoryError,
       errors.BackendUnavailableError, errors.DeviceError, errors.CancelledError,
       errors.UnsupportedError, errors.StructSizeError, errors.InternalError]


@pytest.mark.parametrize("cls", ALL)
def test_each_status_raises_its_class_with_the_message(cls):
    with pytest.raises(cls) as info:
        errors.raise_for(cls.status, f"the library's words for {cls.status}")
    assert isinstance(info.value, errors.FdkError)
    assert info.value.status == cls.status
    assert info.value.message == f"the library's words for {cls.status}"
    assert errors.error_class(cls.status) is cls
    errors.raise_for(0, "")  # FDK_OK raises nothing


def test_python_categories():
    assert issubclass(errors.InvalidArgumentError, ValueError)
    assert issubclass(errors.OutOfRangeError, IndexError)
    assert issubclass(errors.BudgetError, MemoryError)
    assert issubclass(errors.OutOfMemoryError, MemoryError)
    assert errors.error_class(99) is errors.FdkError


def test_errors_raised_by_the_library(small_scan):
    geo, proj, grid = small_scan
    with pytest.raises(errors.InvalidArgumentError, match="cutoff"):
        fdk_ct.Reconstructor(geo, grid, cutoff=2.0)
    with pytest.raises(errors.BudgetError):
        fdk_ct.Reconstructor(geo, grid, budget="64KiB")
    if not fdk_ct.backend_info()["cuda_usable"]:
        with pytest.raises(errors.BackendUnavailableError):
            fdk_ct.Reconstructor(geo, grid, backend="cuda")
    with _rec(small_scan) as rec:
        bad = proj[0].copy()
        bad[47, 45] = np.nan
        with pytest.raises(errors.InvalidArgumentError, match="column 45, row 47"):
            rec.push(0, bad)
        with pytest.raises(errors.OutOfRangeError):
            rec.push(geo.num_views, proj[0])
        with pytest.raises(errors.OutOfRangeError):
            rec.push(-1, proj[0])
        with pytest.raises(errors.OutOfRangeError):
            rec.push(2**40, proj[0])
        with pytest.raises(errors.InvalidStateError):
            rec.finish()  # no view yet
        rec.push(0, proj[0])
        with pytest.raises(errors.DuplicateError):
            rec.push(0, proj[1])
        with pytest.raises(errors.InvalidStateError):
            rec.read_slab(0)  # before finish
        for i in range(1, geo.num_views):
            rec.push(i, proj[i])
        rec.finish()
        with pytest.raises(errors.InvalidStateError):
            rec.finish()
        with pytest.raises(errors.InvalidStateError):
            rec.push(1, proj[1])
        vol = rec.read_volume()
        rec.cancel()
        with pytest.raises(errors.CancelledError):
            rec.read_slab(0)
    # Every error left the stored views intact: the volume is the clean one.
    np.testing.assert_array_equal(vol, fdk_ct.reconstruct(proj, geo, grid, backend="cpu",
                                                          threads=2))


@pytest.mark.parametrize("bad, exc, words", [
    (lambda p: p.astype(np.int16), TypeError, "floating"),
    (lambda p: p.astype(np.complex64), TypeError, "floating"),
    (lambda p: p[0], ValueError, "3-D"),
    (lambda p: p[:, :, :-1], ValueError, "do not match"),
    (lambda p: p[:-1], ValueError, "views"),
    (lambda p: [[["x"]]], TypeError, "floating"),
])
def test_bad_projection_arrays(small_scan, bad, exc, words):
    geo, proj, grid = small_scan
    with pytest.raises(exc, match=words):
        fdk_ct.reconstruct(bad(proj), geo, grid, backend="cpu")


def test_a_nan_in_the_scan_names_the_view_and_pixel(small_scan):
    geo, proj, grid = small_scan
    p = proj.copy()
    p[7, 3, 5] = np.inf
    with pytest.raises(errors.InvalidArgumentError, match="column 5, row 3"):
        fdk_ct.reconstruct(p, geo, grid, backend="cpu")


def test_bad_views_and_options(small_scan):
    geo, proj, grid = small_scan
    with _rec(small_scan) as rec:
        with pytest.raises(ValueError, match="2-D"):
            rec.push(0, proj[:2])
        with pytest.raises(ValueError, match="does not match"):
            rec.push(0, proj[0, :, :-2])
        with pytest.raises(TypeError, match="floating"):
            rec.push(0, (proj[0] * 100).astype(np.uint16))
        with pytest.raises(TypeError, match="integer"):
            rec.push(1.5, proj[0])
        rec.push(0, proj[0])  # still usable
    for kw, words in (({"window": "gauss"}, "window"), ({"backend": "opencl"}, "backend"),
                      ({"precision": "float8"}, "precision"), ({"budget": "lots"}, "budget"),
                      ({"budget": -1}, "budget"), ({"outside_fov": "clip"}, "outside_fov")):
        with pytest.raises(ValueError, match=words):
            fdk_ct.Reconstructor(geo, grid, **kw)
    with pytest.raises(TypeError):
        fdk_ct.Reconstructor("not a geometry", grid)
    with pytest.raises(ValueError, match="shape"):
        fdk_ct.Volume((0, 4, 4))
    with pytest.raises(ValueError, match="detector"):
        fdk_ct.Reconstructor(fdk_ct.Geometry.circular(10, 400.0, 600.0, 1.0), grid)


def test_missing_library_is_a_clear_import_time_error(tmp_path):
    import subprocess
    import sys
    code = ("import fdk_ct\n"
            "try:\n    fdk_ct.library_version()\n"
            "except fdk_ct.LibraryNotFoundError as e:\n    print('MISSING', e)\n")
    env = {"FDK_CT_LIBRARY": str(tmp_path / "libfdk.so"), "PATH": "/usr/bin:/bin",
           "PYTHONPATH": fdk_ct.__path__[0].rsplit("/", 1)[0]}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert out.startswith("MISSING") and "FDK_CT_LIBRARY" in out
