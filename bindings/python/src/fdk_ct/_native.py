"""Loading libfdk and the ctypes mirrors of fdk.h.

The binding is pure Python over the C ABI: the same libfdk.so serves C, C#
and Python, and a wheel carries the very library the C tests measured. Every
struct below mirrors fdk.h field for field; `struct_size` versioning (the
library accepts an older, smaller struct) is what keeps this durable, and
the test suite checks each size against the library's own `*_init`.

ctypes.CDLL releases the GIL around every foreign call, so a pusher thread
and a reader thread run at once.
"""
from __future__ import annotations

import ctypes
import os
import threading
from ctypes import (POINTER, c_char, c_char_p, c_double, c_int32, c_size_t,
                    c_uint32, c_uint64, c_int64, c_void_p)
from pathlib import Path
from typing import Any, Optional

MAX_DEVICES = 16
MAX_GPU_ARCHS = 16
# The oldest library this binding drives: it sets fields appended in 0.5.
REQUIRED_VERSION = (0, 5)


class View(ctypes.Structure):
    _fields_ = [
        ("gantry_angle_deg", c_double),
        ("sid", c_double),
        ("sdd", c_double),
        ("source_offset_x", c_double),
        ("source_offset_y", c_double),
        ("projection_offset_x", c_double),
        ("projection_offset_y", c_double),
        ("in_plane_angle_deg", c_double),
        ("out_of_plane_angle_deg", c_double),
    ]


class VolumeC(ctypes.Structure):
    _fields_ = [("size", c_int32 * 3), ("spacing", c_double * 3), ("origin", c_double * 3)]


class DetectorC(ctypes.Structure):
    _fields_ = [("size", c_int32 * 2), ("spacing", c_double * 2), ("origin", c_double * 2)]


class Scan(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("kind", c_int32),
        ("num_views", c_int32),
        ("first_angle_deg", c_double),
        ("arc_deg", c_double),
        ("uniform", View),
        ("views", POINTER(View)),
        ("matrices", POINTER(c_double)),
    ]


class Config(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("volume", VolumeC),
        ("detector", DetectorC),
        ("scan", Scan),
        ("window", c_int32),
        ("cutoff", c_double),
        ("short_scan", c_int32),
        ("offset_detector", c_int32),
        ("truncation_padding", c_double),
        ("backend", c_int32),
        ("num_devices", c_int32),
        ("devices", c_int32 * MAX_DEVICES),
        ("host_memory_budget", c_uint64),
        ("gpu_memory_budget", c_uint64),
        ("precision", c_int32),
        ("num_threads", c_int32),
        ("slab_thickness", c_int32),
        ("outside_fov", c_int32),
        ("store_policy", c_int32),
        ("hann_cutoff_v", c_double),
        # Appended in 0.7; an older library's fdk_config_init writes a
        # smaller struct_size and never reads it (options.fill refuses to
        # set it there). init_config() initialises the struct.
        ("estimate_geometry", c_int32),
        # Appended in 0.8 (the live preview).
        ("preview", c_int32),
        ("preview_volume", VolumeC),
    ]


class SlabInfo(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("y_begin", c_int32), ("y_end", c_int32),
                ("byte_size", c_uint64)]


class ProgressC(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("phase", c_int32),
        ("views_pushed", c_int32),
        ("views_total", c_int32),
        ("slabs_done", c_int32),
        ("slabs_total", c_int32),
        ("backprojection_done", c_int64),
        ("backprojection_total", c_int64),
    ]


class StoreInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("views_stored", c_int32),
        ("raw_bytes", c_uint64),
        ("stored_bytes", c_uint64),
        ("ratio", c_double),
        ("rel_error_bound", c_double),
        ("abs_error_bound_factor", c_double),
        ("views_reduced", c_int32),
    ]


class PlanInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("backend", c_int32),
        ("num_slabs", c_int32),
        ("slab_thickness", c_int32),
        ("short_scan", c_int32),
        ("offset_detector", c_int32),
        ("num_threads", c_int32),
        ("host_memory_budget", c_uint64),
        ("gpu_memory_budget", c_uint64),
        ("outside_fov", c_int32),
        ("voxels_outside_fov", c_uint64),
        ("half_fan_inferior", c_double),
        ("half_fan_superior", c_double),
        ("store_policy", c_int32),
        ("store_fit", c_int32),
        ("store_limit", c_uint64),
    ]


