"""fdk_ct: cone-beam CT reconstruction (Feldkamp-Davis-Kress) with libfdk.

numpy in, numpy out::

    import fdk_ct
    geo = fdk_ct.Geometry.circular(360, sid=1000.0, sdd=1500.0, detector_spacing=0.75)
    vol = fdk_ct.reconstruct(projections, geo)   # projections: (views, rows, cols)

or view by view as the scanner turns, with :class:`Reconstructor`. The
geometry follows RTK (rotation axis y); arrays are (views, rows, cols) for
projections and (z, y, x) for the volume.
"""
from __future__ import annotations

from typing import Optional

from . import errors, phantom
from ._native import LibraryNotFoundError, library_path
from ._reconstruct import empty_volume, reconstruct
from .errors import FdkError
from .estimator import GeometryEstimator, estimate_geometry
from .geometry import Geometry, ViewGeometry, Volume
from .geometry_estimate import GeometryEstimate
from .preview import PreviewInfo, PreviewSlices
from .reconstructor import Progress, Reconstructor, Slab
from .volume_array import VolumeArray

__version__ = "0.9.0"


def library_version() -> str:
    """The version of the libfdk actually loaded ("MAJOR.MINOR.PATCH")."""
    from ._native import lib
    return lib().fdk_version_string().decode()


def _cuda_version_text(version: Optional[int]) -> str:
    """A CUDA version as cuDriverGetVersion writes it (13000) in words
    ("13.0"); "" for 0 or None (no driver, or not known)."""
    if not version or version < 0:
        return ""
    return f"{version // 1000}.{(version % 1000) // 10}"


def backend_info() -> dict:
    """What the loaded library can run here (``fdk_get_backend_info``).

    ``driver_version``: the CUDA version the NVIDIA driver supports, as
    cuDriverGetVersion (13000 for 13.0; 0 when no driver could be loaded);
    ``driver_required``: the oldest such version the library's GPU code loads
    on (13000: NVIDIA driver 580 or newer). Both are None with a libfdk
    older than 0.6, which does not report them. ``driver_version_text`` and
    ``driver_required_text`` say the same as "13.0" ("" for 0 or None). The
    GPU needs only the NVIDIA driver, no CUDA toolkit.
    """
    import ctypes

    from ._native import BackendInfoC, lib
    # A 0.5 library knows the struct without 0.6's driver fields, and refuses
    # any other struct_size.
    has_driver = lib().fdk_version() >= 600
    size = ctypes.sizeof(BackendInfoC) if has_driver else BackendInfoC.driver_version.offset
    info = BackendInfoC(struct_size=size)
    status = lib().fdk_get_backend_info(ctypes.byref(info))
    errors.raise_for(status, lib().fdk_last_create_error().decode(errors="replace"))
    n = min(info.num_devices, len(info.compute_capability))
    return {
        "cuda_built": bool(info.cuda_built),
        "cuda_usable": bool(info.cuda_usable),
        "sass": list(info.sass[:info.num_sass]),
        "ptx": info.ptx,
        "devices": [{"compute_capability": info.compute_capability[i],
                     "code": ("none", "sass", "jit")[info.code[i]] if 0 <= info.code[i] < 3
                     else str(info.code[i]),
                     "code_arch": info.code_arch[i]} for i in range(n)],
        "message": info.message.decode(errors="replace"),
        "driver_version": info.driver_version if has_driver else None,
        "driver_required": info.driver_required if has_driver else None,
        "driver_version_text": _cuda_version_text(info.driver_version if has_driver else None),
        "driver_required_text": _cuda_version_text(info.driver_required if has_driver else None),
    }


__all__ = ["reconstruct", "empty_volume", "Reconstructor", "Geometry", "Volume", "ViewGeometry",
           "VolumeArray", "estimate_geometry", "GeometryEstimate", "GeometryEstimator",
           "PreviewInfo", "PreviewSlices", "Progress", "Slab", "FdkError",
           "LibraryNotFoundError", "errors", "phantom", "library_path", "library_version",
           "backend_info", "__version__"]
