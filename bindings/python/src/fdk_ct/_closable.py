"""The lifetime every native handle's owner shares: a ``with`` block and the
garbage collector both end in ``close()``, which the owner defines."""
from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T", bound="Closable")


class Closable:
    def close(self) -> None:  # pragma: no cover - every owner defines it
        raise NotImplementedError

    def __enter__(self: T) -> T:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