class Timings(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("filter_seconds", c_double),
        ("store_seconds", c_double),
        ("backproject_seconds", c_double),
        ("upload_seconds", c_double),
        ("download_seconds", c_double),
    ]


class DeviceStats(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("num_devices", c_int32),
        ("ordinal", c_int32 * MAX_DEVICES),
        ("busy_seconds", c_double * MAX_DEVICES),
        ("slabs_computed", c_int32 * MAX_DEVICES),
        ("failed", c_int32 * MAX_DEVICES),
    ]


class BackendInfoC(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("cuda_built", c_int32),
        ("cuda_usable", c_int32),
        ("num_sass", c_int32),
        ("sass", c_int32 * MAX_GPU_ARCHS),
        ("ptx", c_int32),
        ("num_devices", c_int32),
        ("compute_capability", c_int32 * MAX_DEVICES),
        ("code", c_int32 * MAX_DEVICES),
        ("code_arch", c_int32 * MAX_DEVICES),
        ("message", c_char * 256),
        # Added in 0.6; a 0.5 library takes the struct without them
        # (backend_info passes the smaller struct_size there).
        ("driver_version", c_int32),
        ("driver_required", c_int32),
    ]


class GeometryEstimateC(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("offset_u_mm", c_double),
        ("offset_u_pixels", c_double),
        ("tilt_deg", c_double),
        ("offset_sigma_pixels", c_double),
        ("tilt_sigma_deg", c_double),
        ("confidence", c_double),
        ("view_pairs", c_int32),
        ("views_used", c_int32),
        ("rows_used", c_int32),
        ("flags", c_uint32),
        ("basis", c_char * 256),
    ]


# Added in 0.8 (the live preview).
PREVIEW_COMPLETE = 1  # FDK_PREVIEW_COMPLETE
PREVIEW_FAILED = 2    # FDK_PREVIEW_FAILED


class PreviewInfoC(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("volume", VolumeC),
        ("views", c_int32),
        ("views_announced", c_int32),
        ("coverage", c_double),
        ("flags", c_uint32),
        ("on_gpu", c_int32),
        ("memory_bytes", c_uint64),
    ]


class PreviewSlicesC(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("at", c_int32 * 3),
        ("x_slice", c_void_p),
        ("x_slice_bytes", c_size_t),
        ("y_slice", c_void_p),
        ("y_slice_bytes", c_size_t),
        ("z_slice", c_void_p),
        ("z_slice_bytes", c_size_t),
    ]


PROGRESS_FN = ctypes.CFUNCTYPE(None, c_void_p, POINTER(ProgressC))

_Ctx = c_void_p
_PROTOTYPES = {
    "fdk_version": (ctypes.c_uint, []),
    "fdk_version_string": (c_char_p, []),
    "fdk_status_string": (c_char_p, [c_int32]),
    "fdk_config_init": (POINTER(Config), [POINTER(Config)]),
    "fdk_scan_init": (POINTER(Scan), [POINTER(Scan)]),
    "fdk_create": (c_int32, [POINTER(Config), POINTER(_Ctx)]),
    "fdk_destroy": (None, [_Ctx]),
    "fdk_last_error": (c_char_p, [_Ctx]),
    "fdk_last_create_error": (c_char_p, []),
    "fdk_push_projection": (c_int32, [_Ctx, c_int32, c_void_p, c_size_t, POINTER(View)]),
    "fdk_finish": (c_int32, [_Ctx]),
    "fdk_get_view_state": (c_int32, [_Ctx, c_int32, POINTER(c_int32), POINTER(c_int32)]),
    "fdk_slab_count": (c_int32, [_Ctx, POINTER(c_int32)]),
    "fdk_get_slab_info": (c_int32, [_Ctx, c_int32, POINTER(SlabInfo)]),
    "fdk_read_slab": (c_int32, [_Ctx, c_int32, c_void_p, c_size_t]),
    "fdk_slab_ready": (c_int32, [_Ctx, c_int32, POINTER(c_int32)]),
    "fdk_set_progress_callback": (c_int32, [_Ctx, PROGRESS_FN, c_void_p]),
    "fdk_get_progress": (c_int32, [_Ctx, POINTER(ProgressC)]),
    "fdk_cancel": (c_int32, [_Ctx]),
    "fdk_get_store_info": (c_int32, [_Ctx, POINTER(StoreInfo)]),
    "fdk_get_plan_info": (c_int32, [_Ctx, POINTER(PlanInfo)]),
    "fdk_get_timings": (c_int32, [_Ctx, POINTER(Timings)]),
    "fdk_get_device_stats": (c_int32, [_Ctx, POINTER(DeviceStats)]),
    "fdk_get_backend_info": (c_int32, [POINTER(BackendInfoC)]),
}

