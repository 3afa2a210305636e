#!/usr/bin/env python3
"""How much backprojection work the voxels outside the field of view add.

For a benchmark case (design/BENCHMARKS.md geometry: SID 1000 mm, SDD 1500
mm, 256 mm cube, detector pixel 256 * 1.5 / U mm), counts the (view, voxel)
pairs whose ray falls on the detector, for the voxels inside the scan's
field of view (the cylinder every view sees) and outside it, on a grid
thinned by --sub in x, z and y and a tenth of the views. The kernels skip a
(view, voxel) pair whose ray misses the detector already (ColumnLookup::at,
on_detector), so with the default (outside backprojected, as rtkfdk) a
kernel does `default / zeroed` times the lookups of `--outside-fov zero`.
    usage: scripts/outside-fov-work.py [a|b|c|d] ...   (default: b c)
"""
import sys

import numpy as np

SID, SDD = 1000.0, 1500.0
CASES = {"a": (512, 360, 512, 512), "b": (1024, 1200, 1024, 1012),
         "c": (2048, 1200, 2048, 2048), "d": (4096, 2400, 4096, 4096)}


def work(case, sub=8):
    n, views, cols, rows = CASES[case]
    pixel = 256 * 1.5 / cols
    half_u, half_v = (cols - 1) / 2 * pixel, (rows - 1) / 2 * pixel
    c = (np.arange(0, n, max(1, n // 128)) - (n - 1) / 2) * (256.0 / n)
    x, z = np.meshgrid(c, c, indexing="ij")
    fov = SID * np.sin(np.arctan(half_u / SDD))  # radius every view sees
    inside = np.hypot(x, z) <= fov
    hits_in = hits_out = 0.0
    angles = np.linspace(0, 2 * np.pi, max(1, views // 10), endpoint=False)
    for b in angles:
        lateral = x * np.cos(b) + z * np.sin(b)
        depth = SID + x * np.sin(b) - z * np.cos(b)  # source to voxel, along the central ray
        on_columns = np.abs(SDD * lateral / depth) <= half_u
        on_rows = (np.abs(SDD * c[None, None, :] / depth[..., None]) <= half_v).mean(axis=2)
        h = on_columns * on_rows
        hits_in += h[inside].sum()
        hits_out += h[~inside].sum()
    pairs = inside.size * len(angles)
    print(f"case {case}: field of view radius {fov:.1f} mm, {inside.mean():.3f} of the voxel columns inside; "
          f"(view, voxel) pairs on the detector: inside {hits_in / pairs:.3f}, outside {hits_out / pairs:.3f} "
          f"of all; an outside voxel is seen by {hits_out / ((~inside).sum() * len(angles)):.3f} of the views; "
          f"default / zeroed lookups = {(hits_in + hits_out) / hits_in:.3f}")


if __name__ == "__main__":
    for case in sys.argv[1:] or ["b", "c"]:
        work(case)
