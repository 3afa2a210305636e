"""Exact cone-beam projections of balls, for the interop tests: each
converter's own frame in, line integrals out, with no fdk code involved."""
from __future__ import annotations

import numpy as np


def project_balls(source: np.ndarray, pixels: np.ndarray, balls) -> np.ndarray:
    """Line integrals through uniform balls.

    source: (views, 3); pixels: (views, rows, cols, 3), both in one frame;
    balls: iterable of (centre (3,), radius, density). Returns
    (views, rows, cols) float32: the sum of density * chord length.
    """
    d = pixels - source[:, None, None, :]
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    out = np.zeros(pixels.shape[:3])
    for centre, radius, density in balls:
        w = np.asarray(centre, dtype=np.float64) - source[:, None, None, :]
        along = np.sum(w * d, axis=-1)
        dist2 = np.sum(w * w, axis=-1) - along * along
        out += density * 2.0 * np.sqrt(np.clip(radius * radius - dist2, 0.0, None))
    return out.astype(np.float32)


def centroid(volume: np.ndarray) -> np.ndarray:
    """Index-space centre of the voxels above half the maximum."""
    v = np.asarray(volume, dtype=np.float64)
    mask = v > 0.5 * v.max()
    idx = np.argwhere(mask)
    return np.average(idx, axis=0, weights=v[mask])


def rel_l2(a: np.ndarray, b: np.ndarray) -> float:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))
