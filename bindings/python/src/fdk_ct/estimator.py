"""Estimating a scan's geometry from its own projections, before (or
instead of) reconstructing it: the ``fdk_estimator`` handle of the C ABI."""
from __future__ import annotations

import ctypes
import threading
from typing import Any, Optional, Tuple

import numpy as np

from ._closable import Closable
from . import _checks, _native
from .errors import InvalidStateError, raise_for
from .geometry import Geometry
from .geometry_estimate import GeometryEstimate, new_c_estimate
from .reconstructor import _index, _view_pixels


class GeometryEstimator(Closable):
    """Estimates the detector's offset along u and its in-plane tilt from
    the views of a circular scan, pushed one by one in any order.

    Parameters
    ----------
    geometry : Geometry
        The nominal geometry (circular or per-view parameters; not matrices).
    detector_shape : (rows, cols), optional
        When the geometry does not say it.

    Use it as a context manager (or call :meth:`close`). Calls on one
    estimator are serialised here (the library requires it), so it may be
    shared between threads.
    """

    def __init__(self, geometry: Geometry, *,
                 detector_shape: Optional[Tuple[int, int]] = None) -> None:
        self._handle: Optional[int] = None
        self._lock = threading.Lock()
        if not isinstance(geometry, Geometry):
            raise TypeError(f"geometry must be an fdk_ct.Geometry, got {type(geometry).__name__}")
        if detector_shape is not None:
            geometry = geometry.with_detector_shape(detector_shape)
        if geometry.detector_shape is None:
            raise ValueError("the detector's shape is not known: give the geometry a "
                             "detector_shape, or detector_shape= here")
        self.geometry = geometry
        lib = _native.geometry_estimation()
        cfg = _native.Config()
        _native.init_config(cfg)
        # Only the geometry and the detector are read; a valid grid anyway,
        # so that no check of an unused field can refuse the config.
        geometry.default_volume()._to_c(cfg.volume)
        keep = geometry._fill(cfg)
        handle = ctypes.c_void_p()
        status = lib.fdk_estimator_create(ctypes.byref(cfg), ctypes.byref(handle))
        del keep
        raise_for(status, lib.fdk_last_create_error().decode(errors="replace"))
        self._lib = lib
        self._handle = handle.value

    # ---- lifetime -------------------------------------------------------------------
    def close(self) -> None:
        """Frees the estimator (after a call in flight on another thread). Idempotent."""
        with self._lock:
            handle, self._handle = self._handle, None
        if handle is not None:
            self._lib.fdk_estimator_destroy(handle)

    @property
    def closed(self) -> bool:
        return self._handle is None

    def _call(self, fn: Any, *args: Any) -> None:
        with self._lock:
            if self._handle is None:
                raise InvalidStateError("the GeometryEstimator is closed",
                                        InvalidStateError.status)
            status = fn(self._handle, *args)
            # Read under the lock: the next call on the handle replaces it.
            message = self._lib.fdk_estimator_last_error(self._handle) if status else b""
        raise_for(status, message.decode(errors="replace"))

    # ---- use ----------------------------------------------------------------------------
    def push(self, index: int, view: Any) -> None:
        """View ``index`` of the scan: a ``(rows, cols)`` array of line
        integrals (float32 rows used in place, other floating arrays
        converted for this view). A view pushed again replaces the earlier
        one. A NaN or an infinity is the library's
        :class:`~fdk_ct.errors.InvalidArgumentError`."""
        arr = _view_pixels(view, self.geometry.detector_shape)
        index = _index(index, "view index", self.geometry.num_views)
        self._call(self._lib.fdk_estimator_push, index, _native.data_pointer(arr),
                   arr.strides[0])

    def estimate(self) -> GeometryEstimate:
        """The estimate from the views pushed so far. Too few views is not an
        error: confidence 0, and a basis that says why."""
        c = new_c_estimate()
        self._call(self._lib.fdk_estimator_estimate, ctypes.byref(c))
        return GeometryEstimate._from_c(c)


def estimate_geometry(projections: Any, geometry: Geometry) -> GeometryEstimate:
    """Estimates the detector's offset along u and its in-plane tilt from a
    scan's own projections.

    Parameters
    ----------
    projections : array_like, shape (views, rows, cols)
        Line integrals, floating point; view ``i`` is the geometry's view ``i``.
    geometry : Geometry
        The nominal geometry (circular or per-view; not projection matrices).

    Returns
    -------
    GeometryEstimate
        ``estimate.corrected(geometry)`` is the geometry to reconstruct with.

    Raises
    ------
    TypeError, ValueError
        Not a 3-D floating array of the geometry's views and detector.
    fdk_ct.errors.FdkError
        The library's error, e.g. InvalidArgumentError for a NaN pixel or a
        geometry of projection matrices.
    """
    projections = _checks.scan_array(projections, geometry)
    geometry = geometry.with_detector_shape(projections.shape[1:])
    estimator = GeometryEstimator(geometry)
    try:
        for i in range(projections.shape[0]):
            estimator.push(i, projections[i])
        return estimator.estimate()
    finally:
        estimator.close()
