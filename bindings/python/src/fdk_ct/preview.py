"""The live preview (libfdk 0.8, fdk.h's "the live preview"): a coarse volume
reconstructed alongside as the views arrive, readable at any moment.

Its values are the partial FDK sum divided by ``coverage``, the views'
share of the scan's angular weight, so grey values are comparable to the
finished volume's early on (missing angles show as streaks, not as a darker
volume). Arrays follow the binding's axis order: the volume is ``(z, y, x)``
and every triple here (``at``, spacing, origin) is in that order.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Tuple

import numpy as np

from . import _native
from ._checks import INT32_MAX, check_int
from .errors import OutOfRangeError
from .geometry import Volume

_AXES = ("z", "y", "x")


@dataclass(frozen=True)
class PreviewInfo:
    """The preview's grid and state at one moment (``fdk_preview_info``).

    Attributes
    ----------
    volume : Volume
        The preview's grid, ``(nz, ny, nx)`` as every Volume.
    views, views_announced : int
        Views in it, and views the scan announced.
    coverage : float
        The views' share of the angular weight, in [0, 1]; the sum was
        divided by it (0: no view yet, the values are 0).
    complete : bool
        Every view of the finished scan is in with its final weight
        (FDK_PREVIEW_COMPLETE): the preview equals a reconstruction of its
        grid from the same projections.
    failed : bool
        A view could not be added (FDK_PREVIEW_FAILED): reads raise the
        reason; the reconstruction itself goes on.
    on_gpu : bool
        Accumulated on a GPU (else on the CPU threads).
    memory_bytes : int
        What it holds (on that GPU, or in host memory).
    """

    volume: Volume
    views: int
    views_announced: int
    coverage: float
    complete: bool
    failed: bool
    on_gpu: bool
    memory_bytes: int

    @classmethod
    def _from_c(cls, c: _native.PreviewInfoC) -> "PreviewInfo":
        return cls(volume_from_c(c.volume), c.views, c.views_announced, c.coverage,
                   bool(c.flags & _native.PREVIEW_COMPLETE),
                   bool(c.flags & _native.PREVIEW_FAILED), bool(c.on_gpu), c.memory_bytes)


@dataclass(frozen=True, eq=False)
class PreviewSlices:
    """Three orthogonal slices of one moment of the preview, through the
    voxel ``at`` = ``(iz, iy, ix)``; each is the plane the full read would
    give (``vol = rec.preview()``):

    - ``x``: ``vol[:, :, ix]``, shape ``(nz, ny)`` (a sagittal plane);
    - ``y``: ``vol[:, iy, :]``, shape ``(nz, nx)`` (an axial slice: y is the
      rotation axis);
    - ``z``: ``vol[iz, :, :]``, shape ``(ny, nx)`` (a coronal plane).

    ``info`` is the preview's state at that moment.
    """

    x: np.ndarray
    y: np.ndarray
    z: np.ndarray
    at: Tuple[int, int, int]
    info: PreviewInfo

    @property
    def position(self) -> Tuple[float, float, float]:
        """The physical ``(z, y, x)`` coordinates of the voxel the slices cross."""
        g = self.info.volume
        z, y, x = (g.origin[a] + g.spacing[a] * self.at[a] for a in range(3))
        return (z, y, x)


def volume_from_c(c: _native.VolumeC) -> Volume:
    """A Volume from an fdk_volume (x, y, z) into the binding's (z, y, x)."""
    return Volume((c.size[2], c.size[1], c.size[0]),
                  (c.spacing[2], c.spacing[1], c.spacing[0]),
                  (c.origin[2], c.origin[1], c.origin[0]))


def new_c_info() -> _native.PreviewInfoC:
    """An fdk_preview_info initialised by the library (its struct_size)."""
    info = _native.PreviewInfoC()
    _native.preview().fdk_preview_info_init(ctypes.byref(info))
    return info


def resolve_at(at: Optional[Sequence[Any]], grid: Volume) -> Tuple[int, int, int]:
    """``(iz, iy, ix)`` from None (the middle of every axis) or three
    entries, each an index or None (the middle of that axis: ``n // 2``, as
    the library's -1). A negative index is refused here (the C API's -1
    means "the middle", Python's "the last"); one beyond the grid is the
    library's to refuse (OutOfRangeError naming the axis)."""
    if at is None:
        at = (None, None, None)
    if isinstance(at, (str, bytes)) or not hasattr(at, "__len__") or len(at) != 3:
        raise TypeError(f"at must be None or three indices (iz, iy, ix), each an int or None; "
                        f"got {at!r}")
    out = []
    for a, value in enumerate(at):
        n = grid.shape[a]
        if value is None:
            out.append(n // 2)
            continue
        field = f"at[{a}] ({_AXES[a]})"
        try:
            out.append(check_int(value, field, 0, INT32_MAX, floats=False))
        except ValueError as e:
            raise OutOfRangeError(f"{e}; valid: [0, {n}), or None for the middle",
                                  OutOfRangeError.status) from None
    iz, iy, ix = out
    return (iz, iy, ix)


def new_slices(grid: Volume, at: Tuple[int, int, int]
               ) -> Tuple[_native.PreviewSlicesC, np.ndarray, np.ndarray, np.ndarray]:
    """The fdk_preview_slices of a read through ``at`` and the arrays it
    fills, in the library's layouts: x plane ``(ny, nz)``, y plane
    ``(nz, nx)``, z plane ``(ny, nx)``."""
    nz, ny, nx = grid.shape
    xs = np.empty((ny, nz), dtype=np.float32)
    ys = np.empty((nz, nx), dtype=np.float32)
    zs = np.empty((ny, nx), dtype=np.float32)
    c = _native.PreviewSlicesC(struct_size=ctypes.sizeof(_native.PreviewSlicesC))
    iz, iy, ix = at
    c.at[:] = [ix, iy, iz]
    c.x_slice, c.x_slice_bytes = _native.data_pointer(xs), xs.nbytes
    c.y_slice, c.y_slice_bytes = _native.data_pointer(ys), ys.nbytes
    c.z_slice, c.z_slice_bytes = _native.data_pointer(zs), zs.nbytes
    return c, xs, ys, zs
