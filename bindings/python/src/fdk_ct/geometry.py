"""The scan's geometry and the volume's grid, in RTK's convention.

Axis order: every shape, spacing and origin here follows numpy's axis order
of the arrays it describes. Projections are ``(views, rows, cols)``, so the
detector's spacing and origin are ``(v, u)``; the volume is ``(z, y, x)``,
so its spacing and origin are ``(z, y, x)``. Physical quantities that RTK
names by axis (source and projection offsets) keep their names.

The frame is RTK's (fdk.h): the rotation axis is y, at gantry angle 0 the
source is on +z at distance SID, the detector's u axis is +x and v is +y.
Lengths are in one unit (normally mm); the volume comes out in 1/unit.
"""
from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass, field, replace
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from . import _native
from ._checks import (INT32_MAX, check_float, check_floats, check_int, check_table,
                      float_array)

Pair = Tuple[float, float]
Triple = Tuple[float, float, float]
ArrayLike = Union[float, Sequence[float], np.ndarray]

SCAN_UNIFORM, SCAN_VIEWS, SCAN_MATRICES = 0, 1, 2


def _pair(value: Union[float, Sequence[float]], name: str, positive: bool = False) -> Pair:
    """(v, u): one number for both or two, each a finite double."""
    v, u = check_floats(value, name, 2, positive=positive)
    return (v, u)


def _triple(value: Union[float, Sequence[float]], name: str, positive: bool = False) -> Triple:
    """(z, y, x): one number for all or three, each a finite double."""
    z, y, x = check_floats(value, name, 3, positive=positive)
    return (z, y, x)


def _volume_shape(shape: Any) -> Tuple[int, int, int]:
    """(nz, ny, nx), each an int32 of fdk_volume.size, at least 1."""
    nz, ny, nx = (check_int(n, f"volume shape[{i}]", 1, INT32_MAX)
                  for i, n in enumerate(_three(shape)))
    return (nz, ny, nx)


def _three(shape: Any) -> list:
    if isinstance(shape, (str, bytes)):
        raise TypeError(f"volume shape must be (nz, ny, nx), got {shape!r}")
    try:
        items = list(np.asarray(shape, dtype=object).reshape(-1))
    except (TypeError, ValueError):
        raise TypeError(f"volume shape must be (nz, ny, nx), got {shape!r}") from None
    if len(items) == 1:
        items = items * 3
    if len(items) != 3:
        raise ValueError(f"volume shape must be one count or three (nz, ny, nx), got {shape!r}")
    return items


@dataclass(frozen=True, init=False)
class Volume:
    """The reconstruction grid.

    Parameters
    ----------
    shape : (nz, ny, nx)
        Voxels along z, y (the rotation axis) and x.
    spacing : float or (sz, sy, sx)
        Voxel size in the geometry's length unit.
    origin : (oz, oy, ox), optional
        Physical position of the centre of voxel ``[0, 0, 0]`` (ITK's
        origin). Default: the grid centred on the isocentre.

    Each count must be a whole number in 1..2**31-1 (fdk_volume.size is
    int32; the library itself takes up to 65536), each spacing finite and
    > 0, each origin finite: else ValueError naming it ("volume shape[0]").
    """

    shape: Tuple[int, int, int]
    spacing: Triple
    origin: Triple

    def __init__(self, shape: Sequence[int], spacing: Union[float, Sequence[float]] = 1.0,
                 origin: Optional[Sequence[float]] = None) -> None:
        size = _volume_shape(shape)
        step = _triple(spacing, "volume spacing", positive=True)
        if origin is None:
            # Checked too: a huge spacing times a large count overflows to inf.
            start = _triple([-(size[0] - 1) / 2.0 * step[0], -(size[1] - 1) / 2.0 * step[1],
                             -(size[2] - 1) / 2.0 * step[2]], "volume origin (centred)")
        else:
            start = _triple(origin, "volume origin")
        object.__setattr__(self, "shape", size)
        object.__setattr__(self, "spacing", step)
        object.__setattr__(self, "origin", start)

    @property
    def size_bytes(self) -> int:
        """Bytes of the float32 volume."""
        return 4 * self.shape[0] * self.shape[1] * self.shape[2]

    def coordinates(self, axis: int) -> np.ndarray:
        """Physical coordinates of the voxel centres along array axis 0 (z), 1 (y) or 2 (x)."""
        return self.origin[axis] + self.spacing[axis] * np.arange(self.shape[axis])

    def _to_c(self, c: _native.VolumeC) -> None:
        # Checked again here, where the values meet ctypes: a frozen
        # dataclass can still be changed with object.__setattr__.
        nz, ny, nx = _volume_shape(self.shape)
        sz, sy, sx = _triple(self.spacing, "volume spacing", positive=True)
        oz, oy, ox = _triple(self.origin, "volume origin")
        c.size[:] = [nx, ny, nz]
        c.spacing[:] = [sx, sy, sz]
        c.origin[:] = [ox, oy, oz]


