"""The one-call API."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from . import _checks
from .geometry import Geometry, Volume
from .reconstructor import Reconstructor
from .volume_array import VolumeArray


def reconstruct(projections: Any, geometry: Geometry, volume: Optional[Volume] = None, *,
                window: str = "ram-lak", cutoff: float = 1.0, backend: str = "auto",
                precision: str = "float32", budget: Any = None,
                progress: Any = None,
                out: Optional[np.ndarray] = None, **options: Any) -> VolumeArray:
    """Reconstructs a volume from a scan's projections with FDK.

    Parameters
    ----------
    projections : array_like, shape (views, rows, cols)
        Line integrals (``-log(I/I0)``), floating point; view ``i`` is the
        geometry's view ``i``. A float32 array (C-contiguous, strided, a
        memory map) is pushed view by view without copying the scan; other
        floating dtypes are converted one view at a time.
    geometry : Geometry
        The scan (RTK's convention); its detector shape, if set, must match.
    volume : Volume, optional
        The grid; default :meth:`Geometry.default_volume`.
    window, cutoff, backend, precision, budget, progress, **options
        As for :class:`Reconstructor`; ``progress=tqdm.auto.tqdm`` shows a
        bar (a widget in Jupyter), closed when the call returns.
    out : ndarray, optional
        A volume to overwrite (:func:`empty_volume`, or an earlier result on
        the same grid) instead of allocating a new one.

    Returns
    -------
    VolumeArray
        ``(z, y, x)`` float32 in 1/unit, with ``.spacing`` and ``.origin``.

    Raises
    ------
    TypeError, ValueError
        Not an array of floating line integrals of the geometry's shape, or
        an option its C field cannot carry exactly (see :class:`Reconstructor`).
    fdk_ct.errors.FdkError
        The library's error (its subclass names the status), e.g.
        :class:`~fdk_ct.errors.InvalidArgumentError` for a NaN pixel.
    """
    projections = _checks.scan_array(projections, geometry)
    if "estimate_geometry" in options:
        # The one call returns the nominal geometry's volume and nothing
        # else: an estimate made on the way would be lost, and applying one
        # means filtering the raw views again.
        raise TypeError("reconstruct() takes no estimate_geometry: use "
                        "est = fdk_ct.estimate_geometry(projections, geometry), then "
                        "reconstruct(projections, est.corrected(geometry)); or a "
                        "Reconstructor(..., estimate_geometry=True)")
    if "preview" in options:
        # Its one result is the volume, finished: a preview would be lost.
        raise TypeError("reconstruct() takes no preview: the live preview is read while "
                        "the views arrive, from a Reconstructor(..., preview=True)")
    geometry = geometry.with_detector_shape(projections.shape[1:])
    with Reconstructor(geometry, volume, window=window, cutoff=cutoff, backend=backend,
                       precision=precision, budget=budget, progress=progress,
                       **options) as rec:
        rec._push_scan(projections)
        rec.finish()
        return rec.read_volume(out)


def empty_volume(volume: Volume) -> VolumeArray:
    """An uninitialised volume for ``out=``: ``(z, y, x)`` float32 over the
    library's layout (each y plane one contiguous axial image)."""
    nz, ny, nx = volume.shape
    return VolumeArray(np.empty((ny, nz, nx), dtype=np.float32).transpose(1, 0, 2), volume)
