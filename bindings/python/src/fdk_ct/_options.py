"""Keyword options to fdk_config fields: names in, pinned enum values out."""
from __future__ import annotations

import ctypes
import re
from fractions import Fraction
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from . import _native
from ._checks import INT32_MAX, UINT64_MAX, check_float, check_int
from .geometry import Volume

WINDOWS = {"ram-lak": 0, "shepp-logan": 1, "cosine": 2, "hamming": 3, "hann": 4}
BACKENDS = {"auto": 0, "cpu": 1, "cuda": 2}
BACKEND_NAMES = {v: k for k, v in BACKENDS.items()}
PRECISIONS = {"float32": 0, "float16": 1}
OUTSIDE_FOV = {"backproject": 0, "zero": 1}
STORE_POLICIES = {"reduce-precision": 0, "strict": 1}

_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "m": 10**6, "mb": 10**6, "g": 10**9,
          "gb": 10**9, "t": 10**12, "tb": 10**12, "kib": 2**10, "mib": 2**20,
          "gib": 2**30, "tib": 2**40}


def _choice(table: dict, value: str, name: str) -> int:
    key = str(value).lower().replace("_", "-")
    if key not in table:
        raise ValueError(f"{name} must be one of {', '.join(table)}; got {value!r}")
    return table[key]


def parse_bytes(value: Union[int, str, None], name: str) -> int:
    """Bytes from an integer or a string such as "8GiB" or "500 MB"; 0/None =
    default. The result must fit the uint64 field it fills (0..2**64-1); a
    size that is not a whole number of bytes ("1.5 B") is refused, not
    rounded."""
    if value is None:
        return 0
    if isinstance(value, str):
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", value)
        if not m or m.group(2).lower() not in _UNITS:
            raise ValueError(f"{name} must be bytes or a size such as '8GiB'; got {value!r}")
        # Exact arithmetic: float() would round 2**64 + 1 down onto a value
        # that fits.
        exact = Fraction(m.group(1)) * _UNITS[m.group(2).lower()]
        if exact.denominator != 1:
            raise ValueError(f"{name} {value!r} is not a whole number of bytes")
        value = int(exact)
    return check_int(value, name, 0, UINT64_MAX, "uint64")


def _switch(value: Optional[bool], name: str) -> int:
    """fdk_switch: AUTO for None, ON, OFF. Only None and bools: a string such
    as "false" is truthy and would switch the weights on."""
    if value is None:
        return 0
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be None (automatic), True or False; got {value!r}")
    return 1 if value else 2


def _flag(value: bool, name: str) -> int:
    """An int32 0/1 field from a bool only (a string such as "false" is truthy)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {value!r}")
    return 1 if value else 0


def _preview(value: Any) -> Tuple[int, Optional[Volume]]:
    """fdk_config.preview and the grid for preview_volume from False (no
    preview), True (the library's default grid: None, a zeroed fdk_volume)
    or a Volume (that grid)."""
    if isinstance(value, Volume):
        return 1, value
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"preview must be True, False or an fdk_ct.Volume (its grid); "
                        f"got {value!r}")
    return (1 if value else 0), None


def _devices(devices: Any) -> list:
    """The CUDA ordinals for fdk_config.devices (at most FDK_MAX_DEVICES int32)."""
    if isinstance(devices, (str, bytes)) or not hasattr(devices, "__iter__"):
        raise TypeError(f"devices must be a sequence of GPU ordinals; got {devices!r}")
    devs = list(devices)
    if not 1 <= len(devs) <= _native.MAX_DEVICES:
        raise ValueError(f"devices must list 1 to {_native.MAX_DEVICES} GPUs "
                         f"(FDK_MAX_DEVICES); got {len(devs)}")
    return [check_int(d, f"devices[{i}]", 0, INT32_MAX) for i, d in enumerate(devs)]


def fill(cfg: _native.Config, *, window: str = "ram-lak", cutoff: float = 1.0,
         backend: str = "auto", precision: str = "float32",
         budget: Union[int, str, None] = None, gpu_budget: Union[int, str, None] = None,
         devices: Optional[Sequence[int]] = None, threads: int = 0,
         slab_thickness: int = 0, short_scan: Optional[bool] = None,
         offset_detector: Optional[bool] = None, truncation_padding: float = 0.0,
         outside_fov: str = "backproject", store_policy: str = "reduce-precision",
         hann_cutoff_v: float = 0.0, estimate_geometry: bool = False,
         preview: Union[bool, Volume] = False) -> None:
    """Sets the options on a config already initialised by fdk_config_init.

    Every value is checked against its C field first (_checks: a number
    that would not fit is a ValueError naming the option and the limit);
    nothing is written until all of them passed. The library checks its
    documented ranges (fdk_create names the field).
    """
    values = dict(
        window=_choice(WINDOWS, window, "window"),
        cutoff=check_float(cutoff, "cutoff"),
        backend=_choice(BACKENDS, backend, "backend"),
        precision=_choice(PRECISIONS, precision, "precision"),
        host_memory_budget=parse_bytes(budget, "budget"),
        gpu_memory_budget=parse_bytes(gpu_budget, "gpu_budget"),
        num_threads=check_int(threads, "threads", 0, INT32_MAX),
        slab_thickness=check_int(slab_thickness, "slab_thickness", 0, INT32_MAX),
        short_scan=_switch(short_scan, "short_scan"),
        offset_detector=_switch(offset_detector, "offset_detector"),
        truncation_padding=check_float(truncation_padding, "truncation_padding"),
        outside_fov=_choice(OUTSIDE_FOV, outside_fov, "outside_fov"),
        store_policy=_choice(STORE_POLICIES, store_policy, "store_policy"),
        hann_cutoff_v=check_float(hann_cutoff_v, "hann_cutoff_v"),
        estimate_geometry=_flag(estimate_geometry, "estimate_geometry"))
    # A library older than 0.7 set a struct_size that ends before the field,
    # and would reconstruct without a word about the estimate asked for.
    if values["estimate_geometry"] and \
            cfg.struct_size < _native.Config.estimate_geometry.offset + 4:
        raise _native.LibraryNotFoundError(
            "estimate_geometry needs libfdk 0.7 or later; the library loaded is "
            f"{_native.lib().fdk_version_string().decode()}")
    # The same for the preview (0.8), whose grid ends the struct.
    preview_on, preview_grid = _preview(preview)
    if preview_on and cfg.struct_size < ctypes.sizeof(_native.Config):
        raise _native.LibraryNotFoundError(
            "preview needs libfdk 0.8 or later; the library loaded is "
            f"{_native.lib().fdk_version_string().decode()}")
    preview_c = _native.VolumeC()  # all sizes 0: the library's default grid
    if preview_grid is not None:
        preview_grid._to_c(preview_c)  # checked before anything is written
    devs = None if devices is None else _devices(devices)
    for field, value in values.items():
        setattr(cfg, field, value)
    if preview_on:
        cfg.preview = 1
        cfg.preview_volume = preview_c
    if devs is not None:
        cfg.num_devices = len(devs)
        for i, d in enumerate(devs):
            cfg.devices[i] = d
