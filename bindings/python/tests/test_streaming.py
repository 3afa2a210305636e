"""The streaming Reconstructor: threads, progress, slabs, cancel, close."""
import threading
import time

import numpy as np
import pytest

import fdk_ct
from fdk_ct import errors


def _rec(small_scan, **kw):
    geo, proj, grid = small_scan
    kw.setdefault("backend", "cpu")
    kw.setdefault("threads", 2)
    kw.setdefault("slab_thickness", 8)
    return fdk_ct.Reconstructor(geo, grid, **kw)


def test_a_pusher_and_a_reader_thread_make_the_one_call_volume(small_scan):
    geo, proj, grid = small_scan
    ref = fdk_ct.reconstruct(proj, geo, grid, backend="cpu", threads=2, slab_thickness=8)
    out = np.full((48, 48, 48), np.nan, np.float32)
    seen = []
    with _rec(small_scan) as rec:
        assert rec.slab_count == 6 and rec.slab_planes(5) == (40, 48)

        def reader():  # started before the first push: waits for finish()
            for slab in rec.slabs():
                seen.append(slab.index)
                out[:, slab.y_begin:slab.y_end, :] = slab.data

        t = threading.Thread(target=reader)
        t.start()
        for i in range(geo.num_views):
            rec.push(i, proj[i])
        rec.finish()
        t.join(60)
        assert not t.is_alive()
    assert sorted(seen) == list(range(6))
    np.testing.assert_array_equal(out, ref)


def test_the_gil_is_released_during_native_calls(small_scan):
    # A Python thread counting while the main thread is inside fdk_read_slab:
    # with the GIL held the counter would not move.
    geo, proj, grid = small_scan
    with _rec(small_scan, slab_thickness=48, threads=1) as rec:
        for i in range(geo.num_views):
            rec.push(i, proj[i])
        rec.finish()
        ticks = [0]
        stop = threading.Event()

        def count():
            while not stop.is_set():
                ticks[0] += 1
        t = threading.Thread(target=count)
        t.start()
        time.sleep(0.01)
        before = ticks[0]
        start = time.perf_counter()
        rec.read_slab(0)
        took = time.perf_counter() - start
        during = ticks[0] - before
        stop.set()
        t.join()
    assert took > 0.02, "the read was too short to tell"
    assert during > 1000, (during, took)


def test_read_slab_into_a_reused_buffer(small_scan):
    geo, proj, grid = small_scan
    with _rec(small_scan) as rec:
        for i in range(geo.num_views):
            rec.push(i, proj[i])
        rec.finish()
        buf = np.empty(8 * 48 * 48, np.float32)
        a = rec.read_slab(2, out=buf).data.copy()
        b = rec.read_slab(2)
        np.testing.assert_array_equal(a, b.data)
        assert b.data.shape == (48, 8, 48) and (b.y_begin, b.y_end) == (16, 24)
        assert np.shares_memory(rec.read_slab(3, out=buf).data, buf)
        with pytest.raises(ValueError, match="needs"):
            rec.read_slab(0, out=np.empty(100, np.float32))
        with pytest.raises(TypeError):
            rec.read_slab(0, out=np.empty(8 * 48 * 48, np.float64))
        with pytest.raises(errors.OutOfRangeError):
            rec.read_slab(6)
        vol = rec.read_volume()
        np.testing.assert_array_equal(vol[:, 16:24, :], a)


def test_progress_reaches_a_callable_and_works_with_a_bar(small_scan):
    geo, proj, grid = small_scan
    events = []

    class Bar:  # what tqdm offers: total, n, refresh()
        total, n = 1.0, 0.0

        def refresh(self):
            events.append(self.n)

    bar = Bar()

    def update(p):
        bar.n = p.fraction
        bar.refresh()
    with _rec(small_scan, progress=update) as rec:
        for i in range(geo.num_views):
            rec.push(i, proj[i])
        rec.finish()
        for s in range(rec.slab_count):
            rec.read_slab(s)
        p = rec.progress
    assert len(events) >= geo.num_views + rec.slab_count
    assert events == sorted(events) and events[-1] == pytest.approx(1.0)
    assert p.phase == "done" and p.views_pushed == geo.num_views and p.slabs_done == 6


