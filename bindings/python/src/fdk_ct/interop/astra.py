"""ASTRA Toolbox's cone-beam geometries (``cone_vec``, ``cone``) in RTK's frame.

What ASTRA documents, and this module relies on
------------------------------------------------
From ASTRA's "3D Geometries" page (astra-toolbox.com/docs/geom3d.html) and
``astra.geom_2vec`` (python/astra/functions.py):

* ``cone_vec`` holds 12 numbers per view: the source ``src``, the centre of
  the detector ``d``, ``u`` the vector from detector pixel (0,0) to (0,1)
  (the next column) and ``v`` from (0,0) to (1,0) (the next row);
* ``cone`` with angle ``a`` is the same as ``cone_vec`` with
  ``src = (sin a DSO, -cos a DSO, 0)``, ``d = (-sin a ODD, cos a ODD, 0)``,
  ``u = (cos a, sin a, 0) sx``, ``v = (0, 0, sy)``: the rotation axis is z;
* projection data are ``(det_row_count, n_angles, det_col_count)`` in
  Python, volumes ``(n_slices, n_rows, n_cols)`` = ``(z, y, x)``, with
  ``create_vol_geom(n_rows, n_cols, n_slices, min_x, max_x, min_y, max_y,
  min_z, max_z)`` (ASTRA's "3D Data Objects" page);
* the CUDA 3D code shifts the volume's window centre to the origin and
  scales voxels to 1 (``convertAstraGeometry_internal``), so voxel
  ``(iz, iy, ix)`` has its centre at ``min + (i + 1/2) * voxel`` along each
  axis.

The mapping
-----------
RTK's frame from ASTRA's is the proper rotation ::

    x_rtk = x_astra,   y_rtk = z_astra,   z_rtk = -y_astra

It takes ASTRA's rotation axis z to RTK's y, ASTRA's source at angle 0
(on -y) to RTK's (on +z), and ASTRA's ``cone`` at angle ``a`` radians to RTK's
gantry angle ``a`` in degrees, with ASTRA's ``u`` and ``v`` on RTK's ``u``
and ``v``: pixel columns and rows keep their order. Hence:

* projections: ``np.moveaxis(astra_projections, 1, 0)`` gives fdk's
  ``(views, rows, cols)`` (:func:`projections_from_astra`);
* the volume: fdk's ``(z, y, x)`` is ASTRA's ``(-y, z, x)``; ASTRA's array is
  ``np.transpose(fdk_volume, (1, 0, 2))[:, ::-1, :]``
  (:func:`volume_to_astra`); :func:`from_cone_vec` returns the fdk
  :class:`~fdk_ct.Volume` that covers ASTRA's volume geometry voxel for voxel.

Lengths keep ASTRA's unit (its voxel size, 1 by default); the volume comes
out in 1/unit, as from any fdk geometry. Not supported: parallel-beam
geometries (``parallel3d``, ``parallel3d_vec``), a pixel pitch that changes
between views, skewed detectors, and a detector mirrored relative to RTK's
(``u x v`` pointing away from the source), which raise ValueError.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence, Tuple

import numpy as np

from .._checks import INT32_MAX, check_float, check_int
from ..geometry import Geometry, Volume
from ._vectors import check_finite, geometry_from_vectors

# Rows are RTK's x, y, z in ASTRA's coordinates: a proper rotation (det +1).
ASTRA_TO_RTK = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])


def from_cone_vec(vectors: Any, det_row_count: int, det_col_count: int,
                  volume_geometry: Optional[Mapping[str, Any]] = None
                  ) -> Tuple[Geometry, Optional[Volume]]:
    """An fdk geometry (and volume) from ASTRA's ``cone_vec`` description.

    Parameters
    ----------
    vectors : array_like, shape (views, 12)
        ASTRA's rows ``(srcX, srcY, srcZ, dX, dY, dZ, uX, uY, uZ, vX, vY, vZ)``.
    det_row_count, det_col_count : int
        Detector rows and columns.
    volume_geometry : dict, optional
        ASTRA's volume geometry (``astra.create_vol_geom(...)``: keys
        ``GridRowCount``, ``GridColCount``, ``GridSliceCount`` and
        ``option`` with ``WindowMinX`` ... ``WindowMaxZ``).

    Returns
    -------
    (Geometry, Volume or None)
        A matrix geometry in RTK's frame with a centred detector of pitch
        ``(|v|, |u|)``, and the fdk volume equal to ASTRA's grid (None when
        no volume geometry was given). Reconstruct from
        ``projections_from_astra(p)`` and turn the result back with
        :func:`volume_to_astra`.
    """
    vec = np.asarray(vectors, dtype=np.float64)
    if vec.ndim != 2 or vec.shape[1] != 12 or vec.shape[0] == 0:
        raise ValueError(f"cone_vec vectors must have shape (views, 12), got {vec.shape}")
    check_finite("cone_vec vectors", vec)
    rows = check_int(det_row_count, "det_row_count", 1, INT32_MAX)
    cols = check_int(det_col_count, "det_col_count", 1, INT32_MAX)
    parts = [vec[:, 3 * k:3 * k + 3] @ ASTRA_TO_RTK.T for k in range(4)]
    geometry = geometry_from_vectors(parts[0], parts[1], parts[2], parts[3], rows, cols,
                                     "ASTRA cone_vec")
    volume = None if volume_geometry is None else volume_from_astra(volume_geometry)
    return geometry, volume


def from_cone(det_spacing_x: float, det_spacing_y: float, det_row_count: int,
              det_col_count: int, angles: Any, source_origin: float, origin_det: float,
              volume_geometry: Optional[Mapping[str, Any]] = None
              ) -> Tuple[Geometry, Optional[Volume]]:
    """ASTRA's circular ``cone`` geometry (``astra.create_proj_geom('cone', ...)``
    arguments, angles in radians) as RTK's circular parameters: gantry angle
    ``degrees(a)``, SID ``source_origin``, SDD ``source_origin + origin_det``."""
    a = np.atleast_1d(np.asarray(angles, dtype=np.float64))
    check_finite("angles", a)
    source = check_float(source_origin, "source_origin")
    detector = check_float(origin_det, "origin_det")
    geometry = Geometry.from_views(np.degrees(a), source, source + detector,
                                   (check_float(det_spacing_y, "det_spacing_y"),
                                    check_float(det_spacing_x, "det_spacing_x")),
                                   detector_shape=(
                                       check_int(det_row_count, "det_row_count", 1, INT32_MAX),
                                       check_int(det_col_count, "det_col_count", 1, INT32_MAX)))
    volume = None if volume_geometry is None else volume_from_astra(volume_geometry)
    return geometry, volume


def cone_to_cone_vec(det_spacing_x: float, det_spacing_y: float, angles: Any,
                     source_origin: float, origin_det: float) -> np.ndarray:
    """ASTRA's documented conversion of ``cone`` to ``cone_vec`` rows (as
    ``astra.geom_2vec``), for scans described by their circular parameters."""
    a = np.atleast_1d(np.asarray(angles, dtype=np.float64))
    s, c = np.sin(a), np.cos(a)
    z = np.zeros_like(a)
    return np.stack([s * source_origin, -c * source_origin, z,
                     -s * origin_det, c * origin_det, z,
                     c * det_spacing_x, s * det_spacing_x, z,
                     z, z, z + det_spacing_y], axis=1)


def volume_from_astra(volume_geometry: Mapping[str, Any]) -> Volume:
    """The fdk :class:`~fdk_ct.Volume` (RTK's frame) of an ASTRA volume geometry."""
    try:
        counts = [volume_geometry[k] for k in ("GridRowCount", "GridColCount", "GridSliceCount")]
        opt = volume_geometry["option"]
        window = [opt[k] for k in ("WindowMinX", "WindowMinY", "WindowMinZ",
                                   "WindowMaxX", "WindowMaxY", "WindowMaxZ")]
    except (KeyError, TypeError) as e:
        raise ValueError(f"not an ASTRA 3D volume geometry (missing {e})") from None
    ny, nx, nz = (check_int(n, k, 1, INT32_MAX) for n, k in
                  zip(counts, ("GridRowCount", "GridColCount", "GridSliceCount")))
    bounds = [check_float(v, k) for v, k in zip(window, ("WindowMinX", "WindowMinY", "WindowMinZ",
                                                        "WindowMaxX", "WindowMaxY", "WindowMaxZ"))]
    lo, hi = np.array(bounds[:3]), np.array(bounds[3:])
    voxels = np.array([nx, ny, nz])
    if np.any(hi <= lo):
        raise ValueError(f"ASTRA volume geometry of {voxels.tolist()} voxels over "
                         f"[{lo.tolist()}, {hi.tolist()}]")
    voxel = (hi - lo) / voxels  # (x, y, z) in ASTRA's frame
    first = lo + voxel / 2
    last = hi - voxel / 2
    # fdk's (z, y, x) = ASTRA's (-y, z, x): its z index runs down ASTRA's rows.
    return Volume((ny, nz, nx), (voxel[1], voxel[2], voxel[0]), (-last[1], first[2], first[0]))


def projections_from_astra(projections: Any) -> np.ndarray:
    """ASTRA's ``(rows, views, cols)`` projection data as fdk's ``(views, rows, cols)`` (a view, no copy)."""
    p = np.asarray(projections)
    if p.ndim != 3:
        raise ValueError(f"ASTRA projection data must be 3-D (rows, views, cols), got {p.shape}")
    return np.moveaxis(p, 1, 0)


def volume_to_astra(volume: Any) -> np.ndarray:
    """An fdk ``(z, y, x)`` volume reconstructed on :func:`volume_from_astra`'s
    grid as ASTRA's ``(slices, rows, cols)`` array (a view, no copy)."""
    v = np.asarray(volume)
    if v.ndim != 3:
        raise ValueError(f"a volume must be 3-D, got {v.shape}")
    return np.transpose(v, (1, 0, 2))[:, ::-1, :]


__all__: Sequence[str] = ["from_cone_vec", "from_cone", "cone_to_cone_vec", "volume_from_astra",
                          "projections_from_astra", "volume_to_astra", "ASTRA_TO_RTK"]
