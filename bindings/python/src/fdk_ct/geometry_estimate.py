"""What the library estimated of a scan's geometry (``fdk_geometry_estimate``),
and the geometry corrected by it.

The estimate is of the two errors a nominal geometry most often has: the
detector's offset along u (the column through the rotation axis) and its
tilt in its own plane. Correcting is done by the library
(``fdk_apply_geometry_estimate``), so that Python, C# and C agree on what
"corrected" means.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass, replace

import numpy as np

from . import _native
from ._checks import INT32_MAX, check_float, check_int
from .errors import raise_for
from .geometry import _VIEW_FIELDS, Geometry, ViewGeometry

# fdk.h's FDK_ESTIMATE_* flags.
OFFSET = 1          # offset_u_* is estimated
TILT = 2            # tilt_deg is estimated
LOW_STRUCTURE = 4   # too little structure that changes with angle to be sure
FEW_PAIRS = 8       # too few views with an opposite view

_FLAG_NAMES = ((OFFSET, "offset"), (TILT, "tilt"), (LOW_STRUCTURE, "low structure"),
               (FEW_PAIRS, "few pairs"))
_BASIS_BYTES = 256  # char basis[256], NUL included


@dataclass(frozen=True)
class GeometryEstimate:
    """A geometry estimate: add ``offset_u_mm`` to every view's
    ``projection_offset_x`` and ``tilt_deg`` to its ``in_plane_angle_deg``
    (:meth:`corrected` does both).

    Attributes
    ----------
    offset_u_mm, offset_u_pixels : float
        The detector's offset along u, in the geometry's length unit and in
        detector columns.
    tilt_deg : float
        The detector's rotation in its own plane.
    offset_sigma_pixels, tilt_sigma_deg : float
        One standard deviation of each.
    confidence : float
        In [0, 1]; below 0.5, look before applying the estimate.
    view_pairs, views_used, rows_used : int
        Pairs of views compared, views that took part, detector rows kept of each.
    flags : int
        ``FDK_ESTIMATE_*`` bits; see the boolean properties.
    basis : str
        What it was computed from, in the library's words (with too few
        views: why there is no estimate).
    """

    offset_u_mm: float
    offset_u_pixels: float
    tilt_deg: float
    offset_sigma_pixels: float
    tilt_sigma_deg: float
    confidence: float
    view_pairs: int
    views_used: int
    rows_used: int
    flags: int
    basis: str

    # ---- the flags ------------------------------------------------------------
    @property
    def offset_estimated(self) -> bool:
        """Whether ``offset_u_*`` is estimated (FDK_ESTIMATE_OFFSET)."""
        return bool(self.flags & OFFSET)

    @property
    def tilt_estimated(self) -> bool:
        """Whether ``tilt_deg`` is estimated (FDK_ESTIMATE_TILT)."""
        return bool(self.flags & TILT)

    @property
    def low_structure(self) -> bool:
        """The views hold too little structure that changes with angle to be
        sure (FDK_ESTIMATE_LOW_STRUCTURE)."""
        return bool(self.flags & LOW_STRUCTURE)

    @property
    def few_pairs(self) -> bool:
        """Too few views had an opposite view (FDK_ESTIMATE_FEW_PAIRS)."""
        return bool(self.flags & FEW_PAIRS)

    def flag_names(self) -> list:
        """The flags set, in words ("offset", "tilt", "low structure", "few pairs")."""
        return [name for bit, name in _FLAG_NAMES if self.flags & bit]

    # ---- text -------------------------------------------------------------------
    def __str__(self) -> str:
        flags = ", ".join(self.flag_names()) or "none"
        return (f"offset {self.offset_u_pixels:+.3f} px ({self.offset_u_mm:+.4g} mm) "
                f"+/- {self.offset_sigma_pixels:.3f} px, tilt {self.tilt_deg:+.4f} deg "
                f"+/- {self.tilt_sigma_deg:.4f} deg, confidence {self.confidence:.2f} "
                f"({self.view_pairs} view pairs of {self.views_used} views, "
                f"{self.rows_used} rows; flags: {flags}): {self.basis}")

    def __repr__(self) -> str:
        return (f"GeometryEstimate(offset_u_pixels={self.offset_u_pixels!r}, "
                f"offset_u_mm={self.offset_u_mm!r}, tilt_deg={self.tilt_deg!r}, "
                f"offset_sigma_pixels={self.offset_sigma_pixels!r}, "
                f"tilt_sigma_deg={self.tilt_sigma_deg!r}, confidence={self.confidence!r}, "
                f"view_pairs={self.view_pairs!r}, views_used={self.views_used!r}, "
                f"rows_used={self.rows_used!r}, flags={self.flags!r} "
                f"({', '.join(self.flag_names()) or 'none'}), basis={self.basis!r})")

    # ---- applying it ---------------------------------------------------------------
    def apply(self, view: ViewGeometry) -> ViewGeometry:
        """``view`` corrected by this estimate (``fdk_apply_geometry_estimate``)."""
        if not isinstance(view, ViewGeometry):
            raise TypeError(f"view must be an fdk_ct.ViewGeometry, got {type(view).__name__}")
        lib = _native.geometry_estimation()
        estimate = self._to_c()
        c_view = view._to_c()
        status = lib.fdk_apply_geometry_estimate(ctypes.byref(estimate), ctypes.byref(c_view),
                                                 ctypes.byref(c_view))
        raise_for(status, lib.fdk_last_create_error().decode(errors="replace"))
        return ViewGeometry(*(getattr(c_view, f) for f in _VIEW_FIELDS))

    def corrected(self, geometry: Geometry) -> Geometry:
        """``geometry`` with every view corrected by this estimate, of the same
        kind: a circular geometry stays circular (its shared view corrected),
        one of per-view parameters has each view corrected. A geometry of
        projection matrices cannot be (ValueError): the library estimates
        RTK parameters, which matrices do not carry."""
        if not isinstance(geometry, Geometry):
            raise TypeError(f"geometry must be an fdk_ct.Geometry, got "
                            f"{type(geometry).__name__}")
        if geometry.kind == "circular":
            assert geometry.uniform is not None
            return replace(geometry, uniform=self.apply(geometry.uniform))
        if geometry.kind == "views":
            assert geometry.view_table is not None
            table = np.array([[getattr(self.apply(ViewGeometry(*row)), f) for f in _VIEW_FIELDS]
                              for row in geometry.view_table], dtype=np.float64)
            return replace(geometry, view_table=table, matrices=None)
        raise ValueError(f"a geometry of kind {geometry.kind!r} cannot be corrected: the "
                         "estimate is of RTK parameters (projection_offset_x, "
                         "in_plane_angle_deg), which projection matrices do not carry")

    # ---- C ----------------------------------------------------------------------------
    @classmethod
    def _from_c(cls, c: _native.GeometryEstimateC) -> "GeometryEstimate":
        return cls(c.offset_u_mm, c.offset_u_pixels, c.tilt_deg, c.offset_sigma_pixels,
                   c.tilt_sigma_deg, c.confidence, c.view_pairs, c.views_used, c.rows_used,
                   c.flags, c.basis.decode(errors="replace"))

    def _to_c(self) -> _native.GeometryEstimateC:
        """The C struct, every value checked where it meets ctypes (an estimate
        can be made by hand, e.g. from one saved earlier)."""
        c = _native.GeometryEstimateC()
        _native.geometry_estimation().fdk_geometry_estimate_init(ctypes.byref(c))
        for name in ("offset_u_mm", "offset_u_pixels", "tilt_deg", "offset_sigma_pixels",
                     "tilt_sigma_deg", "confidence"):
            setattr(c, name, check_float(getattr(self, name), name))
        for name in ("view_pairs", "views_used", "rows_used"):
            setattr(c, name, check_int(getattr(self, name), name, 0, INT32_MAX))
        c.flags = check_int(self.flags, "flags", 0, 2**32 - 1, "uint32")
        basis = str(self.basis).encode()
        # Cut at a character boundary, leaving room for the NUL.
        c.basis = basis[:_BASIS_BYTES - 1].decode(errors="ignore").encode()
        return c


def new_c_estimate() -> _native.GeometryEstimateC:
    """An fdk_geometry_estimate for the library to fill (struct_size set)."""
    c = _native.GeometryEstimateC()
    _native.geometry_estimation().fdk_geometry_estimate_init(ctypes.byref(c))
    return c
