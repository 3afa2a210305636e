"""Shared helpers: an analytic phantom projected exactly in RTK's frame.

The line integrals are computed in closed form (chord lengths through
ellipsoids), independent of libfdk, so the tests measure against physics.
"""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pytest

# The sources (src/), as ctest runs the suite; with FDK_TEST_INSTALLED=1 the
# fdk_ct installed in this Python instead (scripts/python-source-install.sh:
# a pip install from source, run from a folder where src/ is not importable),
# with its own libfdk, so FDK_CT_LIBRARY must not be set.
SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "src"))
INSTALLED = os.environ.get("FDK_TEST_INSTALLED") == "1"
if INSTALLED:
    if os.environ.get("FDK_CT_LIBRARY"):
        raise RuntimeError("FDK_TEST_INSTALLED=1 tests the installed package's libfdk: "
                           "unset FDK_CT_LIBRARY")
else:
    sys.path.insert(0, SRC)

import fdk_ct  # noqa: E402

if INSTALLED and os.path.abspath(fdk_ct.__file__).startswith(SRC + os.sep):
    raise RuntimeError(f"FDK_TEST_INSTALLED=1, yet fdk_ct comes from the sources "
                       f"({fdk_ct.__file__}): run pytest from outside bindings/python")


@dataclass(frozen=True)
class Ellipsoid:
    centre: Sequence[float]   # (x, y, z) physical, RTK's frame
    axes: Sequence[float]     # semi-axes along x, y, z
    mu: float                 # attenuation added inside


# A large soft sphere, and two small dense ones placed asymmetrically in x, y
# and z, so that a mirrored or transposed volume puts them in the wrong voxels.
PHANTOM = (
    Ellipsoid((0.0, 0.0, 0.0), (22.0, 18.0, 22.0), 0.02),
    Ellipsoid((10.0, 6.0, -4.0), (4.0, 4.0, 4.0), 0.03),
    Ellipsoid((-6.0, -8.0, 9.0), (3.5, 3.5, 3.5), 0.015),
)


def project(geometry: "fdk_ct.Geometry", phantom=PHANTOM) -> np.ndarray:
    """(views, rows, cols) float32 line integrals of `phantom` for a circular
    geometry without offsets or tilts (RTK: the source of gantry angle t is
    at (SID sin t, 0, SID cos t); detector point (u, v) at
    rot^T (u, v, SID - SDD) with rot^T the rotation by t about y)."""
    assert geometry.kind == "circular" and geometry.detector_shape is not None
    rows, cols = geometry.detector_shape
    sv, su = geometry.detector_spacing
    ov, ou = geometry.resolved_detector_origin()
    u = ou + su * np.arange(cols)
    v = ov + sv * np.arange(rows)
    uu, vv = np.meshgrid(u, v)
    sid, sdd = geometry.uniform.sid, geometry.uniform.sdd
    out = np.empty((geometry.num_views, rows, cols), dtype=np.float32)
    for i in range(geometry.num_views):
        t = np.radians(geometry.first_angle_deg + i * geometry.arc_deg / geometry.num_views)
        c, s = np.cos(t), np.sin(t)
        src = np.array([sid * s, 0.0, sid * c])
        zd = sid - sdd
        det = np.stack([c * uu + s * zd, vv, -s * uu + c * zd], axis=-1)
        d = det - src
        total = np.zeros((rows, cols))
        for e in phantom:
            a = np.asarray(e.axes, dtype=float)
            o = (src - np.asarray(e.centre, dtype=float)) / a
            dd = d / a
            # |o + t dd|^2 = 1: chord in t times the ray's length
            qa = np.einsum("...k,...k", dd, dd)
            qb = 2 * np.einsum("...k,k", dd, o)
            qc = o @ o - 1
            disc = qb * qb - 4 * qa * qc
            dt = np.sqrt(np.maximum(disc, 0)) / qa
            total += e.mu * dt * np.linalg.norm(d, axis=-1)
        out[i] = total
    return out


def voxel_of(volume: "fdk_ct.Volume", x: float, y: float, z: float):
    """The (z, y, x) index of the voxel nearest a physical point."""
    idx = []
    for axis, p in ((0, z), (1, y), (2, x)):
        idx.append(int(round((p - volume.origin[axis]) / volume.spacing[axis])))
    return tuple(idx)


@pytest.fixture(scope="session")
def small_scan():
    """A 120-view full scan of PHANTOM on a 80 x 96 detector and its 48^3 grid."""
    geo = fdk_ct.Geometry.circular(120, sid=400.0, sdd=600.0, detector_spacing=1.0,
                                   detector_shape=(80, 96))
    return geo, project(geo), fdk_ct.Volume((48, 48, 48), 1.25)


@pytest.fixture(scope="session")
def layout_facts():
    """fdk.h as the C compiler lays it out (bindings/csharp/tests/native/
    fdk_layout.c, run from FDK_LAYOUT_DUMP): (sizes by struct, offsets by
    (struct, field), enum values by name)."""
    tool = os.environ.get("FDK_LAYOUT_DUMP")
    if not tool:
        pytest.skip("FDK_LAYOUT_DUMP not set (ctest sets it)")
    out = subprocess.run([tool], check=True, capture_output=True, text=True).stdout
    sizes, offsets, enums = {}, {}, {}
    for line in out.splitlines():
        kind, *rest = line.split()
        if kind == "sizeof":
            sizes[rest[0]] = int(rest[1])
        elif kind == "offsetof":
            offsets[(rest[0], rest[1])] = int(rest[2])
        elif kind == "enum":
            enums[rest[0]] = int(rest[1])
    assert len(sizes) >= 12 and len(offsets) > 80
    return sizes, offsets, enums


def pytest_sessionfinish(session, exitstatus):
    """Exit 77 when every test of the run was skipped (none failed, none
    passed), so that ctest reports the file as skipped (SKIP_RETURN_CODE)
    from the outcome itself, never from words in the output."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    stats = reporter.stats if reporter is not None else {}
    if exitstatus == 0 and stats.get("skipped") and not stats.get("passed"):
        session.exitstatus = 77
