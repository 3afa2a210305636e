"""Per-view source and detector vectors (already in RTK's frame) to RTK's
projection matrices: the one step ASTRA's and TIGRE's converters share."""
from __future__ import annotations

import numpy as np

from ..geometry import Geometry

# Relative tolerance on a pixel pitch that should be the same in every view
# and on the cosine between u and v (the library itself refuses skew
# beyond 1e-6 of SDD); float32 inputs round at about 1e-7.
TOLERANCE = 1e-6


def geometry_from_vectors(source: np.ndarray, centre: np.ndarray, u: np.ndarray, v: np.ndarray,
                          rows: int, cols: int, what: str) -> Geometry:
    """A matrix geometry from (N, 3) arrays in RTK's frame.

    ``source`` is the focal spot, ``centre`` the centre of the detector
    (between the middle pixels when a count is even), ``u`` the step from
    one column to the next (array axis 2 of the projections) and ``v`` from
    one row to the next (axis 1). Pixel ``(r, c)`` then lies at
    ``centre + (c - (cols-1)/2) u + (r - (rows-1)/2) v``; the returned
    geometry has the centred detector of pitch ``(|v|, |u|)``.
    """
    s, d, u, v = (np.asarray(a, dtype=np.float64).reshape(-1, 3) for a in (source, centre, u, v))
    su, sv = np.linalg.norm(u, axis=1), np.linalg.norm(v, axis=1)
    if np.any(su == 0) or np.any(sv == 0):
        raise ValueError(f"{what}: a detector step vector is zero")
    for name, pitch in (("u (column)", su), ("v (row)", sv)):
        if np.any(np.abs(pitch - pitch[0]) > TOLERANCE * pitch[0]):
            i = int(np.argmax(np.abs(pitch - pitch[0])))
            raise ValueError(f"{what}: the {name} pixel pitch changes between views "
                             f"({pitch[0]!r} in view 0, {pitch[i]!r} in view {i}); one "
                             "detector pitch for the whole scan is supported")
    uh, vh = u / su[:, None], v / sv[:, None]
    cosine = np.abs(np.sum(uh * vh, axis=1))
    if np.any(cosine > TOLERANCE):
        i = int(np.argmax(cosine))
        raise ValueError(f"{what}: view {i}'s u and v are not perpendicular (cosine "
                         f"{cosine[i]:.3g}); a skewed detector is not supported")
    n = np.cross(uh, vh)
    # RTK's detector normal u x v points back at the source (at angle 0: u = x,
    # v = y, source on +z); the other way round the image is mirrored.
    facing = np.sum(n * (s - d), axis=1)
    if np.any(facing <= 0):
        i = int(np.argmax(facing <= 0))
        raise ValueError(f"{what}: in view {i}, u x v points away from the source: the "
                         "detector is mirrored relative to RTK's (flip the projections' "
                         "columns and negate u, or flip the rows and negate v)")
    m = matrices_from_vectors(s, d, uh, vh, n)
    # rows and cols go on unconverted: the Geometry checks them (int() would
    # turn 2.5 into 2).
    return Geometry.from_matrices(m, (float(sv[0]), float(su[0])), detector_shape=(rows, cols))


def matrices_from_vectors(s: np.ndarray, d: np.ndarray, uh: np.ndarray, vh: np.ndarray,
                          n: np.ndarray) -> np.ndarray:
    """(N, 3, 4) matrices: world point X to (u w, v w, w), u and v measured
    from the detector centre along the unit vectors uh, vh.

    The ray from s through X meets the detector plane at
    ``s + t (X - s)``, ``t = (d - s).n / (X - s).n``; with ``w = (X - s).n``,
    ``u w = ((s - d).uh) w + ((d - s).n) ((X - s).uh)``, linear in X.
    """
    count = s.shape[0]
    out = np.empty((count, 3, 4))
    ds_n = np.sum((d - s) * n, axis=1)
    w_row = np.concatenate([n, -np.sum(n * s, axis=1, keepdims=True)], axis=1)
    for k, axis in enumerate((uh, vh)):
        axis_row = np.concatenate([axis, -np.sum(axis * s, axis=1, keepdims=True)], axis=1)
        offset = np.sum((s - d) * axis, axis=1)
        out[:, k, :] = offset[:, None] * w_row + ds_n[:, None] * axis_row
    out[:, 2, :] = w_row
    return out


def per_view(value: object, count: int, width: int, name: str) -> np.ndarray:
    """A (count, width) float64 array from one value for all views or one per view."""
    a = np.asarray(value, dtype=np.float64)
    if width == 1:
        if a.ndim == 0 or a.shape == (1,):
            return np.full((count, 1), float(a.reshape(-1)[0]))
        if a.shape == (count,):
            return a.reshape(count, 1)
    else:
        if a.shape == (width,):
            return np.tile(a, (count, 1))
        if a.shape == (count, width):
            return a
    raise ValueError(f"{name} must be {'one number' if width == 1 else f'{width} numbers'} or "
                     f"one {'number' if width == 1 else 'row'} per view ({count}); got shape "
                     f"{a.shape}")


def check_finite(name: str, a: np.ndarray) -> None:
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} holds a NaN or an infinity")

