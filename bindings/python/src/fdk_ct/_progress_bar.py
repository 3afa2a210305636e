"""``progress=`` as a tqdm bar: a class (``tqdm.auto.tqdm``) or an instance.

A progress callable receives a :class:`~fdk_ct.reconstructor.Progress`. A
tqdm class is callable too, but calling it with a Progress would make a new
bar per call, so bars are recognised first, by duck typing (tqdm is not a
dependency): a class is instantiated once, with a total of 100 (percent), and
closed when the reconstruction is; an instance is driven as it is (its own
total; 100 when it has none) and left open, since its owner made it.
Bar positions are set (``n``), not incremented, because the library reports
absolute counts, and may report them from the pusher's and the reader's
threads alike; ``refresh`` draws (tqdm.notebook's widget in Jupyter).
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Tuple

PERCENT = 100


def _is_bar(obj: Any) -> bool:
    return all(hasattr(obj, name) for name in ("n", "total", "refresh", "close"))


def _is_bar_class(obj: Any) -> bool:
    return isinstance(obj, type) and all(
        hasattr(obj, name) for name in ("refresh", "close", "update"))


def adapt(progress: Any) -> Tuple[Optional[Callable[[Any], Any]], Callable[[], None]]:
    """(callable for Progress snapshots or None, closer): the closer closes a
    bar made here and does nothing otherwise."""
    if progress is None:
        return None, lambda: None
    if _is_bar_class(progress):
        bar = progress(total=PERCENT, unit="%", desc="fdk")
        return _driver(bar), bar.close
    if _is_bar(progress):
        if not progress.total:
            progress.total = PERCENT
        return _driver(progress), lambda: None
    if not callable(progress):
        raise TypeError("progress must be callable, a tqdm class or a tqdm bar; got "
                        f"{type(progress).__name__}")
    return progress, lambda: None


def _driver(bar: Any) -> Callable[[Any], None]:
    def update(p: Any) -> None:
        done = p.fraction * bar.total
        # Whole steps on an integer total: tqdm prints n as it is ("45/100").
        bar.n = int(done) if isinstance(bar.total, int) else done
        bar.refresh()
    return update