_VIEW_FIELDS = ("gantry_angle_deg", "sid", "sdd", "source_offset_x", "source_offset_y",
                "projection_offset_x", "projection_offset_y", "in_plane_angle_deg",
                "out_of_plane_angle_deg")
# fdk.h: "source to isocentre distance, > 0", "source to detector distance, > 0"
_POSITIVE_VIEW_FIELDS = ("sid", "sdd")
_MATRIX_ENTRIES = tuple(f"matrix[{r}][{c}]" for r in range(3) for c in range(4))


@dataclass(frozen=True)
class ViewGeometry:
    """One view in RTK's circular parameters (angles in degrees).

    Used for a view's measured geometry at push time, and as the items of
    :attr:`Geometry.views`.
    """

    gantry_angle_deg: float
    sid: float
    sdd: float
    source_offset_x: float = 0.0
    source_offset_y: float = 0.0
    projection_offset_x: float = 0.0
    projection_offset_y: float = 0.0
    in_plane_angle_deg: float = 0.0
    out_of_plane_angle_deg: float = 0.0

    def __post_init__(self) -> None:
        # Finite doubles (sid and sdd > 0), so a NaN is refused where it is
        # written, not at the push that uses it.
        for f, v in zip(_VIEW_FIELDS, self._checked()):
            object.__setattr__(self, f, v)

    def _checked(self) -> Tuple[float, ...]:
        return tuple(check_float(getattr(self, f), f, positive=f in _POSITIVE_VIEW_FIELDS)
                     for f in _VIEW_FIELDS)

    def _to_c(self) -> _native.View:
        return _native.View(*self._checked())


