"""RTK's geometry file format (``RTKThreeDCircularGeometry``, versions 2 and 3):
text to a table of per-view parameters and back. Nothing here knows
fdk_ct's Geometry, which builds on it (Geometry.from_rtk_xml,
rtk_xml.write_rtk_xml).

Reading follows RTK's own reader, as libfdk's C++ reader does
(``adapters/common/src/geometry_io.cpp``), so that a file means the same to
``fdk-convert``, to ``rtkfdk`` and to this package:

* every parameter element sets a value that persists for all later
  projections: one before the first ``<Projection>`` is global, one inside a
  ``<Projection>`` applies from that projection on; each ``<Projection>``
  adds one view;
* defaults are RTK's (0), so ``SourceToIsocenterDistance`` and
  ``SourceToDetectorDistance`` must appear (SDD 0, RTK's parallel beam, is
  refused);
* element names are case-insensitive, ``Angle`` is read as ``GantryAngle``,
  angles are in degrees;
* a ``<Matrix>`` is derived information: when present it must agree with
  the parameters to 0.001, as RTK requires;
* collimation elements are ignored; a non-zero
  ``RadiusCylindricalDetector`` is refused (flat panels only).

Anything else fails with a ValueError naming the file, the element and,
inside a projection, its index.
"""
from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from typing import Any, List, Optional, Sequence, Union

import numpy as np

# fdk_view's member order; also the order of Geometry.view_table's columns.
FIELDS = ("GantryAngle", "SourceToIsocenterDistance", "SourceToDetectorDistance",
          "SourceOffsetX", "SourceOffsetY", "ProjectionOffsetX", "ProjectionOffsetY",
          "InPlaneAngle", "OutOfPlaneAngle")
_ANGLES = (0, 7, 8)
_BY_NAME = {name.lower(): k for k, name in enumerate(FIELDS)}
_BY_NAME["angle"] = 0
_MAX_ANGLE_DEG = 1e6  # the library's bound: beyond it the step between views is lost
_MAX_BYTES = 256 << 20  # the C++ reader's bound (kMaxXmlBytes) against a runaway input
MATRIX_TOLERANCE = 1e-3  # RTK's own check of <Matrix> against the parameters


def read_text(path: Any) -> bytes:
    with open(path, "rb") as f:
        data = f.read(_MAX_BYTES + 1)
    if len(data) > _MAX_BYTES:
        raise ValueError(f"geometry '{os.fspath(path)}' is larger than {_MAX_BYTES >> 20} MiB")
    return data


def parse(text: Union[str, bytes], name: str = "<string>") -> List[List[float]]:
    """The views of an RTK geometry document: one list of 9 numbers per
    ``<Projection>``, in :data:`FIELDS` order. Raises ValueError."""
    data = text.encode() if isinstance(text, str) else text
    if b"\0" in data:
        at = data.index(b"\0")
        raise ValueError(f"geometry '{name}': a NUL byte at offset {at}; "
                         "geometry files are text (a binary or damaged file?)")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as e:
        raise ValueError(f"geometry '{name}': not well-formed XML ({e})") from None
    if root.tag != "RTKThreeDCircularGeometry":
        raise ValueError(f"geometry '{name}': the root element is <{root.tag}>, not "
                         "<RTKThreeDCircularGeometry> (not an RTK geometry file)")
    version = root.get("version")
    if version is None:
        raise ValueError(f"geometry '{name}': no version attribute (RTK needs version 3)")
    number = _number(version.strip())
    if number not in (2.0, 3.0):  # "3.0" is 3, as for the C++ reader
        raise ValueError(f"geometry '{name}': version {version!r} is not supported "
                         "(versions 2 and 3 are)")

    current = [0.0] * 9
    views: List[List[float]] = []
    for child in root:
        if child.tag.lower() != "projection":
            _apply(child, current, None, name, "")
            continue
        where = f"projection {len(views)}: "
        matrix: List[Optional[np.ndarray]] = [None]
        for element in child:
            _apply(element, current, matrix, name, where)
        sid, sdd = current[1], current[2]
        if not sid > 0:
            raise ValueError(f"geometry '{name}' {where}SourceToIsocenterDistance must be "
                             "given and > 0")
        if not sdd > 0:
            raise ValueError(f"geometry '{name}' {where}SourceToDetectorDistance "
                             + ("is 0 (a parallel geometry, not supported) or missing"
                                if sdd == 0 else "must be > 0"))
        if matrix[0] is not None:
            expected = rtk_matrix(current)
            bad = np.argwhere(~(np.abs(expected - matrix[0]) <= MATRIX_TOLERANCE))
            if bad.size:
                r, c = (int(i) for i in bad[0])
                raise ValueError(f"geometry '{name}' {where}the <Matrix> does not match the "
                                 f"parameters (row {r}, column {c}: {matrix[0][r, c]!r} in the "
                                 f"file, {expected[r, c]!r} from the parameters)")
        views.append(list(current))
    if not views:
        raise ValueError(f"geometry '{name}': no <Projection> element")
    return views


