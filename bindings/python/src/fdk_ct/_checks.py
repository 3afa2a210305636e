"""Every Python value checked against the C field it fills, before any C call.

ctypes stores an integer in an int32 or uint64 field modulo 2**32 or 2**64
without a word (a volume of 2**32+32 voxels becomes 32, a budget of 2**64
becomes 0, the default), and int() turns 2.5 into 2. So each value bound
for C passes through one of these helpers first, which either return it
exactly as C will see it or raise naming the field as the user wrote it
and the limit:

* ValueError: a number outside its field's range, a non-integral or
  non-finite number where a whole number is meant, NaN or an infinity where
  a double is meant;
* TypeError: not a number at all (a string, None, a bool where a count is
  meant: True is 1 to Python but never a deliberate size).

Ranges here are the C fields' (and the obvious sign: a size is at least 1,
a count at least 0). Where fdk.h documents a tighter bound (extents up to
65536, threads up to 1024) the library reports it, naming its field, so a
newer library with wider bounds needs no new binding.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Optional, Sequence, Tuple

import numpy as np

INT32_MIN, INT32_MAX = -2**31, 2**31 - 1
UINT64_MAX = 2**64 - 1

_C_TYPES = {(INT32_MIN, INT32_MAX): "int32", (0, UINT64_MAX): "uint64"}


def _limit(lo: int, hi: int, c_type: str) -> str:
    if _C_TYPES.get((lo, hi)) == c_type:
        return f"must fit {c_type} ({lo}..{hi})"
    return f"must be {lo}..{hi} (a C {c_type})"


def check_int(value: Any, field: str, lo: int, hi: int, c_type: str = "int32", *,
              floats: bool = True) -> int:
    """``value`` as a Python int within [lo, hi].

    Takes ints, numpy integers and anything with ``__index__``; with
    ``floats``, also a float or numpy float holding a whole number (shapes
    computed as ``n / 2`` are common). Refuses bools (TypeError).
    """
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{field} must be an integer, not a bool ({value!r})")
    if isinstance(value, (int, np.integer)):
        v = int(value)
    elif isinstance(value, (float, np.floating)):
        if not floats:
            raise TypeError(f"{field} must be an integer, got float {value!r}")
        f = float(value)
        if not math.isfinite(f) or f != math.floor(f):
            raise ValueError(f"{field} must be a whole number, got {value!r}")
        v = int(f)
    else:
        try:
            v = operator.index(value)
        except TypeError:
            raise TypeError(f"{field} must be an integer, got {type(value).__name__} "
                            f"{value!r}") from None
    if not lo <= v <= hi:
        raise ValueError(f"{field} {_limit(lo, hi, c_type)}, got {v}")
    return v


def check_float(value: Any, field: str, *, positive: bool = False,
                non_negative: bool = False) -> float:
    """``value`` as a finite Python float (a C double); optionally > 0 or >= 0."""
    if isinstance(value, (bool, np.bool_, str, bytes)) or value is None:
        raise TypeError(f"{field} must be a number, got {type(value).__name__} {value!r}")
    try:
        f = float(value)
    except OverflowError:
        raise ValueError(f"{field} must be a finite number (a C double), got {value!r}, "
                         "too large for a double") from None
    except (TypeError, ValueError):
        raise TypeError(f"{field} must be a number, got {type(value).__name__} "
                        f"{value!r}") from None
    if not math.isfinite(f):
        raise ValueError(f"{field} must be a finite number (a C double), got {f!r}")
    if positive and not f > 0:
        raise ValueError(f"{field} must be > 0, got {f!r}")
    if non_negative and not f >= 0:
        raise ValueError(f"{field} must be >= 0, got {f!r}")
    return f


def check_floats(value: Any, field: str, count: int, axes: Optional[Sequence[str]] = None, *,
                 positive: bool = False, non_negative: bool = False) -> Tuple[float, ...]:
    """One number for all ``count`` entries or ``count`` numbers, each
    checked as by :func:`check_float` (named ``field[i]``, or by ``axes``)."""
    items = _items(value, field, count)
    return tuple(check_float(v, f"{field}[{i}]" if axes is None else f"{field} {axes[i]}",
                             positive=positive, non_negative=non_negative)
                 for i, v in enumerate(items))


def check_ints(value: Any, field: str, count: int, lo: int, hi: int,
               c_type: str = "int32") -> Tuple[int, ...]:
    """One integer for all ``count`` entries or ``count`` integers, each
    checked as by :func:`check_int` (named ``field[i]``)."""
    items = _items(value, field, count)
    return tuple(check_int(v, f"{field}[{i}]", lo, hi, c_type) for i, v in enumerate(items))


def _items(value: Any, field: str, count: int) -> list:
    """The elements of a scalar (repeated) or a sequence of 1 or ``count``,
    without converting them (numpy would turn 2**64 into a float)."""
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{field} must be a number or {count} numbers, got {value!r}")
    if isinstance(value, np.ndarray):
        items = [value[()]] if value.ndim == 0 else list(value.reshape(-1))
        if value.ndim > 1:
            raise ValueError(f"{field} must be a number or {count} numbers, got an array of "
                             f"shape {value.shape}")
    else:
        try:
            items = list(value)
        except TypeError:
            items = [value]
    if len(items) == 1:
        items = items * count
    if len(items) != count:
        raise ValueError(f"{field} must be one number or {count}, got {len(items)}: {value!r}")
    return items


def float_array(value: Any, field: str) -> np.ndarray:
    """``value`` as a float64 ndarray, with a message naming the field when
    it holds something that is not a number (or one too large for a double)."""
    try:
        return np.asarray(value, dtype=np.float64)
    except OverflowError:
        raise ValueError(f"{field} holds a number too large for a double") from None
    except (TypeError, ValueError) as e:
        raise TypeError(f"{field} must hold numbers ({e})") from None


def check_table(table: np.ndarray, field: str, columns: Sequence[str],
                positive: Sequence[str] = ()) -> None:
    """Every entry of a (views, len(columns)) float64 table finite, and the
    ``positive`` columns > 0; the message names the view and the column."""
    bad = ~np.isfinite(table)
    for name in positive:
        k = list(columns).index(name)
        bad[:, k] |= ~(table[:, k] > 0)
    if bad.any():
        view, k = (int(i) for i in np.argwhere(bad)[0])
        what = "finite and > 0" if columns[k] in positive else "finite"
        raise ValueError(f"{field}: {columns[k]} of view {view} must be {what} (a C double), "
                         f"got {table[view, k]!r}")


def scan_array(projections: Any, geometry: Any) -> np.ndarray:
    """A whole scan given in one call (``reconstruct``, ``estimate_geometry``):
    a 3-D floating array of the geometry's views, or TypeError/ValueError
    naming what is wrong, before any C call."""
    from .geometry import Geometry  # here: geometry imports this module
    if not isinstance(projections, np.ndarray):
        projections = np.asarray(projections)
    if projections.ndim != 3:
        raise ValueError(f"projections must be 3-D (views, rows, cols); got shape "
                         f"{projections.shape}")
    if not np.issubdtype(projections.dtype, np.floating):
        raise TypeError(f"projections must be floating-point line integrals; got dtype "
                        f"{projections.dtype}")
    if not isinstance(geometry, Geometry):
        raise TypeError(f"geometry must be an fdk_ct.Geometry, got {type(geometry).__name__}")
    if projections.shape[0] != geometry.num_views:
        raise ValueError(f"{projections.shape[0]} projections for a geometry of "
                         f"{geometry.num_views} views")
    return projections
