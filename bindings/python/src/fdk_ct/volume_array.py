"""A numpy array that knows its grid."""
from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from .geometry import Volume


class VolumeArray(np.ndarray):
    """The reconstructed volume: a ``(z, y, x)`` float32 array with its grid.

    ``spacing`` and ``origin`` are in the array's axis order (z, y, x), as
    ITK's origin: the centre of voxel ``[0, 0, 0]``. The array is a view of
    the library's layout (each y plane contiguous), not C-contiguous; use
    ``numpy.ascontiguousarray`` where C-contiguous memory is needed. Results
    of the same shape keep the grid; slices and reductions drop it
    (``volume`` is then None).
    """

    volume: Optional[Volume]

    def __new__(cls, array: np.ndarray, volume: Volume) -> "VolumeArray":
        obj = np.asarray(array).view(cls)
        obj.volume = volume
        return obj

    def __array_finalize__(self, obj: Any) -> None:
        vol = getattr(obj, "volume", None)
        self.volume = vol if vol is not None and self.shape == vol.shape else None

    @property
    def spacing(self) -> Optional[Tuple[float, float, float]]:
        return None if self.volume is None else self.volume.spacing

    @property
    def origin(self) -> Optional[Tuple[float, float, float]]:
        return None if self.volume is None else self.volume.origin

    def __repr__(self) -> str:
        # The grid, not the voxels: numpy's summary of a 512^3 volume says
        # nothing of where it lies, and this is what a notebook cell shows.
        # print() (str) still shows the values; a slice (no grid) is numpy's.
        if self.volume is None:
            return super().__repr__()
        return (f"VolumeArray(shape={self.shape}, spacing={self.spacing}, "
                f"origin={self.origin}, dtype={self.dtype})")