def test_an_exception_in_the_progress_callable_is_raised_after_the_call(small_scan):
    geo, proj, _ = small_scan

    def boom(p):
        if p.views_pushed == 3:
            raise KeyError("from the callback")
    with _rec(small_scan, progress=boom) as rec:
        for i in range(2):
            rec.push(i, proj[i])
        with pytest.raises(KeyError, match="from the callback"):
            rec.push(2, proj[2])
        assert rec.view_state(2)[0] in ("pending", "stored")  # the push itself happened
        rec.push(3, proj[3])
        assert rec.progress.views_pushed == 4


def test_close_from_the_progress_callable_is_refused(small_scan):
    geo, proj, _ = small_scan
    caught = []
    rec = _rec(small_scan)

    def cb(p):
        try:
            rec.close()
        except errors.InvalidStateError as e:
            caught.append(e)
    rec.set_progress(cb)
    rec.push(0, proj[0])
    assert caught and not rec.closed
    rec.close()


def test_cancel_from_another_thread(small_scan):
    geo, proj, _ = small_scan
    with _rec(small_scan) as rec:
        rec.push(0, proj[0])
        t = threading.Thread(target=rec.cancel)
        t.start()
        t.join()
        with pytest.raises(errors.CancelledError):
            rec.push(1, proj[1])
        assert rec.progress.phase == "cancelled"


def test_close_while_another_thread_is_inside_a_read(small_scan):
    geo, proj, _ = small_scan
    rec = _rec(small_scan, slab_thickness=48, threads=1)
    for i in range(geo.num_views):
        rec.push(i, proj[i])
    rec.finish()
    result = []

    def read():
        try:
            rec.read_slab(0)
            result.append("read")
        except errors.FdkError as e:
            result.append(type(e))
    t = threading.Thread(target=read)
    t.start()
    time.sleep(0.005)
    rec.close()
    t.join(30)
    assert result and result[0] in ("read", errors.CancelledError, errors.InvalidStateError)
    assert rec.closed
    with pytest.raises(errors.InvalidStateError, match="closed"):
        rec.read_slab(0)
    rec.close()  # idempotent


def test_views_may_come_in_any_order_and_fewer_than_announced(small_scan):
    geo, proj, grid = small_scan
    order = np.random.default_rng(1).permutation(geo.num_views)
    with _rec(small_scan) as rec:
        for i in order[:-1]:
            rec.push(int(i), proj[i])
        assert rec.view_state(int(order[-1])) == ("absent", 0)
        rec.finish()
        vol = rec.read_volume()
    assert np.isfinite(vol).all() and float(vol.max()) > 0.03


def test_measured_view_geometry_replaces_the_configured_one(small_scan):
    geo, proj, grid = small_scan
    ref = fdk_ct.reconstruct(proj, geo, grid, backend="cpu", threads=2, slab_thickness=8)
    with _rec(small_scan) as rec:
        for i in range(geo.num_views):
            same = fdk_ct.ViewGeometry(i * 3.0, 400.0, 600.0)
            rec.push(i, proj[i], geometry=same if i % 2 else None)
        rec.finish()
        np.testing.assert_allclose(rec.read_volume(), ref, atol=1e-6)
    with _rec(small_scan) as rec:
        for i in range(geo.num_views):
            shifted = fdk_ct.ViewGeometry(i * 3.0, 400.0, 600.0, projection_offset_x=5.0)
            rec.push(i, proj[i], geometry=shifted)
        rec.finish()
        assert np.abs(rec.read_volume() - ref).max() > 0.005


def test_close_races_with_calls_on_other_threads(small_scan):
    # Threads hammer the handle while it is closed: each call either works or
    # raises InvalidStateError / CancelledError; none touches a freed handle
    # (which would crash the process, not fail the test).
    geo, proj, grid = small_scan
    for _ in range(30):
        rec = _rec(small_scan)
        stop = threading.Event()
        odd = []

        def hammer():
            i = 0
            while not stop.is_set():
                try:
                    rec.progress
                    rec.view_state(i % geo.num_views)
                    rec.push(i % geo.num_views, proj[i % geo.num_views])
                except (errors.InvalidStateError, errors.CancelledError, errors.DuplicateError):
                    pass
                except Exception as e:  # noqa: BLE001
                    odd.append(e)
                i += 1
        threads = [threading.Thread(target=hammer) for _ in range(3)]
        for t in threads:
            t.start()
        time.sleep(0.002)
        rec.close()
        stop.set()
        for t in threads:
            t.join(30)
        assert not odd, odd
        assert rec.closed
