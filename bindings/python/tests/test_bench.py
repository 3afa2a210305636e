"""The Python bench (bindings/python/bench): its views are fdk-bench's, its
runs reconstruct them, and compare.py reads both benches' JSON."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))
from conftest import INSTALLED  # noqa: E402

if not INSTALLED:  # else the installed fdk_ct (conftest.py)
    sys.path.insert(0, str(BENCH.parent / "src"))

import compare  # noqa: E402
import synthetic  # noqa: E402

# From tools/fdk-bench/synthetic_projections.cpp built with g++ -O2: views 3
# and 7 of 10, 24 columns x 20 rows; (sum in double, pixels by index).
C_VIEWS = {
    3: (380.51788061857224, {0: "0x1.404102p-3", 173: "0x1.f111e2p-1",
                             252: "0x1.db7f74p+0", 479: "0x1.42696ap-3"}),
    7: (380.52957671880722, {0: "0x1.438ccp-3", 173: "0x1.22d70cp+0",
                             252: "0x1.e1ba18p+0", 479: "0x1.44b7p-3"}),
}


def test_hash_is_the_c_files():
    u32 = lambda v: np.array([[v]], dtype=np.uint32)  # noqa: E731
    assert synthetic.hash3(u32(0), u32(0), u32(0x9E3779B9))[0, 0] == 3427095566
    assert synthetic.hash3(u32(7), u32(511), u32(1023 ^ 0x9E3779B9))[0, 0] == 120156336
    assert synthetic.hash3(u32(1199), u32(1011), u32(0xFFFFFFFF))[0, 0] == 2206279984


@pytest.mark.parametrize("view", sorted(C_VIEWS))
def test_views_are_fdk_benchs(view):
    out = np.empty((20, 24), dtype=np.float32)
    synthetic.make_projection(view, 10, 24, 20, out)
    total, pixels = C_VIEWS[view]
    # numpy's exp may differ from glibc's by an ulp on another machine.
    assert float(out.sum(dtype=np.float64)) == pytest.approx(total, rel=1e-6)
    for index, hex_value in pixels.items():
        want = np.float32(float.fromhex(hex_value))
        assert abs(out.flat[index] - want) <= 2 * np.spacing(want)


def test_pool_holds_each_view_once():
    pool = synthetic.make_pool(3, 10, 24, 20)
    one = np.empty((20, 24), dtype=np.float32)
    synthetic.make_projection(2, 10, 24, 20, one)
    np.testing.assert_array_equal(pool[2], one)


@pytest.fixture
def fdk_bench():
    if not INSTALLED and not os.environ.get("FDK_CT_LIBRARY") and not (
            BENCH.parent / "src" / "fdk_ct" / "_lib" / "libfdk.so").exists():
        pytest.skip("FDK_CT_LIBRARY not set")
    import fdk_bench as module
    return module


@pytest.mark.parametrize("extra", [[], ["--push", "raw", "--pool-layout", "block"]])
def test_a_small_case_runs_both_figures(fdk_bench, tmp_path, extra):
    out = tmp_path / "py.json"
    assert fdk_bench.main(["--size", "16", "--views", "12", "--det", "16", "16",
                           "--backend", "cpu", "--repeats", "2", "--pool", "5",
                           "--json", str(out)] + extra) == 0
    doc = json.loads(out.read_text())
    s, r = doc["streaming"], doc["reconstruct"]
    assert len(s["runs_s"]["end_to_end"]) == 2 and len(r["runs_s"]) == 2
    assert s["volume_check"]["non_finite"] == 0
    # The streamed slabs and reconstruct()'s volume hold the same values.
    assert s["volume_check"]["mean"] == pytest.approx(r["volume_check"]["mean"], rel=1e-12)
    assert s["volume_check"]["max"] == r["volume_check"]["max"] > 0
    assert doc["pool"] == 5 and doc["push"] == (extra[1] if extra else "binding")


def test_compare_pools_runs_and_sets_python_against_c():
    c = {"runs_s": {"end_to_end": [1.0, 1.2, 1.1], "filter_store": [0.1, 0.1, 0.1],
                    "create": [0.2, 0.2, 0.2], "destroy": [0.05, 0.05, 0.05]}}
    py = {"streaming": {"runs_s": {"end_to_end": [1.03, 1.33, 1.13],
                                   "filter_store": [0.2, 0.2, 0.2]}},
          "reconstruct": {"runs_s": [2.0, 2.0, 2.0], "volume_faults_s": 0.5}}
    r = compare.row("x", [c, c], [py])
    assert r["runs_c"] == 6 and r["runs_py"] == 3
    assert r["c_end_to_end"] == pytest.approx(1.1)
    assert r["overhead_pct"] == pytest.approx(100 * (1.13 / 1.1 - 1))
    assert r["c_whole"] == pytest.approx(1.35)