def _apply(element: ET.Element, current: List[float], matrix: Optional[list], name: str,
           where: str) -> None:
    tag = element.tag.lower()
    text = (element.text or "").strip()
    if tag == "matrix":
        values = _numbers(text)
        if values is None or len(values) != 12:
            raise ValueError(f"geometry '{name}' {where}<{element.tag}> must hold 12 numbers "
                             "(3 rows of 4)")
        if matrix is not None:
            matrix[0] = np.asarray(values).reshape(3, 4)
        return
    if tag == "radiuscylindricaldetector":
        r = _number(text)
        if r is None:
            raise ValueError(f"geometry '{name}' {where}<{element.tag}> {text[:40]!r} is not "
                             "a number")
        if r != 0.0:
            raise ValueError(f"geometry '{name}' {where}<{element.tag}> is {text}: a "
                             "cylindrical detector, not supported (flat panels only)")
        return
    k = _BY_NAME.get(tag)
    if k is None:
        return  # collimation and anything else: not the trajectory's
    v = _number(text)
    if v is None:
        raise ValueError(f"geometry '{name}' {where}<{element.tag}> {text[:40]!r} is not a "
                         "number")
    if k in _ANGLES and abs(v) > _MAX_ANGLE_DEG:
        raise ValueError(f"geometry '{name}' {where}<{element.tag}> {v!r} degrees: it must "
                         "lie within [-1e6, 1e6]")
    current[k] = v


def _number(text: str) -> Optional[float]:
    # Decimal only, as RTK's reader (float() would also take "inf", "nan", "1_0").
    if not text or len(text) > 64 or text.strip("0123456789+-.eE"):
        return None
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def _numbers(text: str) -> Optional[List[float]]:
    out = []
    for word in text.replace(",", " ").split():
        v = _number(word)
        if v is None:
            return None
        out.append(v)
    return out


def _normalise_degrees(a: float) -> float:
    r = math.fmod(a, 360.0)
    if r < 0:
        r += 360.0
    return 0.0 if r >= 360.0 else r


def rtk_matrix(view: Sequence[float]) -> np.ndarray:
    """RTK's 3x4 projection matrix of one view (9 numbers in :data:`FIELDS`
    order): homogeneous world ``(x, y, z, 1)`` to detector ``(u*w, v*w, w)``.

    RTK composes it as: the rotation ``Rz(-in_plane) Rx(-out_of_plane)
    Ry(-gantry)`` (angles wrapped to [0, 360) as RTK stores them), the source
    offset, the perspective division by the distance to the source (focal
    length SDD, source at SID) and the shift between source and projection
    offsets on the detector.
    """
    g, sid, sdd, sx, sy, px, py, ip, op = (float(x) for x in view)
    d2r = math.pi / 180.0
    a, o, i = (-_normalise_degrees(x) * d2r for x in (g, op, ip))
    ry = np.array([[math.cos(a), 0, math.sin(a)], [0, 1, 0], [-math.sin(a), 0, math.cos(a)]])
    rx = np.array([[1, 0, 0], [0, math.cos(o), -math.sin(o)], [0, math.sin(o), math.cos(o)]])
    rz = np.array([[math.cos(i), -math.sin(i), 0], [math.sin(i), math.cos(i), 0], [0, 0, 1]])
    rt = np.hstack([rz @ rx @ ry, [[-sx], [-sy], [0.0]]])
    magnify = np.array([[-sdd, 0, 0, 0], [0, -sdd, 0, 0], [0, 0, 1, -sid]], dtype=np.float64)
    shift = np.array([[1, 0, sx - px], [0, 1, sy - py], [0, 0, 1]], dtype=np.float64)
    return shift @ magnify @ np.vstack([rt, [0, 0, 0, 1]])


def format_table(table: np.ndarray) -> str:
    """The RTK version 3 document of an (N, 9) table of views (:data:`FIELDS`
    order), laid out
    as RTK writes it: a parameter shared by every view once at the top
    (offsets and tilts omitted when 0), the others and the gantry angle in
    each ``<Projection>``, angles wrapped to [0, 360), and each view's
    ``<Matrix>``."""
    table = np.array(table, dtype=np.float64)
    for k in _ANGLES:
        table[:, k] = [_normalise_degrees(a) for a in table[:, k]]
    lines = ['<?xml version="1.0"?>', "<!DOCTYPE RTKGEOMETRY>",
             '<RTKThreeDCircularGeometry version="3">']
    shared = [k > 0 and bool(np.all(table[:, k] == table[0, k])) for k in range(9)]
    for k in range(1, 9):
        if shared[k] and (k <= 2 or table[0, k] != 0.0):
            lines.append(f"  <{FIELDS[k]}>{float(table[0, k])!r}</{FIELDS[k]}>")
    for view in table:
        lines.append("  <Projection>")
        for k in range(9):
            if not shared[k]:
                lines.append(f"    <{FIELDS[k]}>{float(view[k])!r}</{FIELDS[k]}>")
        lines.append("    <Matrix>")
        for row in rtk_matrix(view):
            lines.append("      " + " ".join(f"{x:24.17g}" for x in row))
        lines.append("    </Matrix>")
        lines.append("  </Projection>")
    lines.append("</RTKThreeDCircularGeometry>")
    return "\n".join(lines) + "\n"
