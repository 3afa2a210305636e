"""Keyword options to fdk_config fields: names in, pinned enum values out."""
from __future__ import annotations

import re
from typing import Optional, Sequence, Union

from . import _native

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
    """Bytes from an int or a string such as "8GiB" or "500 MB"; 0/None = default."""
    if value is None:
        return 0
    if isinstance(value, str):
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", value)
        if not m or m.group(2).lower() not in _UNITS:
            raise ValueError(f"{name} must be bytes or a size such as '8GiB'; got {value!r}")
        return int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative number of bytes; got {value!r}")
    return value


def _switch(value: Optional[bool]) -> int:
    return 0 if value is None else (1 if value else 2)


def fill(cfg: _native.Config, *, window: str = "ram-lak", cutoff: float = 1.0,
         backend: str = "auto", precision: str = "float32",
         budget: Union[int, str, None] = None, gpu_budget: Union[int, str, None] = None,
         devices: Optional[Sequence[int]] = None, threads: int = 0,
         slab_thickness: int = 0, short_scan: Optional[bool] = None,
         offset_detector: Optional[bool] = None, truncation_padding: float = 0.0,
         outside_fov: str = "backproject", store_policy: str = "reduce-precision",
         hann_cutoff_v: float = 0.0) -> None:
    """Sets the options on a config already initialised by fdk_config_init.

    Values are range-checked by the library (fdk_create names the field);
    only what ctypes cannot carry is checked here.
    """
    cfg.window = _choice(WINDOWS, window, "window")
    cfg.cutoff = float(cutoff)
    cfg.backend = _choice(BACKENDS, backend, "backend")
    cfg.precision = _choice(PRECISIONS, precision, "precision")
    cfg.host_memory_budget = parse_bytes(budget, "budget")
    cfg.gpu_memory_budget = parse_bytes(gpu_budget, "gpu_budget")
    if devices is not None:
        devs = [int(d) for d in devices]
        if not 1 <= len(devs) <= _native.MAX_DEVICES:
            raise ValueError(f"devices must list 1 to {_native.MAX_DEVICES} GPUs; got {devs}")
        cfg.num_devices = len(devs)
        for i, d in enumerate(devs):
            cfg.devices[i] = d
    cfg.num_threads = _int32(threads, "threads")
    cfg.slab_thickness = _int32(slab_thickness, "slab_thickness")
    cfg.short_scan = _switch(short_scan)
    cfg.offset_detector = _switch(offset_detector)
    cfg.truncation_padding = float(truncation_padding)
    cfg.outside_fov = _choice(OUTSIDE_FOV, outside_fov, "outside_fov")
    cfg.store_policy = _choice(STORE_POLICIES, store_policy, "store_policy")
    cfg.hann_cutoff_v = float(hann_cutoff_v)


def _int32(value: int, name: str) -> int:
    v = int(value)
    if not -2**31 <= v < 2**31:
        raise ValueError(f"{name} out of range: {value!r}")
    return v
