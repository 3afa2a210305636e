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

from . import errors, phantom
from ._native import LibraryNotFoundError, library_path
from ._reconstruct import empty_volume, reconstruct
from .errors import FdkError
from .geometry import Geometry, ViewGeometry, Volume
from .reconstructor import Progress, Reconstructor, Slab
from .volume_array import VolumeArray

__version__ = "0.5.0"


def library_version() -> str:
    """The version of the libfdk actually loaded ("MAJOR.MINOR.PATCH")."""
    from ._native import lib
    return lib().fdk_version_string().decode()


def backend_info() -> dict:
    """What the loaded library can run here (``fdk_get_backend_info``)."""
    import ctypes

    from ._native import BackendInfoC, lib
    info = BackendInfoC(struct_size=ctypes.sizeof(BackendInfoC))
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
    }


__all__ = ["reconstruct", "empty_volume", "Reconstructor", "Geometry", "Volume", "ViewGeometry",
           "VolumeArray", "Progress", "Slab", "FdkError", "LibraryNotFoundError",
           "errors", "phantom", "library_path", "library_version", "backend_info", "__version__"]
