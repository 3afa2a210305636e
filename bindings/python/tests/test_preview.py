"""The live preview (libfdk 0.8): the option, whole reads, slices, the
generator on a reader thread, errors, and the structs against fdk.h."""
import ctypes
import threading
import time

import numpy as np
import pytest

import fdk_ct
from fdk_ct import _native, _options, errors

# A grid with three different counts, spacings and an off-centre origin, so
# that a transposed or mirrored axis lands on other voxels.
ODD_GRID = fdk_ct.Volume((10, 14, 18), (3.0, 2.5, 2.0), origin=(-12.0, -15.0, -19.0))


def _rec(small_scan, **kw):
    geo, proj, grid = small_scan
    kw.setdefault("backend", "cpu")
    kw.setdefault("threads", 2)
    return fdk_ct.Reconstructor(geo, grid, **kw)


def _push_all(rec, proj):
    for i in range(proj.shape[0]):
        rec.push(i, proj[i])
    rec.finish()


def _rel_max(a, b):
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / np.abs(np.asarray(b)).max())


@pytest.mark.parametrize("preview", [True, ODD_GRID], ids=["default-grid", "chosen-grid"])
def test_after_finish_the_preview_is_a_reconstruction_of_its_grid(small_scan, preview):
    geo, proj, grid = small_scan
    with _rec(small_scan, preview=preview) as rec:
        if preview is True:  # the volume's field at 1/2 of its 48 voxels a side
            assert rec.preview_volume.shape == (24, 24, 24)
            assert rec.preview_volume.spacing == (2.5, 2.5, 2.5)
            assert np.allclose(rec.preview_volume.origin, grid.origin[0] + 0.625)
        else:
            assert rec.preview_volume == ODD_GRID
        _push_all(rec, proj)
        vol = rec.preview()
        info = rec.last_preview_info
        pgrid = rec.preview_volume
    assert isinstance(vol, fdk_ct.VolumeArray) and vol.volume == pgrid
    assert vol.shape == pgrid.shape and vol.dtype == np.float32
    assert info.complete and not info.failed and not info.on_gpu
    assert info.views == info.views_announced == 120 and info.coverage == 1.0
    assert info.volume == pgrid and info.memory_bytes >= pgrid.size_bytes
    ref = fdk_ct.reconstruct(proj, geo, pgrid, backend="cpu", threads=2)
    assert _rel_max(vol, ref) <= 1e-5


def test_slices_are_the_planes_of_the_whole_preview(small_scan):
    geo, proj, _ = small_scan
    with _rec(small_scan, preview=ODD_GRID) as rec:
        _push_all(rec, proj)
        vol = rec.preview(out=fdk_ct.empty_volume(ODD_GRID))
        for at, want in [(None, (5, 7, 9)), ((0, None, 17), (0, 7, 17)),
                         ((9, 13, 0), (9, 13, 0)), ((np.int64(3), 1, None), (3, 1, 9))]:
            s = rec.preview_slices(at)
            assert s.at == want, at
            iz, iy, ix = want
            assert (s.x.shape, s.y.shape, s.z.shape) == ((10, 14), (10, 18), (14, 18))
            np.testing.assert_array_equal(s.x, vol[:, :, ix])
            np.testing.assert_array_equal(s.y, vol[:, iy, :])
            np.testing.assert_array_equal(s.z, vol[iz, :, :])
            assert s.info.complete and s.info.volume == ODD_GRID
            assert s.position == (-12.0 + 3.0 * iz, -15.0 + 2.5 * iy, -19.0 + 2.0 * ix)
        assert np.abs(vol).max() > 0


def test_previews_yield_during_the_scan_and_once_at_its_end(small_scan):
    geo, proj, _ = small_scan
    seen = []
    with _rec(small_scan, preview=True) as rec:
        def pusher():
            for i in range(geo.num_views):
                rec.push(i, proj[i])
                time.sleep(0.004)
            rec.finish()
        t = threading.Thread(target=pusher)
        t.start()
        start = time.monotonic()
        for s in rec.previews(interval=0.05):
            seen.append(s.info)
            assert s.y.shape == (24, 24)
            assert time.monotonic() - start < 60, "previews() did not stop"
        t.join(60)
        assert not t.is_alive()
        # reads on this thread, slices included, leave last_preview_info alone
        assert rec.last_preview_info is None
        last = rec.preview_slices()
    assert len(seen) >= 2
    assert any(not i.complete and i.views < 120 for i in seen[:-1]), seen
    assert seen[-1].complete and seen[-1].views == 120 and seen[-1].coverage == 1.0
    assert all(a.views <= b.views for a, b in zip(seen, seen[1:]))
    assert last.info == seen[-1]


