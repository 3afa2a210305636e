"""fdk-bench's synthetic projections (tools/fdk-bench/synthetic_projections.cpp)
in numpy, so that the Python bench reconstructs the same data as the C one.

Same blobs, same hash noise, same float32 sums in the same order: bit for
bit the C file's views (checked on four views of (b) against it built with
g++ -O2). The Gaussians go through numpy's float64 exp, not glibc's, so
another numpy may move a pixel by a float32 ulp; the volume check printed
next to fdk-bench's (min, max, mean of the warm-up volume) shows it.
"""
from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

# amplitude, orbit, phase, centre_v, sigma_u, sigma_v: as kBlobs in the C file.
BLOBS = (
    (1.60, 0.00, 0.0, 0.50, 0.28, 0.30),
    (0.55, 0.18, 0.3, 0.40, 0.06, 0.08),
    (0.40, 0.25, 2.1, 0.62, 0.04, 0.05),
    (0.30, 0.10, 4.0, 0.55, 0.09, 0.04),
    (0.25, 0.30, 5.2, 0.35, 0.03, 0.10),
)
BASE = np.float32(0.05)
NOISE = np.float32(0.004)
INV_2_24 = np.float32(1.0 / 16777216.0)


def _rot(x: np.ndarray, k: int) -> np.ndarray:
    return (x << np.uint32(k)) | (x >> np.uint32(32 - k))


def hash3(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The C file's hash3 on uint32 arrays that broadcast together.

    Arrays, never numpy scalars: uint32 arithmetic must wrap without the
    overflow warnings numpy gives for scalars.
    """
    a = a - c; a = a ^ _rot(c, 4); c = c + b
    b = b - a; b = b ^ _rot(a, 6); a = a + c
    c = c - b; c = c ^ _rot(b, 8); b = b + a
    a = a - c; a = a ^ _rot(c, 16); c = c + b
    b = b - a; b = b ^ _rot(a, 19); a = a + c
    c = c - b; c = c ^ _rot(b, 4); b = b + a
    return c


def make_projection(view: int, num_views: int, cols: int, rows: int,
                    out: np.ndarray) -> None:
    """Writes view ``view`` of ``num_views`` into ``out`` (rows, cols) float32."""
    angle = 2.0 * math.pi * view / num_views
    u = np.arange(cols, dtype=np.float64) + 0.5
    v = np.arange(rows, dtype=np.float64) + 0.5
    out[...] = BASE
    for amplitude, orbit, phase, centre_v, sigma_u, sigma_v in BLOBS:
        cu = cols * (0.5 + orbit * math.sin(angle + phase))
        du = (u - cu) / (sigma_u * cols)
        dv = (v - rows * centre_v) / (sigma_v * rows)
        gu = (amplitude * np.exp(-0.5 * du * du)).astype(np.float32)
        gv = np.exp(-0.5 * dv * dv).astype(np.float32)
        # Rows whose weight is below 1e-7 are skipped in C: skip them here too.
        keep = np.nonzero(gv >= np.float32(1e-7))[0]
        if keep.size:
            lo, hi = keep[0], keep[-1] + 1  # a Gaussian's kept rows are contiguous
            out[lo:hi] += gv[lo:hi, None] * gu[None, :]
    h = hash3(np.full((1, 1), view, dtype=np.uint32),
              np.arange(rows, dtype=np.uint32)[:, None],
              np.arange(cols, dtype=np.uint32)[None, :] ^ np.uint32(0x9E3779B9))
    out += NOISE * ((h >> np.uint32(8)).astype(np.float32) * INV_2_24)


def make_pool(pool: int, num_views: int, cols: int, rows: int) -> np.ndarray:
    """``pool`` views, (pool, rows, cols) float32, on every core (numpy
    releases the GIL inside its array loops)."""
    views = np.empty((pool, rows, cols), dtype=np.float32)
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as ex:
        list(ex.map(lambda i: make_projection(i, num_views, cols, rows, views[i]),
                    range(pool)))
    return views
