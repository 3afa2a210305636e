"""RTK's geometry files to and from :class:`~fdk_ct.Geometry` (the format
itself, and the rules it is read by, are in :mod:`.rtk_xml_format`)."""
from __future__ import annotations

import os
from typing import Optional, Sequence, Tuple, Union

from ..geometry import Geometry
from .rtk_xml_format import FIELDS, MATRIX_TOLERANCE, format_table, parse, rtk_matrix

__all__ = ["read", "write_rtk_xml", "format_rtk_xml", "parse", "rtk_matrix", "FIELDS",
           "MATRIX_TOLERANCE"]


def read(path: Union[str, "os.PathLike[str]"], detector_spacing: Union[float, Sequence[float]], *,
         detector_shape: Optional[Tuple[int, int]] = None,
         detector_origin: Optional[Sequence[float]] = None) -> Geometry:
    """Reads an RTK geometry file into a per-view :class:`~fdk_ct.Geometry`.

    Parameters
    ----------
    path : str or path-like
        The XML file (as written by ``rtksimulatedgeometry``, RTK's
        ``ThreeDCircularProjectionGeometryXMLFileWriter`` or
        :func:`write_rtk_xml`).
    detector_spacing : float or (sv, su)
        Pixel pitch; RTK keeps it in the projections' image header, not in
        the geometry file.
    detector_shape : (rows, cols), optional
    detector_origin : (ov, ou), optional
        Centre of pixel [0, 0] in detector coordinates (the projections'
        ITK origin); default centred.

    Returns
    -------
    Geometry
        ``kind == "views"``, one row of RTK parameters per ``<Projection>``.

    Raises
    ------
    ValueError
        Not an RTK geometry file, or one RTK or libfdk would refuse.
    """
    return Geometry.from_rtk_xml(path, detector_spacing, detector_shape=detector_shape,
                                 detector_origin=detector_origin)


def format_rtk_xml(geometry: Geometry) -> str:
    """The RTK version 3 document of a circular or per-view geometry, laid out
    as RTK writes it (:func:`.rtk_xml_format.format_table`)."""
    return format_table(geometry.view_parameters())


def write_rtk_xml(geometry: Geometry, path: Union[str, "os.PathLike[str]"]) -> None:
    """Writes a circular or per-view geometry as an RTK geometry file.

    The detector (pitch, origin, shape) is not part of RTK's file: it
    belongs in the projections' image header. A geometry built from
    projection matrices is refused (ValueError).
    """
    text = format_rtk_xml(geometry)
    tmp = os.fspath(path) + ".tmp"
    with open(tmp, "w", encoding="ascii") as f:
        f.write(text)
    os.replace(tmp, path)
