"""Geometry from other tools, in RTK's convention (docs/PYTHON.md, "Geometry
from RTK, ASTRA and TIGRE").

* :mod:`~fdk_ct.interop.rtk_xml`: RTK's geometry files, read and written;
* :mod:`~fdk_ct.interop.astra`: ASTRA's ``cone_vec`` and ``cone``;
* :mod:`~fdk_ct.interop.tigre`: TIGRE's geometry object.

Each converter states its frame mapping and what it leaves out.
"""
from __future__ import annotations

from . import astra, rtk_xml, tigre
from .astra import from_cone_vec
from .rtk_xml import write_rtk_xml
from .tigre import from_tigre

__all__ = ["astra", "rtk_xml", "tigre", "from_cone_vec", "from_tigre", "write_rtk_xml"]