# Added in 0.7 (geometry estimation): bound when the library has them, so
# that everything else still runs on a 0.5 or 0.6 library; the functions
# that need them ask through geometry_estimation().
_Estimator = c_void_p
_GEOMETRY_ESTIMATION_PROTOTYPES = {
    "fdk_geometry_estimate_init": (POINTER(GeometryEstimateC), [POINTER(GeometryEstimateC)]),
    "fdk_get_geometry_estimate": (c_int32, [_Ctx, POINTER(GeometryEstimateC)]),
    "fdk_estimator_create": (c_int32, [POINTER(Config), POINTER(_Estimator)]),
    "fdk_estimator_push": (c_int32, [_Estimator, c_int32, c_void_p, c_size_t]),
    "fdk_estimator_estimate": (c_int32, [_Estimator, POINTER(GeometryEstimateC)]),
    "fdk_estimator_last_error": (c_char_p, [_Estimator]),
    "fdk_estimator_destroy": (None, [_Estimator]),
    "fdk_apply_geometry_estimate": (c_int32, [POINTER(GeometryEstimateC), POINTER(View),
                                              POINTER(View)]),
}

# Added in 0.8 (the live preview): bound when the library has them; the
# functions that need them ask through preview().
_PREVIEW_PROTOTYPES = {
    "fdk_preview_info_init": (POINTER(PreviewInfoC), [POINTER(PreviewInfoC)]),
    "fdk_get_preview_info": (c_int32, [_Ctx, POINTER(PreviewInfoC)]),
    "fdk_read_preview": (c_int32, [_Ctx, c_void_p, c_size_t, POINTER(PreviewInfoC)]),
    "fdk_read_preview_slices": (c_int32, [_Ctx, POINTER(PreviewSlicesC), POINTER(PreviewInfoC)]),
}


# Added in 0.7 too: the init that writes exactly this binding's struct
# (init_config).
_OPTIONAL_PROTOTYPES = {
    "fdk_config_init_sized": (POINTER(Config), [POINTER(Config), c_size_t]),
}


class LibraryNotFoundError(ImportError):
    """libfdk could not be found or loaded, or is older than this binding needs."""


def _candidates() -> list[str]:
    explicit = os.environ.get("FDK_CT_LIBRARY")
    if explicit:
        # An explicit choice is never second-guessed by a fallback.
        return [explicit]
    bundled = Path(__file__).resolve().parent / "_lib" / "libfdk.so"
    return [str(bundled), "libfdk.so.0"]


def _load() -> ctypes.CDLL:
    tried = []
    for name in _candidates():
        if os.sep in name and not os.path.exists(name):
            tried.append(f"{name}: no such file")
            continue
        try:
            lib = ctypes.CDLL(name)
        except OSError as e:
            tried.append(f"{name}: {e}")
            continue
        for fn, (restype, argtypes) in _PROTOTYPES.items():
            try:
                f = getattr(lib, fn)
            except AttributeError as e:
                raise LibraryNotFoundError(f"{name} lacks {fn}: not a libfdk >= "
                                           f"{REQUIRED_VERSION[0]}.{REQUIRED_VERSION[1]}") from e
            f.restype = restype
            f.argtypes = argtypes
        for fn, (restype, argtypes) in {**_GEOMETRY_ESTIMATION_PROTOTYPES, **_PREVIEW_PROTOTYPES,
                                   **_OPTIONAL_PROTOTYPES}.items():
            f = getattr(lib, fn, None)
            if f is not None:
                f.restype = restype
                f.argtypes = argtypes
        v = lib.fdk_version()
        major, minor = v // 10000, (v // 100) % 100
        if major != REQUIRED_VERSION[0] or minor < REQUIRED_VERSION[1]:
            raise LibraryNotFoundError(
                f"{name} is libfdk {lib.fdk_version_string().decode()}; this binding needs "
                f"{REQUIRED_VERSION[0]}.{REQUIRED_VERSION[1]} or a later "
                f"{REQUIRED_VERSION[0]}.x")
        lib._fdk_path = name  # type: ignore[attr-defined]
        return lib
    raise LibraryNotFoundError(
        "libfdk not found; set FDK_CT_LIBRARY to the path of libfdk.so. Tried: "
        + "; ".join(tried))


