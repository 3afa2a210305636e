"""TIGRE's cone-beam geometry object in RTK's frame.

What this module relies on (TIGRE's CUDA projector, Common/CUDA/
Siddon_projection.cu: ``computeDeltas_Siddon``, ``kernelPixelDetector``,
``eulerZYZ``, ``rollPitchYaw``; its Python demo d01 for the axis orders)
-------------------------------------------------------------------------
* the rotation axis is z; before rotation the source is at ``(DSO, 0, 0)``
  and the detector's centre at ``(-(DSD - DSO), offU, offV)``;
* detector pixel ``(v, u)`` of the Python projection array
  ``(angles, nV, nU)`` (u fastest) sits at ``y = dU (u - nU/2 + 1/2)``,
  ``z = dV (v - nV/2 + 1/2)`` on the unrotated detector (the kernel reads
  row ``nV - 1 - v`` from the top), after the detector's own rotation
  ``rollPitchYaw = Rz(roll) Ry(pitch) Rx(yaw)`` about its centre
  (``rotDetector = (roll, pitch, yaw)``) and before its offset;
* each view then turns by ``eulerZYZ = Rz(alpha) Ry(theta) Rz(psi)``, with
  ``angles`` either ``alpha`` per view or ``(alpha, theta, psi)`` rows, in
  radians;
* ``COR`` moves source and detector by ``COR`` along the rotated y axis;
* the image is centred at ``offOrigin``; its voxel ``(z, y, x)`` index
  ``i`` has its centre at ``-s/2 + d/2 + i d + offOrigin`` along each axis;
* Python's ``nVoxel``, ``dVoxel``, ``sVoxel`` and ``offOrigin`` are in
  ``(z, y, x)`` order, ``nDetector``, ``dDetector`` and ``offDetector`` in
  ``(v, u)`` order; arrays are ``(z, y, x)`` images and
  ``(angles, v, u)`` projections.

The mapping
-----------
RTK's frame from TIGRE's is the cyclic permutation (a proper rotation) ::

    x_rtk = y_tigre,   y_rtk = z_tigre,   z_rtk = x_tigre

It takes TIGRE's axis z to RTK's y, TIGRE's source at angle 0 (on +x) to
RTK's (on +z), TIGRE's u (+y) and v (+z) to RTK's u (+x) and v (+y), and
TIGRE's angle ``alpha`` radians to RTK's gantry angle ``alpha`` in degrees.
Hence TIGRE's projection array is fdk's as it is, ``(views, rows, cols)``,
and the volume: fdk's ``(z, y, x)`` is TIGRE's ``(x, z, y)``; TIGRE's image is
``np.transpose(fdk_volume, (1, 2, 0))`` (:func:`volume_to_tigre`).

Not supported (ValueError): ``mode`` other than ``"cone"`` (TIGRE's
parallel beam), a detector pitch that changes between views. Per-view
arrays (DSO, DSD, offDetector, offOrigin, rotDetector, COR, angles with
three Euler angles) are supported; with a per-view ``offOrigin`` the
volume is placed at the first view's and the scanner moves relative to it.
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from .._checks import INT32_MAX, check_int
from .._rotations import rx as _rx, ry as _ry, rz as _rz
from ..geometry import Geometry, Volume
from ._vectors import check_finite, geometry_from_vectors, per_view

# Rows are RTK's x, y, z in TIGRE's coordinates: a cyclic permutation (det +1).
TIGRE_TO_RTK = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])


def _get(geo: Any, name: str, default: Any = None) -> Any:
    value = getattr(geo, name, default)
    if value is None and default is None:
        raise ValueError(f"the TIGRE geometry has no {name}")
    return value


def _optional(geo: Any, name: str, default: Any) -> Any:
    value = getattr(geo, name, None)
    return default if value is None else value


def from_tigre(geo: Any, angles: Optional[Any] = None) -> Tuple[Geometry, Volume]:
    """An fdk geometry and volume from a TIGRE geometry object.

    Parameters
    ----------
    geo : object
        Anything with TIGRE's attributes (``tigre.geometry(...)``, or a
        ``SimpleNamespace``): ``DSD``, ``DSO``, ``nDetector``,
        ``dDetector``, ``nVoxel``, ``dVoxel`` (or ``sVoxel``), and optionally
        ``offOrigin``, ``offDetector``, ``rotDetector``, ``COR``, ``mode``
        and ``angles``.
    angles : array_like, optional
        Radians: one per view, or ``(views, 3)`` Euler angles
        ``(alpha, theta, psi)``; default ``geo.angles``.

    Returns
    -------
    (Geometry, Volume)
        A matrix geometry in RTK's frame (centred detector, pitch
        ``dDetector``) for TIGRE's ``(angles, v, u)`` projections as they
        are, and TIGRE's image grid as an fdk volume; turn the result into
        TIGRE's ``(z, y, x)`` image with :func:`volume_to_tigre`.
    """
    mode = str(getattr(geo, "mode", "cone") or "cone").lower()
    if mode != "cone":
        raise ValueError(f"TIGRE mode {mode!r} is not supported (cone beam only)")
    a = np.asarray(_get(geo, "angles") if angles is None else angles, dtype=np.float64)
    if a.ndim == 1 or (a.ndim == 2 and a.shape[1] == 1):
        a = np.stack([a.reshape(-1), np.zeros(a.size), np.zeros(a.size)], axis=1)
    if a.ndim != 2 or a.shape[1] != 3 or a.shape[0] == 0:
        raise ValueError(f"angles must be (views,) or (views, 3) radians, got shape {a.shape}")
    check_finite("angles", a)
    n = a.shape[0]
    dso = per_view(_get(geo, "DSO"), n, 1, "DSO")[:, 0]
    dsd = per_view(_get(geo, "DSD"), n, 1, "DSD")[:, 0]
    n_det = np.asarray(_get(geo, "nDetector")).reshape(-1)
    d_det = np.asarray(_get(geo, "dDetector"), dtype=np.float64).reshape(-1)
    if n_det.size != 2 or d_det.size != 2:
        raise ValueError("nDetector and dDetector must hold (v, u)")
    off_det = per_view(_optional(geo, "offDetector", (0.0, 0.0)), n, 2, "offDetector")
    rot_det = per_view(_optional(geo, "rotDetector", (0.0, 0.0, 0.0)), n, 3, "rotDetector")
    off_orig = per_view(_optional(geo, "offOrigin", (0.0, 0.0, 0.0)), n, 3, "offOrigin")
    cor = per_view(_optional(geo, "COR", 0.0), n, 1, "COR")[:, 0]
    for name, arr in (("DSO", dso), ("DSD", dsd), ("dDetector", d_det), ("offDetector", off_det),
                      ("rotDetector", rot_det), ("offOrigin", off_orig), ("COR", cor)):
        check_finite(name, arr)
    if np.any(dso <= 0) or np.any(dsd <= dso):
        raise ValueError("TIGRE geometry needs 0 < DSO < DSD in every view")

    # Unrotated frame: detector axes after rollPitchYaw, centre after offset.
    rpy = _rz(rot_det[:, 0]) @ _ry(rot_det[:, 1]) @ _rx(rot_det[:, 2])
    u0 = rpy @ np.array([0.0, d_det[1], 0.0])
    v0 = rpy @ np.array([0.0, 0.0, d_det[0]])
    centre0 = np.stack([-(dsd - dso), off_det[:, 1], off_det[:, 0]], axis=1)
    source0 = np.stack([dso, np.zeros(n), np.zeros(n)], axis=1)
    euler = _rz(a[:, 0]) @ _ry(a[:, 1]) @ _rz(a[:, 2])
    shift = np.stack([-cor * np.sin(a[:, 0]), cor * np.cos(a[:, 0]), np.zeros(n)], axis=1)
    # The image at offOrigin[0]: later views' own offsets move the scanner instead.
    moved = off_orig - off_orig[0]
    moved_xyz = moved[:, ::-1]
    source = np.einsum("nij,nj->ni", euler, source0) + shift - moved_xyz
    centre = np.einsum("nij,nj->ni", euler, centre0) + shift - moved_xyz
    u = np.einsum("nij,nj->ni", euler, u0)
    v = np.einsum("nij,nj->ni", euler, v0)
    to_rtk = TIGRE_TO_RTK.T
    geometry = geometry_from_vectors(source @ to_rtk, centre @ to_rtk, u @ to_rtk, v @ to_rtk,
                                     check_int(n_det[0], "nDetector[0]", 1, INT32_MAX),
                                     check_int(n_det[1], "nDetector[1]", 1, INT32_MAX),
                                     "TIGRE geometry")
    return geometry, volume_from_tigre(geo, off_orig[0])


def volume_from_tigre(geo: Any, off_origin: Optional[np.ndarray] = None) -> Volume:
    """The fdk :class:`~fdk_ct.Volume` (RTK's frame) of TIGRE's image grid."""
    # Element by element: astype(int) would turn 2.5 into 2 and 2**64 into garbage.
    counts = np.asarray(_get(geo, "nVoxel"), dtype=object).reshape(-1)  # (z, y, x)
    if counts.size != 3:
        raise ValueError(f"nVoxel must be three positive counts (z, y, x), got {counts.tolist()}")
    nv = np.array([check_int(n, f"nVoxel[{i}]", 1, INT32_MAX) for i, n in enumerate(counts)])
    d = getattr(geo, "dVoxel", None)
    if d is None:
        d = np.asarray(_get(geo, "sVoxel"), dtype=np.float64) / nv
    d = np.asarray(d, dtype=np.float64).reshape(-1)
    if off_origin is None:
        off_origin = np.asarray(_optional(geo, "offOrigin", (0.0, 0.0, 0.0)),
                                dtype=np.float64).reshape(-1, 3)[0]
    first = -(nv * d) / 2 + d / 2 + off_origin  # TIGRE's (z, y, x)
    z, y, x = 0, 1, 2
    # fdk's (z, y, x) = TIGRE's (x, z, y)
    return Volume((nv[x], nv[z], nv[y]), (d[x], d[z], d[y]), (first[x], first[z], first[y]))


def volume_to_tigre(volume: Any) -> np.ndarray:
    """An fdk ``(z, y, x)`` volume reconstructed on :func:`volume_from_tigre`'s
    grid as TIGRE's ``(z, y, x)`` image (a view, no copy)."""
    v = np.asarray(volume)
    if v.ndim != 3:
        raise ValueError(f"a volume must be 3-D, got {v.shape}")
    return np.transpose(v, (1, 2, 0))


__all__ = ["from_tigre", "volume_from_tigre", "volume_to_tigre", "TIGRE_TO_RTK"]
