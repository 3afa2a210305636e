"""The library's status codes as exceptions, raised in one place (`check`).

Each class also derives from the built-in exception a Python user would
catch for that kind of failure (ValueError for bad arguments, IndexError for
indices, MemoryError for allocations), so generic handlers keep working.
"""
from __future__ import annotations

from typing import Dict, Optional, Type

from ._native import LibraryNotFoundError


class FdkError(Exception):
    """A failure reported by libfdk.

    Attributes
    ----------
    status : int
        The library's pinned status code (``fdk_status``).
    message : str
        The library's message (what failed and why).
    """

    status: int = -1

    def __init__(self, message: str, status: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status


class InvalidArgumentError(FdkError, ValueError):
    """A NULL, a bad size or value, a NaN or Inf (FDK_ERROR_INVALID_ARGUMENT)."""
    status = 1


class OutOfRangeError(FdkError, IndexError):
    """An index outside its valid range (FDK_ERROR_OUT_OF_RANGE)."""
    status = 2


class InvalidStateError(FdkError, RuntimeError):
    """A call in the wrong order (FDK_ERROR_INVALID_STATE)."""
    status = 3


class DuplicateError(FdkError, ValueError):
    """A projection index pushed twice (FDK_ERROR_DUPLICATE)."""
    status = 4


class BudgetError(FdkError, MemoryError):
    """A memory budget too small for the plan or the scan (FDK_ERROR_BUDGET)."""
    status = 5


class OutOfMemoryError(FdkError, MemoryError):
    """An allocation failed (FDK_ERROR_OUT_OF_MEMORY)."""
    status = 6


class BackendUnavailableError(FdkError, RuntimeError):
    """The requested backend or device is absent (FDK_ERROR_BACKEND_UNAVAILABLE)."""
    status = 7


class DeviceError(FdkError, RuntimeError):
    """A GPU or driver failure (FDK_ERROR_DEVICE)."""
    status = 8


class CancelledError(FdkError):
    """The reconstruction was cancelled (FDK_ERROR_CANCELLED)."""
    status = 9


class UnsupportedError(FdkError, NotImplementedError):
    """A valid request this build cannot do (FDK_ERROR_UNSUPPORTED)."""
    status = 10


class StructSizeError(FdkError, RuntimeError):
    """The library does not know a struct size: binding and library disagree
    (FDK_ERROR_STRUCT_SIZE)."""
    status = 11


class InternalError(FdkError, RuntimeError):
    """A bug in libfdk: please report the message (FDK_ERROR_INTERNAL)."""
    status = 12


_BY_STATUS: Dict[int, Type[FdkError]] = {
    c.status: c for c in (InvalidArgumentError, OutOfRangeError, InvalidStateError,
                          DuplicateError, BudgetError, OutOfMemoryError,
                          BackendUnavailableError, DeviceError, CancelledError,
                          UnsupportedError, StructSizeError, InternalError)
}


def error_class(status: int) -> Type[FdkError]:
    """The exception class of a status code (FdkError for an unknown one)."""
    return _BY_STATUS.get(status, FdkError)


def raise_for(status: int, message: str) -> None:
    """Raise the exception of `status` (nothing for FDK_OK)."""
    if status == 0:
        return
    cls = error_class(status)
    err = cls(message or f"libfdk status {status}")
    err.status = status
    raise err


__all__ = ["FdkError", "LibraryNotFoundError", "error_class", "raise_for"] + [
    c.__name__ for c in _BY_STATUS.values()]