@dataclass(frozen=True)
class Geometry:
    """A cone-beam scan: its trajectory and its flat detector.

    Build one with :meth:`circular`, :meth:`from_views`,
    :meth:`from_matrices`, :meth:`from_rtk_xml` (or the converters in
    :mod:`fdk_ct.interop`) rather than directly.

    Attributes
    ----------
    kind : {"circular", "views", "matrices"}
    num_views : int
    detector_spacing : (sv, su)
        Pixel pitch along rows (v, the rotation axis) and columns (u).
    detector_origin : (ov, ou) or None
        Detector coordinates of the centre of pixel ``[0, 0]``; None centres
        the detector on (0, 0) once its shape is known.
    detector_shape : (rows, cols) or None
        None: taken from the projections.

    Every value is checked when the geometry is made (also by
    ``dataclasses.replace``): ``num_views`` and the detector's counts whole
    numbers in 1..2**31-1 (int32 in C), every length and angle finite,
    spacings, SID and SDD > 0; else ValueError naming the field and the
    limit. The library checks its documented ranges when it is used.
    """

    kind: str
    num_views: int
    detector_spacing: Pair
    detector_origin: Optional[Pair] = None
    detector_shape: Optional[Tuple[int, int]] = None
    # circular: first angle, arc and the parameters shared by every view
    first_angle_deg: float = 0.0
    arc_deg: float = 360.0
    uniform: Optional[ViewGeometry] = None
    # views: an (N, 9) float64 array in ViewGeometry's field order
    view_table: Optional[np.ndarray] = field(default=None, repr=False, compare=False)
    # matrices: (N, 3, 4) float64
    matrices: Optional[np.ndarray] = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        # However it was made (a constructor, dataclasses.replace, directly),
        # a Geometry holds only values its C structs can carry exactly.
        object.__setattr__(self, "num_views", _num_views(self.num_views))
        object.__setattr__(self, "detector_spacing",
                           _pair(self.detector_spacing, "detector_spacing", positive=True))
        if self.detector_origin is not None:
            object.__setattr__(self, "detector_origin",
                               _pair(self.detector_origin, "detector_origin"))
        object.__setattr__(self, "detector_shape", _shape2(self.detector_shape))
        object.__setattr__(self, "first_angle_deg",
                           check_float(self.first_angle_deg, "first_angle_deg"))
        object.__setattr__(self, "arc_deg", check_float(self.arc_deg, "arc_deg"))
        self._check_trajectory()

    def _check_trajectory(self) -> None:
        """The kind's own data: present, one entry per view, finite. The
        arrays are checked again by _fill (an ndarray can change after)."""
        if self.kind == "circular":
            if not isinstance(self.uniform, ViewGeometry):
                raise TypeError("a circular Geometry needs uniform=ViewGeometry(...)")
        elif self.kind == "views":
            t = self.view_table
            if not isinstance(t, np.ndarray) or t.dtype != np.float64 \
                    or t.shape != (self.num_views, len(_VIEW_FIELDS)):
                raise ValueError(f"view_table must be a float64 array of shape "
                                 f"({self.num_views}, {len(_VIEW_FIELDS)}) (num_views rows)")
            check_table(t, "view_table", _VIEW_FIELDS, _POSITIVE_VIEW_FIELDS)
        elif self.kind == "matrices":
            m = self.matrices
            # C reads 12 * num_views doubles from this pointer: fewer would
            # be a read past the end.
            if not isinstance(m, np.ndarray) or m.dtype != np.float64 \
                    or m.shape != (self.num_views, 3, 4) or not m.flags.c_contiguous:
                raise ValueError(f"matrices must be a C-contiguous float64 array of shape "
                                 f"({self.num_views}, 3, 4) (num_views matrices)")
            check_table(m.reshape(-1, 12), "matrices", _MATRIX_ENTRIES)
        else:
            raise ValueError(f"unknown geometry kind {self.kind!r} (circular, views, matrices)")

    # ---- constructors -------------------------------------------------------
    @classmethod
    def circular(cls, num_views: int, sid: float, sdd: float,
                 detector_spacing: Union[float, Sequence[float]], *,
                 arc_deg: float = 360.0, first_angle_deg: float = 0.0,
                 detector_shape: Optional[Tuple[int, int]] = None,
                 detector_origin: Optional[Sequence[float]] = None,
                 source_offset_x: float = 0.0, source_offset_y: float = 0.0,
                 projection_offset_x: float = 0.0, projection_offset_y: float = 0.0,
                 in_plane_angle_deg: float = 0.0,
                 out_of_plane_angle_deg: float = 0.0) -> "Geometry":
        """Equally spaced views: view i at ``first_angle_deg + i * arc_deg / num_views``.

        Parameters
        ----------
        num_views : int
            Views announced (fewer may be pushed to a :class:`Reconstructor`).
        sid, sdd : float
            Source to isocentre and source to detector distances.
        detector_spacing : float or (sv, su)
            Pixel pitch; one number for square pixels.
        arc_deg : float
            Signed arc the views span; 360 for a full scan, less for a short
            scan (Parker weights then apply).
        detector_shape : (rows, cols), optional
        detector_origin : (ov, ou), optional
            Centre of pixel [0, 0] in detector coordinates; default centred.
        source_offset_x, source_offset_y, projection_offset_x, projection_offset_y,
        in_plane_angle_deg, out_of_plane_angle_deg : float
            RTK's per-view parameters, shared by every view.
        """
        uniform = ViewGeometry(0.0, sid, sdd, source_offset_x, source_offset_y,
                               projection_offset_x, projection_offset_y,
                               in_plane_angle_deg, out_of_plane_angle_deg)
        return cls(kind="circular", num_views=num_views,
                   **_detector(detector_spacing, detector_origin, detector_shape),
                   first_angle_deg=first_angle_deg, arc_deg=arc_deg, uniform=uniform)

    @classmethod
    def from_views(cls, gantry_angles_deg: ArrayLike, sid: ArrayLike, sdd: ArrayLike,
                   detector_spacing: Union[float, Sequence[float]], *,
                   detector_shape: Optional[Tuple[int, int]] = None,
                   detector_origin: Optional[Sequence[float]] = None,
                   source_offset_x: ArrayLike = 0.0, source_offset_y: ArrayLike = 0.0,
                   projection_offset_x: ArrayLike = 0.0, projection_offset_y: ArrayLike = 0.0,
                   in_plane_angle_deg: ArrayLike = 0.0,
                   out_of_plane_angle_deg: ArrayLike = 0.0) -> "Geometry":
        """One set of RTK parameters per view (as RTK's ``AddProjection``).

        Every parameter is one number for all views or one per view; the
        number of views is the length of ``gantry_angles_deg``.
        """
        angles = np.atleast_1d(float_array(gantry_angles_deg, "gantry_angles_deg"))
        if angles.ndim != 1 or angles.size == 0:
            raise ValueError("gantry_angles_deg must be a non-empty 1-D sequence")
        n = angles.size
        columns = [angles]
        for name, v in (("sid", sid), ("sdd", sdd), ("source_offset_x", source_offset_x),
                        ("source_offset_y", source_offset_y),
                        ("projection_offset_x", projection_offset_x),
                        ("projection_offset_y", projection_offset_y),
                        ("in_plane_angle_deg", in_plane_angle_deg),
                        ("out_of_plane_angle_deg", out_of_plane_angle_deg)):
            a = float_array(v, name)
            if a.ndim > 1 or (a.ndim == 1 and a.size != n):
                raise ValueError(f"{name} must be one number or {n} (one per view), "
                                 f"got shape {a.shape}")
            columns.append(np.broadcast_to(a, (n,)))
        table = np.ascontiguousarray(np.stack(columns, axis=1))
        return cls(kind="views", num_views=n,
                   **_detector(detector_spacing, detector_origin, detector_shape), view_table=table)

    @classmethod
    def from_matrices(cls, matrices: np.ndarray,
                      detector_spacing: Union[float, Sequence[float]], *,
                      detector_shape: Optional[Tuple[int, int]] = None,
                      detector_origin: Optional[Sequence[float]] = None) -> "Geometry":
        """One 3x4 projection matrix per view, exactly as RTK's ``GetMatrices()``.

        A matrix maps homogeneous physical ``(x, y, z, 1)`` to physical detector
        coordinates ``(u*w, v*w, w)``; it must be a flat-panel perspective
        matrix (square pixels, no skew). Pixel indices follow from the
        detector's spacing and origin, as for RTK's projection images.
        """
        m = float_array(matrices, "matrices")
        if m.ndim != 3 or m.shape[1:] != (3, 4) or m.shape[0] == 0:
            raise ValueError(f"matrices must have shape (views, 3, 4), got {m.shape}")
        return cls(kind="matrices", num_views=m.shape[0],
                   **_detector(detector_spacing, detector_origin, detector_shape),
                   matrices=np.ascontiguousarray(m))

    @classmethod
    def from_rtk_xml(cls, path: Any, detector_spacing: Union[float, Sequence[float]], *,
                     detector_shape: Optional[Tuple[int, int]] = None,
                     detector_origin: Optional[Sequence[float]] = None) -> "Geometry":
        """Read an RTK ``ThreeDCircularProjectionGeometry`` XML file.

        RTK's XML holds the trajectory only; the detector's pixel pitch (and
        origin, if not centred) come from the projections' image header, so
        they are given here.
        """
        # The format module, not rtk_xml (which builds on this class).
        from .interop.rtk_xml_format import parse, read_text
        table = np.asarray(parse(read_text(path), os.fspath(path)), dtype=np.float64)
        return cls.from_views(table[:, 0], table[:, 1], table[:, 2], detector_spacing,
                              detector_shape=detector_shape, detector_origin=detector_origin,
                              source_offset_x=table[:, 3], source_offset_y=table[:, 4],
                              projection_offset_x=table[:, 5], projection_offset_y=table[:, 6],
                              in_plane_angle_deg=table[:, 7], out_of_plane_angle_deg=table[:, 8])

    # ---- derived ------------------------------------------------------------
    def with_detector_shape(self, shape: Tuple[int, int]) -> "Geometry":
        """The same geometry with its detector's (rows, cols) fixed."""
        fixed = _shape2(shape)
        assert fixed is not None
        if self.detector_shape is not None and self.detector_shape != fixed:
            raise ValueError(f"projections of {fixed[0]} rows x {fixed[1]} columns do not "
                             f"match the geometry's detector of {self.detector_shape[0]} x "
                             f"{self.detector_shape[1]}")
        return replace(self, detector_shape=fixed, view_table=self.view_table,
                       matrices=self.matrices)

    def view_parameters(self) -> np.ndarray:
        """The (views, 9) RTK parameters of each view, in :class:`ViewGeometry`'s
        field order (a copy). Not for a geometry of projection matrices
        (ValueError: they are not decomposed here)."""
        if self.kind == "views":
            assert self.view_table is not None
            return self.view_table.copy()
        if self.kind == "circular":
            assert self.uniform is not None
            u = self.uniform
            table = np.tile(np.asarray([float(getattr(u, f)) for f in _VIEW_FIELDS]),
                            (self.num_views, 1))
            table[:, 0] = self.first_angle_deg + np.arange(self.num_views) * (
                self.arc_deg / self.num_views)
            return table
        raise ValueError(f"a geometry of kind {self.kind!r} has no per-view RTK parameters "
                         "(projection matrices are not decomposed here)")

    def resolved_detector_origin(self) -> Pair:
        """The detector origin (ov, ou), centred when none was given."""
        if self.detector_origin is not None:
            return self.detector_origin
        if self.detector_shape is None:
            raise ValueError("the detector's shape is not known yet")
        rows, cols = self.detector_shape
        return (-(rows - 1) / 2.0 * self.detector_spacing[0],
                -(cols - 1) / 2.0 * self.detector_spacing[1])

    def magnification(self) -> float:
        """SDD / SID of the first view (for matrices: estimated from the first matrix)."""
        if self.kind == "circular":
            assert self.uniform is not None
            return self.uniform.sdd / self.uniform.sid
        if self.kind == "views":
            assert self.view_table is not None
            return float(self.view_table[0, 2] / self.view_table[0, 1])
        assert self.matrices is not None
        # RTK's matrix is K [R | t] with K's focal term SDD and t_z = SID
        # (up to the common scale w): |row 0 of M[:, :3]| / M[2, 3] = SDD / SID.
        m = self.matrices[0]
        return float(np.linalg.norm(m[0, :3]) / abs(m[2, 3])) if m[2, 3] != 0 else 1.0

    def default_volume(self) -> Volume:
        """A grid matched to the detector: one voxel per pixel at the isocentre.

        ``(cols, rows, cols)`` voxels of ``min(pixel pitch) / magnification``,
        centred on the isocentre: the cube the detector's width sweeps, as
        tall as the detector sees at the axis.
        """
        if self.detector_shape is None:
            raise ValueError("the detector's shape is not known: give detector_shape or "
                             "projections")
        rows, cols = self.detector_shape
        voxel = min(self.detector_spacing) / self.magnification()
        return Volume((cols, rows, cols), voxel)

    def _fill(self, cfg: _native.Config) -> list:
        """Writes detector and scan into cfg; returns the buffers it points into
        (the caller keeps them alive until fdk_create has copied them)."""
        if self.detector_shape is None:
            raise ValueError("the detector's shape is not known")
        # Every value checked where it meets ctypes (the dataclass's fields
        # can be changed with object.__setattr__, its arrays in place), and
        # all of them before the first is written.
        shape = _shape2(self.detector_shape)
        assert shape is not None
        rows, cols = shape
        sv, su = _pair(self.detector_spacing, "detector_spacing", positive=True)
        ov, ou = _pair(self.resolved_detector_origin(), "detector_origin")
        num_views = _num_views(self.num_views)
        first = check_float(self.first_angle_deg, "first_angle_deg")
        arc = check_float(self.arc_deg, "arc_deg")
        self._check_trajectory()
        uniform = self.uniform._to_c() if isinstance(self.uniform, ViewGeometry) else None
        cfg.detector.size[:] = [cols, rows]
        cfg.detector.spacing[:] = [su, sv]
        cfg.detector.origin[:] = [ou, ov]
        scan = cfg.scan
        scan.num_views = num_views
        keep: list = []
        if self.kind == "circular":
            assert self.uniform is not None
            scan.kind = SCAN_UNIFORM
            scan.first_angle_deg = first
            scan.arc_deg = arc
            scan.uniform = uniform
        elif self.kind == "views":
            assert self.view_table is not None
            views = (_native.View * self.num_views)()
            ctypes_view = np.ctypeslib.as_array(
                (ctypes.c_double * (9 * self.num_views)).from_buffer(views))
            ctypes_view[:] = self.view_table.reshape(-1)
            scan.kind = SCAN_VIEWS
            scan.views = views
            keep.append(views)
        elif self.kind == "matrices":
            assert self.matrices is not None
            scan.kind = SCAN_MATRICES
            scan.matrices = self.matrices.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
            keep.append(self.matrices)
        else:
            raise ValueError(f"unknown geometry kind {self.kind!r}")
        return keep



def _detector(spacing: Union[float, Sequence[float]], origin: Optional[Sequence[float]],
              shape: Optional[Sequence[int]]) -> dict:
    """The detector fields of a Geometry, normalised."""
    return {"detector_spacing": _pair(spacing, "detector_spacing", positive=True),
            "detector_origin": None if origin is None else _pair(origin, "detector_origin"),
            "detector_shape": _shape2(shape)}


def _shape2(shape: Optional[Sequence[int]]) -> Optional[Tuple[int, int]]:
    """(rows, cols), each an int32 of fdk_detector.size, at least 1."""
    if shape is None:
        return None
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__len__"):
        raise TypeError(f"detector_shape must be (rows, cols), got {shape!r}")
    if len(shape) != 2:
        raise ValueError(f"detector_shape must be (rows, cols), got {shape!r}")
    rows = check_int(shape[0], "detector_shape[0] (rows)", 1, INT32_MAX)
    cols = check_int(shape[1], "detector_shape[1] (cols)", 1, INT32_MAX)
    return (rows, cols)


def _num_views(n: Any) -> int:
    """fdk_scan.num_views: an int32, at least 1."""
    return check_int(n, "num_views", 1, INT32_MAX)