def _make_data_pointer():
    """The address of an ndarray's first element, fast.

    ``arr.ctypes.data`` builds a helper object per call (about 1 us, a
    third of what a push costs in Python). numpy's PyArrayObject starts with
    the object header and then its data pointer, a layout that is part of
    numpy's C ABI; in CPython ``id`` is the object's address. Checked here
    once against ``arr.ctypes.data``, with that as the fallback.
    """
    import numpy as np
    header = object.__basicsize__
    read = ctypes.c_void_p.from_address

    def fast(arr: "np.ndarray") -> int:
        return read(id(arr) + header).value or 0

    def slow(arr: "np.ndarray") -> int:
        return arr.ctypes.data

    try:
        probe = np.arange(12, dtype=np.float32).reshape(3, 4)[1:, 1:]
        if all(fast(a) == a.ctypes.data for a in (probe, probe[1], probe.T)):
            return fast
    except Exception:  # a Python without id() as address: the documented way
        pass
    return slow


data_pointer = _make_data_pointer()


def _make_address_object():
    """The address of an ndarray's first element as a ``c_void_p``, for the
    calls made once a view: ctypes passes a ``c_void_p`` to a ``c_void_p``
    parameter as it is, where an int is converted (0.56 against 1.1 us a
    push, development machine). The same layout fact and check as
    :func:`data_pointer`."""
    read = ctypes.c_void_p.from_address
    header = object.__basicsize__
    if data_pointer.__name__ == "fast":
        def fast(arr: Any) -> ctypes.c_void_p:
            return read(id(arr) + header)
        return fast

    def slow(arr: Any) -> ctypes.c_void_p:
        return ctypes.c_void_p(arr.ctypes.data)
    return slow


address_object = _make_address_object()

_lib: Optional[ctypes.CDLL] = None
_lib_lock = threading.Lock()


def lib() -> ctypes.CDLL:
    """The loaded library (loaded on first use, so that importing fdk_ct never fails)."""
    global _lib
    if _lib is None:
        with _lib_lock:
            if _lib is None:
                _lib = _load()
    return _lib


def init_config(cfg: "Config") -> None:
    """fdk_config_init for this binding's struct: a 0.7 or later library
    writes exactly ``sizeof(Config)`` bytes (fdk_config_init_sized); an
    older one (or one older than this binding's struct) writes its own,
    smaller layout through fdk_config_init, and struct_size says which."""
    loaded = lib()
    sized = getattr(loaded, "fdk_config_init_sized", None)
    if sized is None or not sized(ctypes.byref(cfg), ctypes.sizeof(cfg)):
        loaded.fdk_config_init(ctypes.byref(cfg))


def geometry_estimation() -> ctypes.CDLL:
    """The library, once it is known to have the geometry estimation of 0.7
    (LibraryNotFoundError naming what it lacks otherwise)."""
    loaded = lib()
    for fn in _GEOMETRY_ESTIMATION_PROTOTYPES:
        if not hasattr(loaded, fn):
            raise LibraryNotFoundError(
                f"geometry estimation needs libfdk 0.7 or later; the library loaded "
                f"({loaded.fdk_version_string().decode()}) lacks {fn}")
    return loaded


def preview() -> ctypes.CDLL:
    """The library, once it is known to have the live preview of 0.8
    (LibraryNotFoundError naming what it lacks otherwise)."""
    loaded = lib()
    for fn in _PREVIEW_PROTOTYPES:
        if not hasattr(loaded, fn):
            raise LibraryNotFoundError(
                f"the live preview needs libfdk 0.8 or later; the library loaded "
                f"({loaded.fdk_version_string().decode()}) lacks {fn}")
    return loaded


def library_path() -> str:
    """The file the library was loaded from (resolved through the loader)."""
    lib()
    # /proc/self/maps names the file the loader actually mapped, which is the
    # honest answer when a bare soname was resolved through the search path.
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                # address perms offset dev inode [path]: a path may hold spaces
                fields = line.rstrip("\n").split(maxsplit=5)
                if len(fields) == 6 and os.path.basename(fields[5]).startswith("libfdk.so"):
                    return fields[5]
    except OSError:
        pass
    return getattr(_lib, "_fdk_path", "")
