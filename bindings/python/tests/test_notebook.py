"""Notebook use: progress=tqdm (class or bar), and what a cell shows of a volume.

FakeTqdm has tqdm's surface that fdk_ct relies on (a class taking total=,
unit=, desc=; n, total, refresh(), update(), close()) and records what it was
told, so the adapter is tested without tqdm; the real tqdm is tested too when
installed (Debian: python3-tqdm)."""
import io
import re

import numpy as np
import pytest

import fdk_ct


class FakeTqdm:
    made = []

    def __init__(self, iterable=None, total=None, unit="it", desc=None, **kw):
        assert iterable is None  # one bar for the whole reconstruction, not per call
        self.total, self.n, self.unit, self.desc = total, 0, unit, desc
        self.shown, self.closed = [], False
        FakeTqdm.made.append(self)

    def refresh(self):
        assert not self.closed
        self.shown.append(self.n)

    def update(self, k=1):
        raise AssertionError("positions are set, never incremented")

    def close(self):
        self.closed = True


@pytest.fixture(autouse=True)
def _no_bars_yet():
    FakeTqdm.made.clear()


def _run(small_scan, progress, **kw):
    geo, proj, grid = small_scan
    return fdk_ct.reconstruct(proj, geo, grid, backend="cpu", threads=2, slab_thickness=8,
                              progress=progress, **kw)


def test_a_tqdm_class_makes_one_percent_bar_closed_with_the_call(small_scan):
    _run(small_scan, FakeTqdm)
    assert len(FakeTqdm.made) == 1
    bar = FakeTqdm.made[0]
    assert (bar.total, bar.unit) == (100, "%") and bar.closed
    assert len(bar.shown) >= small_scan[0].num_views  # at least once a view
    assert bar.shown == sorted(bar.shown) and bar.shown[-1] == 100
    assert all(isinstance(n, int) for n in bar.shown)  # "45/100", not "45.3125/100"


def test_a_bar_instance_is_moved_to_the_fraction_and_left_open(small_scan):
    bar = FakeTqdm(total=1.0)
    _run(small_scan, bar)
    assert len(FakeTqdm.made) == 1 and not bar.closed  # its owner closes it
    assert bar.shown == sorted(bar.shown) and bar.shown[-1] == pytest.approx(1.0)
    assert 0.0 < bar.shown[0] < 1.0

    untotalled = FakeTqdm()  # tqdm() without a total: given 100
    _run(small_scan, untotalled)
    assert untotalled.total == 100 and untotalled.shown[-1] == 100


def test_the_class_bar_is_closed_when_the_call_fails(small_scan):
    geo, proj, grid = small_scan
    bad = proj.copy()
    bad[3, 10, 10] = np.nan
    with pytest.raises(fdk_ct.errors.InvalidArgumentError):
        fdk_ct.reconstruct(bad, geo, grid, backend="cpu", progress=FakeTqdm)
    assert len(FakeTqdm.made) == 1 and FakeTqdm.made[0].closed


def test_replacing_the_progress_closes_the_bar_made_from_a_class(small_scan):
    geo, _, grid = small_scan
    with fdk_ct.Reconstructor(geo, grid, backend="cpu", progress=FakeTqdm) as rec:
        first = FakeTqdm.made[0]
        assert not first.closed
        rec.set_progress(None)
        assert first.closed
        rec.set_progress(FakeTqdm)
        second = FakeTqdm.made[1]
    assert second.closed


def test_a_plain_callable_still_receives_progress_and_other_objects_are_refused(small_scan):
    seen = []
    _run(small_scan, lambda p: seen.append(p.fraction))
    assert seen and seen[-1] == pytest.approx(1.0)
    geo, _, grid = small_scan
    with pytest.raises(TypeError, match="tqdm"):
        fdk_ct.Reconstructor(geo, grid, backend="cpu", progress=42)


def test_real_tqdm_bar_and_class(small_scan, capsys):
    tqdm = pytest.importorskip("tqdm")
    out = io.StringIO()
    bar = tqdm.tqdm(total=100, file=out, mininterval=0)
    _run(small_scan, bar)
    bar.close()
    assert "100/100" in out.getvalue()

    import tqdm.auto  # the notebook's choice: tqdm.std outside Jupyter
    _run(small_scan, tqdm.auto.tqdm)
    err = capsys.readouterr().err
    assert re.search(r"fdk: 100%.*100/100", err), err


def test_the_repr_of_a_volume_shows_its_grid(small_scan):
    vol = _run(small_scan, None)
    text = repr(vol)
    assert text == ("VolumeArray(shape=(48, 48, 48), spacing=(1.25, 1.25, 1.25), "
                    "origin=(-29.375, -29.375, -29.375), dtype=float32)")
    # A slice has no grid: numpy's own repr, with the values.
    assert repr(vol[24]).startswith("VolumeArray([[")
