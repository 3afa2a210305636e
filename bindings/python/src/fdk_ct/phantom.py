"""Analytic ellipsoid phantoms and their exact cone-beam line integrals.

For trying fdk_ct without a scanner, and for checking a reconstruction
against known attenuation values. Pure numpy, independent of libfdk: the
same conventions as the C library's test phantom (RTK's frame: rotation axis
y; a view's source at ``R (sox, soy, SID)`` and pixel ``(u, v)`` at
``R (u + pox, v + poy, SID - SDD)`` with ``R = Ry(gantry) Rx(out of plane)
Rz(in plane)``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import numpy as np

from ._checks import check_float, check_floats
from ._rotations import rx as _rx, ry as _ry, rz as _rz
from .geometry import Geometry, Volume


@dataclass(frozen=True)
class Ellipsoid:
    """An ellipsoid of constant attenuation added to what lies beneath.

    ``centre`` and ``semi_axes`` are (x, y, z) in the geometry's length unit;
    ``angle_deg`` turns it about the y axis (the rotation axis);
    ``density`` is the attenuation added inside, in 1/unit.

    Every value must be finite and each semi-axis > 0 (ValueError naming
    it): a zero axis divides by zero and fills the projections with NaN.
    """

    centre: Tuple[float, float, float]
    semi_axes: Tuple[float, float, float]
    density: float
    angle_deg: float = 0.0

    def __post_init__(self) -> None:
        checked = {
            "centre": check_floats(self.centre, "ellipsoid centre", 3, "xyz"),
            "semi_axes": check_floats(self.semi_axes, "ellipsoid semi_axes", 3, "xyz",
                                      positive=True),
            "density": check_float(self.density, "ellipsoid density"),
            "angle_deg": check_float(self.angle_deg, "ellipsoid angle_deg")}
        for name, value in checked.items():
            object.__setattr__(self, name, value)


# Kak & Slaney's 3-D table (semi-axes A, B, C; centre x, y, z; angle about
# their z, the head axis), with Toft's higher-contrast densities.
_KAK_SLANEY = (
    (0.6900, 0.920, 0.900, 0.00, 0.000, 0.000, 0.0, 1.0),
    (0.6624, 0.874, 0.880, 0.00, 0.000, 0.000, 0.0, -0.8),
    (0.4100, 0.160, 0.210, -0.22, 0.000, -0.250, 108.0, -0.2),
    (0.3100, 0.110, 0.220, 0.22, 0.000, -0.250, 72.0, -0.2),
    (0.2100, 0.250, 0.500, 0.00, 0.350, -0.250, 0.0, 0.1),
    (0.0460, 0.046, 0.046, 0.00, 0.100, -0.250, 0.0, 0.1),
    (0.0460, 0.023, 0.020, -0.08, -0.650, -0.250, 0.0, 0.1),
    (0.0460, 0.023, 0.020, 0.06, -0.650, -0.250, 90.0, 0.1),
    (0.0560, 0.040, 0.100, 0.06, -0.105, 0.625, 90.0, 0.1),
    (0.0560, 0.056, 0.100, 0.00, 0.100, 0.625, 0.0, 0.1),
)


def modified_shepp_logan(scale: float = 1.0, mu: float = 1.0) -> List[Ellipsoid]:
    """The 3-D modified (high-contrast) Shepp-Logan head, its axis along y.

    ``scale`` is the half-height of the head (its largest semi-axis is
    0.92 * scale); ``mu`` multiplies the densities (skull 1, brain 0.2).
    Kak & Slaney's (x, y, z) becomes (x, z, -y) here, so the head's axis is
    the rotation axis, as in fdk's C test phantom.

    ``scale`` must be finite and > 0 (a negative one mirrors the head, zero
    makes every ellipsoid flat and the projections NaN); ``mu`` finite and
    >= 0 (a negative one makes every line integral negative).
    """
    scale = check_float(scale, "scale", positive=True)
    mu = check_float(mu, "mu", non_negative=True)
    out = []
    for a, b, c, x, y, z, angle, rho in _KAK_SLANEY:
        out.append(Ellipsoid((x * scale, z * scale, -y * scale + 0.0),
                             (a * scale, c * scale, b * scale), rho * mu, angle))
    return out


def project(geometry: Geometry, ellipsoids: Sequence[Ellipsoid],
            detector_shape: Optional[Tuple[int, int]] = None) -> np.ndarray:
    """Exact line integrals of ``ellipsoids`` for every view of ``geometry``.

    Returns a ``(views, rows, cols)`` float32 array (``-log(I/I0)`` of an
    ideal scan), ready for :func:`fdk_ct.reconstruct`.
    """
    if not isinstance(geometry, Geometry):
        raise TypeError(f"geometry must be an fdk_ct.Geometry, got {type(geometry).__name__}")
    ellipsoids = _ellipsoids(ellipsoids)
    if detector_shape is not None:
        geometry = geometry.with_detector_shape(detector_shape)
    if geometry.detector_shape is None:
        raise ValueError("the detector's shape is not known: give detector_shape")
    rows, cols = geometry.detector_shape
    sv, su = geometry.detector_spacing
    ov, ou = geometry.resolved_detector_origin()
    uu, vv = np.meshgrid(ou + su * np.arange(cols), ov + sv * np.arange(rows))
    table = geometry.view_parameters()
    out = np.empty((table.shape[0], rows, cols), dtype=np.float32)
    for i, (g, sid, sdd, sox, soy, pox, poy, ip, oop) in enumerate(table):
        rot = _ry(np.radians(g)) @ _rx(np.radians(oop)) @ _rz(np.radians(ip))
        src = rot @ np.array([sox, soy, sid])
        pix = np.stack([uu + pox, vv + poy, np.full_like(uu, sid - sdd)], -1) @ rot.T
        ray = pix - src
        length = np.linalg.norm(ray, axis=-1)
        total = np.zeros((rows, cols))
        for e in ellipsoids:
            turn = _ry(np.radians(-e.angle_deg))
            axes = np.asarray(e.semi_axes, dtype=float)
            o = (turn @ (src - np.asarray(e.centre, dtype=float))) / axes
            d = (ray @ turn.T) / axes
            a = np.einsum("...k,...k", d, d)
            t0 = -(d @ o) / a
            closest = o + t0[..., None] * d
            r2 = 1.0 - np.einsum("...k,...k", closest, closest)
            half = np.sqrt(np.maximum(r2, 0.0) / a)
            # The chord within the segment from the source to the pixel.
            t1 = np.maximum(t0 - half, 0.0)
            t2 = np.minimum(t0 + half, 1.0)
            total += e.density * np.maximum(t2 - t1, 0.0) * length
        out[i] = total
    return out


def density_at(ellipsoids: Sequence[Ellipsoid], x: np.ndarray, y: np.ndarray,
               z: np.ndarray) -> np.ndarray:
    """The phantom's attenuation at physical points (broadcast arrays)."""
    ellipsoids = _ellipsoids(ellipsoids)
    x, y, z = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (x, y, z)))
    total = np.zeros(x.shape)
    for e in ellipsoids:
        a = np.radians(e.angle_deg)
        dx, dy, dz = x - e.centre[0], y - e.centre[1], z - e.centre[2]
        # Ry(angle)^T applied to the offset: the ellipsoid's own axes.
        lx = np.cos(a) * dx - np.sin(a) * dz
        lz = np.sin(a) * dx + np.cos(a) * dz
        inside = (lx / e.semi_axes[0]) ** 2 + (dy / e.semi_axes[1]) ** 2 \
            + (lz / e.semi_axes[2]) ** 2 <= 1.0
        total += np.where(inside, e.density, 0.0)
    return total


def voxelize(ellipsoids: Sequence[Ellipsoid], volume: "Volume") -> np.ndarray:
    """The phantom sampled at the voxel centres of ``volume``: (z, y, x) float32."""
    if not isinstance(volume, Volume):
        raise TypeError(f"volume must be an fdk_ct.Volume, got {type(volume).__name__}")
    z, y, x = np.meshgrid(volume.coordinates(0), volume.coordinates(1),
                          volume.coordinates(2), indexing="ij")
    return density_at(ellipsoids, x, y, z).astype(np.float32)


def _ellipsoids(ellipsoids: Sequence[Ellipsoid]) -> List[Ellipsoid]:
    """A list of Ellipsoids (each checked when it was made)."""
    if isinstance(ellipsoids, Ellipsoid):
        raise TypeError("ellipsoids must be a sequence of Ellipsoid (a list of one, not one)")
    out = list(ellipsoids)
    for i, e in enumerate(out):
        if not isinstance(e, Ellipsoid):
            raise TypeError(f"ellipsoids[{i}] must be a phantom.Ellipsoid, got "
                            f"{type(e).__name__}")
    return out