def test_previews_stop_when_closed_or_cancelled(small_scan):
    geo, proj, _ = small_scan
    with _rec(small_scan, preview=True) as rec:
        gen = rec.previews(interval=30)
        assert next(gen).info.views == 0
        rec.close()
        with pytest.raises(StopIteration):
            next(gen)  # at once, not after 30 s
    with _rec(small_scan, preview=True) as rec:
        rec.push(0, proj[0])
        gen = rec.previews(interval=30)
        next(gen)
        rec.cancel()
        start = time.monotonic()
        assert isinstance(next(gen), fdk_ct.PreviewSlices)  # once more, at once
        with pytest.raises(StopIteration):
            next(gen)
        assert time.monotonic() - start < 10


def test_the_preview_is_read_from_another_thread_while_pushing(small_scan):
    geo, proj, _ = small_scan
    infos = []
    with _rec(small_scan, preview=True) as rec:
        def reader():
            rec.preview()
            infos.append(rec.last_preview_info)
        for i in range(60):
            rec.push(i, proj[i])
        t = threading.Thread(target=reader)
        t.start()
        t.join(60)
        assert rec.last_preview_info is None  # per thread
        now = rec.preview_info()
        assert infos[0].views <= now.views <= 60 and not now.complete
        assert 0.0 <= infos[0].coverage <= 0.5 + 1e-12


def test_errors(small_scan):
    geo, proj, grid = small_scan
    with _rec(small_scan) as rec:  # no preview
        assert rec.preview_volume is None
        for call in (rec.preview, rec.preview_slices, rec.preview_info,
                     lambda: next(rec.previews())):
            with pytest.raises(errors.InvalidStateError) as e:
                call()
            assert e.value.status == 3 and "preview" in str(e.value)
    with _rec(small_scan, preview=ODD_GRID) as rec:
        with pytest.raises(errors.OutOfRangeError) as e:  # the library's check
            rec.preview_slices((10, None, None))
        assert e.value.status == 2
        with pytest.raises(errors.OutOfRangeError):
            rec.preview_slices((None, None, 18))
        with pytest.raises(errors.OutOfRangeError):  # C's -1 is "the middle": refused
            rec.preview_slices((-1, 0, 0))
        with pytest.raises(TypeError):
            rec.preview_slices((1, 2))
        with pytest.raises(TypeError):
            rec.preview_slices((1.0, 2, 3))
        with pytest.raises(ValueError):
            rec.preview(out=np.empty((24, 24, 24), np.float32))
        with pytest.raises(ValueError):
            next(rec.previews(interval=0))
        rec.preview_slices((9, 13, 17))  # still usable
    with pytest.raises(TypeError):
        _rec(small_scan, preview="yes")
    with pytest.raises(errors.InvalidArgumentError, match="preview_volume x size"):
        _rec(small_scan, preview=fdk_ct.Volume((8, 8, 70000), 1.0))  # the library's range
    with pytest.raises(TypeError, match="preview"):
        fdk_ct.reconstruct(proj, geo, grid, preview=True)


def test_the_repr_of_a_preview_shows_its_grid(small_scan):
    with _rec(small_scan, preview=ODD_GRID) as rec:
        vol = rec.preview()
    assert repr(vol) == ("VolumeArray(shape=(10, 14, 18), spacing=(3.0, 2.5, 2.0), "
                         "origin=(-12.0, -15.0, -19.0), dtype=float32)")


def test_the_library_agrees_on_the_preview_info_size():
    # Offsets: test_layout.py against the C compiler (fdk_layout.c).
    info = _native.PreviewInfoC()
    _native.preview().fdk_preview_info_init(ctypes.byref(info))
    assert info.struct_size == ctypes.sizeof(_native.PreviewInfoC)
    assert ctypes.sizeof(_native.Config) == \
        _native.Config.preview_volume.offset + ctypes.sizeof(_native.VolumeC)


def test_an_older_library_is_told_only_when_the_preview_is_used(monkeypatch):
    cfg = _native.Config()
    _native.init_config(cfg)
    cfg.struct_size = _native.Config.preview.offset  # what a 0.7 library writes
    _options.fill(cfg)  # no preview: fine
    with pytest.raises(fdk_ct.LibraryNotFoundError, match="0.8"):
        _options.fill(cfg, preview=True)

    class Old:  # a library without the 0.8 functions
        def fdk_version_string(self):
            return b"0.7.0"
    monkeypatch.setattr(_native, "_lib", Old())
    with pytest.raises(fdk_ct.LibraryNotFoundError, match="fdk_preview_info_init"):
        _native.preview()
