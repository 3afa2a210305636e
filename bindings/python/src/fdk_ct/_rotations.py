"""Right-handed rotations about x, y and z, for one angle or an array of them
(radians; the matrices stack on the last two axes)."""
from __future__ import annotations

import numpy as np


def _stack(rows: list) -> np.ndarray:
    return np.stack([np.stack(r, -1) for r in rows], -2)


def rx(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    c, s, o, z = np.cos(a), np.sin(a), np.ones_like(a), np.zeros_like(a)
    return _stack([[o, z, z], [z, c, -s], [z, s, c]])


def ry(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    c, s, o, z = np.cos(a), np.sin(a), np.ones_like(a), np.zeros_like(a)
    return _stack([[c, z, s], [z, o, z], [-s, z, c]])


def rz(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    c, s, o, z = np.cos(a), np.sin(a), np.ones_like(a), np.zeros_like(a)
    return _stack([[c, -s, z], [s, c, z], [z, z, o]])
