"""The streaming API: a handle on one reconstruction, as the C ABI has it."""
from __future__ import annotations

import ctypes
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from ._closable import Closable
from . import _native, _options, _progress_bar
from ._checks import INT32_MAX, INT32_MIN, check_float, check_int
from .errors import InvalidStateError, OutOfRangeError, raise_for
from .geometry import Geometry, Volume, ViewGeometry
from .geometry_estimate import GeometryEstimate, new_c_estimate
from .preview import PreviewInfo, PreviewSlices, new_c_info, new_slices, resolve_at
from .volume_array import VolumeArray

PHASES = ("acquiring", "reconstructing", "done", "cancelled")
VIEW_STATES = ("absent", "pending", "stored", "failed")


@dataclass(frozen=True)
class Progress:
    """A snapshot of a reconstruction's progress (``fdk_progress``)."""

    phase: str
    views_pushed: int
    views_total: int
    slabs_done: int
    slabs_total: int
    backprojection_done: int
    backprojection_total: int

    @property
    def fraction(self) -> float:
        """Work done in [0, 1]: half for the views pushed, half for the
        backprojection (which on a GPU-resident volume runs during the push)."""
        v = self.views_pushed / self.views_total if self.views_total else 0.0
        b = (self.backprojection_done / self.backprojection_total
             if self.backprojection_total else 0.0)
        return min(1.0, 0.5 * v + 0.5 * b)

    @classmethod
    def _from_c(cls, p: _native.ProgressC) -> "Progress":
        phase = PHASES[p.phase] if 0 <= p.phase < len(PHASES) else str(p.phase)
        return cls(phase, p.views_pushed, p.views_total, p.slabs_done, p.slabs_total,
                   p.backprojection_done, p.backprojection_total)


@dataclass(frozen=True)
class Slab:
    """One slab of the volume: y planes ``[y_begin, y_end)``.

    ``data`` has shape ``(nz, y_end - y_begin, nx)``: the volume's axis order.
    It is a view (axes 0 and 1 swapped) of the library's layout, in which each
    y plane is one contiguous axial image; ``data[:, j, :]`` is plane
    ``y_begin + j``.
    """

    index: int
    y_begin: int
    y_end: int
    data: np.ndarray


class Reconstructor(Closable):
    """One reconstruction, fed view by view while the scanner turns.

    Parameters
    ----------
    geometry : Geometry
        The scan; its ``detector_shape`` must be known (or give ``detector_shape``).
    volume : Volume, optional
        The grid; default :meth:`Geometry.default_volume`.
    detector_shape : (rows, cols), optional
    window : {"ram-lak", "shepp-logan", "cosine", "hamming", "hann"}
    cutoff : float
        Fraction of Nyquist in (0, 1].
    backend : {"auto", "cpu", "cuda"}
        "auto" takes CUDA when the library has it and a GPU is usable.
    precision : {"float32", "float16"}
        How the filtered projections are stored.
    budget : int or str, optional
        Host memory budget in bytes (or "8GiB"); default half the RAM.
    progress : callable, tqdm class or tqdm bar, optional
        A callable is called with a :class:`Progress` on the thread that made
        progress. A tqdm class (``tqdm.auto.tqdm``: a widget in Jupyter, text
        elsewhere) makes one bar, in percent, closed with the reconstruction;
        a tqdm bar is moved to the fraction done and left open.
    preview : bool or Volume
        True: reconstruct a coarse preview alongside as the views arrive
        (the volume's field at most 128 voxels a side), read at any moment
        with :meth:`preview`, :meth:`preview_slices` or :meth:`previews`;
        a :class:`Volume`: a preview on that grid. libfdk 0.8 or later.
    **options
        ``gpu_budget``, ``devices``, ``threads``, ``slab_thickness``,
        ``short_scan``, ``offset_detector`` (None = automatic, True, False),
        ``truncation_padding``, ``outside_fov`` ("backproject" or "zero"),
        ``store_policy`` ("reduce-precision" or "strict"), ``hann_cutoff_v``,
        ``estimate_geometry`` (True: keep what :meth:`geometry_estimate`
        needs, a few rows of each view; libfdk 0.7 or later).

    Raises
    ------
    ValueError
        Before any library call, for a value its C field cannot carry
        exactly: a budget beyond uint64 (0..2**64-1), a count or ordinal
        beyond int32 or negative, a fraction where a whole number is meant,
        NaN or an infinity where a double is meant. The message names the
        option and the limit.
    TypeError
        Not a number (a string, a bool as a count), or a switch other than
        None, True or False.
    fdk_ct.errors.FdkError
        The library's own range checks (fdk_create names its field).

    Notes
    -----
    Use it as a context manager (or call :meth:`close`). Every native call
    releases the GIL: one thread may push while another reads slabs, queries
    progress or cancels. An exception raised by the progress callable is
    raised again by the call that invoked it, after that call's work is done
    (the view was stored, the slab read).
    """

    def __init__(self, geometry: Geometry, volume: Optional[Volume] = None, *,
                 detector_shape: Optional[Tuple[int, int]] = None,
                 window: str = "ram-lak", cutoff: float = 1.0, backend: str = "auto",
                 precision: str = "float32", budget: Any = None,
                 progress: Any = None, preview: Union[bool, Volume] = False,
                 **options: Any) -> None:
        self._handle: Optional[int] = None
        self._lock = threading.Lock()  # between closers only
        # One entry per native call in progress. list.append and list.pop are
        # atomic, so a call costs no lock (a push runs once a view); close()
        # sets _closing first and then waits for this to empty, and a call
        # appends first and then reads _closing, so no call can use a handle
        # that close() has freed.
        self._in_flight: List[None] = []
        self._closing = False
        self._finished = threading.Event()
        self._ended = threading.Event()  # finish(), cancel() or close(): previews() ends
        self._local = threading.local()
        self._callback_error: dict = {}
        self._c_callback: Any = None
        self._close_bar: Callable[[], None] = lambda: None

        if not isinstance(geometry, Geometry):
            raise TypeError(f"geometry must be an fdk_ct.Geometry, got {type(geometry).__name__}")
        if detector_shape is not None:
            geometry = geometry.with_detector_shape(detector_shape)
        if geometry.detector_shape is None:
            raise ValueError("the detector's shape is not known: give the geometry a "
                             "detector_shape, or detector_shape= here")
        if volume is None:
            volume = geometry.default_volume()
        if not isinstance(volume, Volume):
            raise TypeError(f"volume must be an fdk_ct.Volume, got {type(volume).__name__}")
        self.geometry = geometry
        self.volume = volume

        lib = _native.lib()
        cfg = _native.Config()
        _native.init_config(cfg)
        volume._to_c(cfg.volume)
        keep = geometry._fill(cfg)
        _options.fill(cfg, window=window, cutoff=cutoff, backend=backend,
                      precision=precision, budget=budget, preview=preview, **options)
        handle = ctypes.c_void_p()
        status = lib.fdk_create(ctypes.byref(cfg), ctypes.byref(handle))
        del keep
        if status != 0:
            raise_for(status, lib.fdk_last_create_error().decode(errors="replace"))
        self._handle = handle.value
        self._handle_c = ctypes.c_void_p(handle.value)  # passed as it is: no conversion a push
        self._lib = lib
        self._push = lib.fdk_push_projection
        self._detector_shape = geometry.detector_shape
        self._row_bytes = 4 * geometry.detector_shape[1]
        self._slabs = self._query_slabs()
        self._preview_volume: Optional[Volume] = None
        if cfg.preview:
            self._preview_volume = self.preview_info().volume
        if progress is not None:
            self.set_progress(progress)

    # ---- lifetime -------------------------------------------------------------
    def close(self) -> None:
        """Cancels what is in flight on other threads, waits for it and frees
        the reconstruction. Idempotent. Not from the progress callable."""
        if getattr(self._local, "in_callback", False):
            raise InvalidStateError("close() from the progress callable: the call that "
                                    "invoked it is still running")
        with self._lock:
            if self._handle is None or self._closing:
                return
            self._closing = True
        self._ended.set()
        handle = self._handle
        if self._in_flight:
            # Calls in flight return CANCELLED promptly; only then is it safe
            # to free what they point at.
            self._lib.fdk_cancel(handle)
            while self._in_flight:
                time.sleep(0.0005)
        self._handle = None
        self._lib.fdk_destroy(handle)
        self._close_bar()  # a bar made from a tqdm class ends with the reconstruction

    @property
    def closed(self) -> bool:
        return self._handle is None

    def _enter(self) -> int:
        self._in_flight.append(None)
        handle = self._handle
        if handle is None or self._closing:
            self._in_flight.pop()
            raise InvalidStateError("the Reconstructor is closed")
        return handle

    def _leave(self) -> None:
        self._in_flight.pop()

    def _call(self, fn: Callable[..., int], *args: Any) -> None:
        handle = self._enter()
        try:
            status = fn(handle, *args)
            # Read while the handle is certainly alive (close waits for us).
            message = self._lib.fdk_last_error(handle) if status else b""
        finally:
            self._leave()
        if self._callback_error:
            self._reraise_callback_error()
        if status:
            raise_for(status, message.decode(errors="replace"))

    # ---- progress -------------------------------------------------------------
    def set_progress(self, progress: Any) -> None:
        """Replaces the progress callable, tqdm class or bar (None removes it);
        a bar made from an earlier tqdm class is closed."""
        c_cb: Any
        user_or_none, close_bar = _progress_bar.adapt(progress)
        if user_or_none is None:
            c_cb = _native.PROGRESS_FN(0)  # the NULL function pointer: no callback
        else:
            user = user_or_none

            def trampoline(_user: Any, p: Any) -> None:
                self._local.in_callback = True
                try:
                    user(Progress._from_c(p.contents))
                except BaseException as e:  # raised again by the call, on its thread
                    self._callback_error.setdefault(threading.get_ident(), e)
                finally:
                    self._local.in_callback = False
            c_cb = _native.PROGRESS_FN(trampoline)
        try:
            self._call(self._lib.fdk_set_progress_callback, c_cb, None)
        except BaseException:
            close_bar()
            raise
        self._c_callback = c_cb  # the library holds the pointer: keep it alive
        self._close_bar, previous = close_bar, self._close_bar
        previous()

    def _reraise_callback_error(self) -> None:
        err = self._callback_error.pop(threading.get_ident(), None)
        if err is not None:
            raise err

    @property
    def progress(self) -> Progress:
        """The current :class:`Progress` (never waits for work in flight)."""
        p = _native.ProgressC(struct_size=ctypes.sizeof(_native.ProgressC))
        self._call(self._lib.fdk_get_progress, ctypes.byref(p))
        return Progress._from_c(p)

    # ---- acquisition ------------------------------------------------------------
    def push(self, index: int, view: Any, geometry: Optional[ViewGeometry] = None) -> None:
        """Pushes view ``index``: a ``(rows, cols)`` array of line integrals.

        ``index`` is an integer (numpy integers too; a float or bool is a
        TypeError); one beyond int32 is refused here with
        :class:`~fdk_ct.errors.OutOfRangeError`, naming "view index".

        Float32 rows that are contiguous are passed as they are, whatever the
        row stride; any other floating array is converted for this view only.
        ``geometry`` gives this view's measured geometry (replacing the
        configured one). Raises the library's error (e.g.
        :class:`~fdk_ct.errors.DuplicateError`); the reconstruction stays usable.
        """
        # The usual call (a float32 view with contiguous rows, an int index,
        # no measured geometry) is checked in a few comparisons and calls the
        # library with ctypes objects made for it: it runs once a view, and
        # (a)'s views take 75 us each in C (docs/PERFORMANCE.md).
        if (geometry is None and type(view) is np.ndarray and type(index) is int
                and -2**31 <= index < 2**31 and view.dtype is _F32
                and view.shape == self._detector_shape):
            strides = view.strides
            pitch = strides[0]
            if strides[1] == 4 and pitch >= self._row_bytes and not pitch & 3:
                in_flight = self._in_flight
                in_flight.append(None)
                try:
                    if self._closing or self._handle is None:
                        raise InvalidStateError("the Reconstructor is closed")
                    handle = self._handle_c
                    status = self._push(handle, index, _native.address_object(view), pitch, None)
                    message = self._lib.fdk_last_error(handle) if status else b""
                finally:
                    in_flight.pop()
                if self._callback_error:
                    self._reraise_callback_error()
                if status:
                    raise_for(status, message.decode(errors="replace"))
                return
        arr = view
        if not (type(view) is np.ndarray
                and _rows_as_they_are(view.dtype, view.shape, view.strides, self._detector_shape)):
            arr = _view_pixels(view, self._detector_shape)
        if type(index) is not int or not -2**31 <= index < 2**31:
            index = _index(index, "view index", self.geometry.num_views)
        c_view = None
        if geometry is not None:
            if not isinstance(geometry, ViewGeometry):
                raise TypeError(f"geometry must be an fdk_ct.ViewGeometry, got "
                                f"{type(geometry).__name__}")
            c_view = ctypes.byref(geometry._to_c())
        self._call(self._push, index, _native.data_pointer(arr), arr.strides[0], c_view)

    def finish(self) -> None:
        """No more views: waits until every pushed view is stored."""
        try:
            self._call(self._lib.fdk_finish, )
        finally:
            self._ended.set()  # done or failed: no more views either way
        self._finished.set()

    def cancel(self) -> None:
        """Stops the reconstruction (irreversible); safe from any thread."""
        try:
            self._call(self._lib.fdk_cancel)
        finally:
            self._ended.set()

    def view_state(self, index: int) -> Tuple[str, int]:
        """(state, failure status) of a view: "absent", "pending", "stored" or "failed"."""
        state, failure = ctypes.c_int32(), ctypes.c_int32()
        self._call(self._lib.fdk_get_view_state,
                   _index(index, "view index", self.geometry.num_views), ctypes.byref(state),
                   ctypes.byref(failure))
        return VIEW_STATES[state.value], failure.value

    # ---- slabs -------------------------------------------------------------------
    def _query_slabs(self) -> List[Tuple[int, int]]:
        count = ctypes.c_int32()
        self._call(self._lib.fdk_slab_count, ctypes.byref(count))
        slabs = []
        for s in range(count.value):
            info = _native.SlabInfo(struct_size=ctypes.sizeof(_native.SlabInfo))
            self._call(self._lib.fdk_get_slab_info, s, ctypes.byref(info))
            slabs.append((info.y_begin, info.y_end))
        return slabs

    @property
    def slab_count(self) -> int:
        return len(self._slabs)

    def slab_planes(self, slab: int) -> Tuple[int, int]:
        """The y planes ``[y_begin, y_end)`` of a slab."""
        return self._slabs[_slab_index(slab, len(self._slabs))]

    def slab_ready(self, slab: int) -> bool:
        """True when :meth:`read_slab` would not compute; else asks for the
        slab to be computed in the background. Never blocks."""
        ready = ctypes.c_int32()
        self._call(self._lib.fdk_slab_ready, _index(slab, "slab index", len(self._slabs)),
                   ctypes.byref(ready))
        return bool(ready.value)

    def read_slab(self, slab: int, out: Optional[np.ndarray] = None) -> Slab:
        """Reads slab ``slab`` (after :meth:`finish`), computing it if needed.

        ``out``: a writeable, C-contiguous float32 array with at least the
        slab's voxels, read into as is (reuse one buffer to avoid allocating).
        """
        s = _slab_index(slab, len(self._slabs))
        y0, y1 = self._slabs[s]
        nz, _, nx = self.volume.shape
        n = (y1 - y0) * nz * nx
        if out is None:
            buf = np.empty((y1 - y0, nz, nx), dtype=np.float32)
        else:
            if not isinstance(out, np.ndarray) or out.dtype != np.float32 \
                    or not out.flags.c_contiguous or not out.flags.writeable:
                raise TypeError("out must be a writeable C-contiguous float32 numpy array")
            if out.size < n:
                raise ValueError(f"out holds {out.size} floats; slab {s} needs {n}")
            buf = out.reshape(-1)[:n].reshape(y1 - y0, nz, nx)
        self._call(self._lib.fdk_read_slab, s, _native.data_pointer(buf), buf.nbytes)
        return Slab(s, y0, y1, buf.transpose(1, 0, 2))

    def slabs(self, poll_interval: float = 0.01) -> Iterator[Slab]:
        """Every slab once, each as soon as it is ready, in no fixed order.

        May be started on a reader thread before :meth:`finish`: it waits for
        the finish (or the close). When no slab is ready it reads the lowest
        one left, which computes it.
        """
        while not self._finished.wait(poll_interval):
            if self.closed:
                raise InvalidStateError("the Reconstructor was closed before finish()")
        left = list(range(len(self._slabs)))
        while left:
            ready = [s for s in left if self.slab_ready(s)]
            pick = ready[0] if ready else left[0]
            left.remove(pick)
            yield self.read_slab(pick)

    def read_volume(self, out: Optional[np.ndarray] = None) -> VolumeArray:
        """The whole volume, ``(z, y, x)``, with its grid (see :class:`VolumeArray`).

        ``out``: a volume to overwrite instead of allocating one, as returned
        by :func:`fdk_ct.empty_volume` or an earlier read of the same grid
        (a new volume's pages cost the first write of each: on a GPU that is
        a large part of a small reconstruction).
        """
        native = _native_order(out, self.volume)
        for s, (y0, y1) in enumerate(self._slabs):
            part = native[y0:y1]
            self._call(self._lib.fdk_read_slab, s, _native.data_pointer(part), part.nbytes)
        return VolumeArray(native.transpose(1, 0, 2), self.volume)

    def _push_scan(self, projections: np.ndarray) -> None:
        """Pushes every view of a ``(views, rows, cols)`` array, view i as index i.

        The one-call path: when the views are float32 with contiguous rows,
        each view's address is the first one's plus i strides, so the loop
        makes no Python object per view; other arrays go view by view
        through :meth:`push`.
        """
        views = projections.shape[0]
        stride, pitch = projections.strides[:2]
        if not _rows_as_they_are(projections.dtype, projections.shape[1:], projections.strides[1:],
                                 self._detector_shape):
            for i in range(views):
                self.push(i, projections[i])
            return
        first = _native.data_pointer(projections)
        push, last_error = self._push, self._lib.fdk_last_error
        handle = self._enter()
        status, message = 0, b""
        try:
            for i in range(views):
                status = push(handle, i, first + i * stride, pitch, None)
                if status:
                    message = last_error(handle)
                    break
                if self._callback_error:
                    break
        finally:
            self._leave()
        if self._callback_error:
            self._reraise_callback_error()
        raise_for(status, message.decode(errors="replace"))

    # ---- the live preview (libfdk 0.8) ----------------------------------------
    @property
    def preview_volume(self) -> Optional[Volume]:
        """The preview's grid (None when made without ``preview``)."""
        return self._preview_volume

    @property
    def last_preview_info(self) -> Optional[PreviewInfo]:
        """The :class:`PreviewInfo` of the calling thread's last
        :meth:`preview` read: the state at the moment of those values (per
        thread, so another thread's reads never replace it; None before
        the first)."""
        return getattr(self._local, "preview_info", None)

    def preview_info(self) -> PreviewInfo:
        """The preview's grid and state now (``fdk_get_preview_info``);
        :class:`~fdk_ct.errors.InvalidStateError` without ``preview``."""
        lib = _native.preview()
        c = new_c_info()
        self._call(lib.fdk_get_preview_info, ctypes.byref(c))
        return PreviewInfo._from_c(c)

    def _preview_grid(self) -> Volume:
        """The preview's grid; without a preview, the library's
        InvalidStateError (through :meth:`preview_info`)."""
        if self._preview_volume is None:
            return self.preview_info().volume  # raises: preview was off
        return self._preview_volume

    def preview(self, out: Optional[np.ndarray] = None) -> VolumeArray:
        """The whole preview volume now, ``(z, y, x)`` on :attr:`preview_volume`
        (a :class:`VolumeArray`, as :meth:`read_volume`), at any moment and
        from any thread, also while another thread pushes (it waits at most
        for the view being added). Its state at that moment is
        :attr:`last_preview_info` (on this thread).

        ``out``: a preview volume to overwrite (``fdk_ct.empty_volume(
        rec.preview_volume)`` or an earlier read). Without ``preview``:
        :class:`~fdk_ct.errors.InvalidStateError`.
        """
        lib = _native.preview()
        grid = self._preview_grid()
        native = _native_order(out, grid)
        c = new_c_info()
        self._call(lib.fdk_read_preview, _native.data_pointer(native), native.nbytes,
                   ctypes.byref(c))
        self._local.preview_info = PreviewInfo._from_c(c)
        return VolumeArray(native.transpose(1, 0, 2), grid)

    def preview_slices(self, at: Optional[Sequence[Optional[int]]] = None) -> PreviewSlices:
        """Three orthogonal slices of the preview through voxel ``at`` =
        ``(iz, iy, ix)``, all of one moment (one ``fdk_read_preview_slices``),
        with its :class:`PreviewInfo`.

        ``at``: None for the middle of every axis, or three entries, each an
        index or None (the middle of that axis, ``n // 2``). An index outside
        the grid (a negative one too) is
        :class:`~fdk_ct.errors.OutOfRangeError`; without ``preview``,
        :class:`~fdk_ct.errors.InvalidStateError`.
        """
        lib = _native.preview()
        grid = self._preview_grid()
        where = resolve_at(at, grid)
        c, xs, ys, zs = new_slices(grid, where)
        info = new_c_info()
        self._call(lib.fdk_read_preview_slices, ctypes.byref(c), ctypes.byref(info))
        return PreviewSlices(xs.T, ys, zs, where, PreviewInfo._from_c(info))

    def previews(self, interval: float = 1.0,
                 at: Optional[Sequence[Optional[int]]] = None) -> Iterator[PreviewSlices]:
        """Yields :meth:`preview_slices` every ``interval`` seconds while
        another thread pushes, and once more when the scan has ended
        (:meth:`finish` returned or failed, or :meth:`cancel`), then stops;
        it stops at once when the Reconstructor is closed. The first slices
        come at once. Between yields it sleeps on an event that the end sets,
        so the last slices come as soon as the scan ends; the time the loop
        body takes counts toward the interval. The pusher must end the scan
        (finish, cancel or close), also when it fails, or this goes on
        yielding. ::

            with fdk_ct.Reconstructor(geo, grid, preview=True) as rec:
                def pusher():
                    try:
                        for i, view in acquisition():
                            rec.push(i, view)
                    finally:
                        rec.finish()  # also after an error: ends previews()
                t = threading.Thread(target=pusher)
                t.start()
                for s in rec.previews(interval=0.5):  # on this (the main) thread
                    show(s.y, s.info.views)           # an axial slice
                t.join()
                vol = rec.read_volume()
        """
        interval = check_float(interval, "interval", positive=True)
        self._preview_grid()  # raises at the first next() without a preview
        while True:
            ended = self._ended.is_set()
            if self.closed:
                return
            start = time.monotonic()
            try:
                slices = self.preview_slices(at)
            except InvalidStateError:
                if self.closed:  # closed while reading
                    return
                raise
            yield slices
            if ended:
                return
            self._ended.wait(max(0.0, start + interval - time.monotonic()))

    # ---- introspection --------------------------------------------------------
    def geometry_estimate(self) -> GeometryEstimate:
        """The geometry estimate from the views pushed so far (any time, also
        after :meth:`finish`); needs ``estimate_geometry=True``, else
        :class:`~fdk_ct.errors.InvalidStateError`.

        The volume stays the nominal geometry's: to apply the estimate,
        reconstruct the raw views again with ``estimate.corrected(geometry)``.
        """
        lib = _native.geometry_estimation()
        c = new_c_estimate()
        self._call(lib.fdk_get_geometry_estimate, ctypes.byref(c))
        return GeometryEstimate._from_c(c)

    def _info(self, cls: Any, fn: Callable[..., int]) -> Any:
        info = cls(struct_size=ctypes.sizeof(cls))
        self._call(fn, ctypes.byref(info))
        return info

    @property
    def backend(self) -> str:
        """The backend in use: "cpu" or "cuda"."""
        return _options.BACKEND_NAMES[self.plan_info()["backend"]]

    def plan_info(self) -> dict:
        """``fdk_plan_info`` as a dict."""
        return _as_dict(self._info(_native.PlanInfo, self._lib.fdk_get_plan_info))

    def store_info(self) -> dict:
        """``fdk_store_info`` as a dict."""
        return _as_dict(self._info(_native.StoreInfo, self._lib.fdk_get_store_info))

    def timings(self) -> dict:
        """``fdk_timings`` (seconds) as a dict."""
        return _as_dict(self._info(_native.Timings, self._lib.fdk_get_timings))

    def device_stats(self) -> List[dict]:
        """Per GPU in use (none on the CPU backend): ordinal, kernel seconds,
        slabs computed from the store, and whether it failed."""
        st = self._info(_native.DeviceStats, self._lib.fdk_get_device_stats)
        n = max(0, min(st.num_devices, _native.MAX_DEVICES))
        return [{"ordinal": st.ordinal[i], "busy_seconds": st.busy_seconds[i],
                 "slabs_computed": st.slabs_computed[i], "failed": bool(st.failed[i])}
                for i in range(n)]


def _as_dict(s: ctypes.Structure) -> dict:
    names = [field[0] for field in s._fields_]
    return {name: getattr(s, name) for name in names if name != "struct_size"}


def _index(i: Any, field: str, count: int) -> int:
    """An index for an int32 argument: an integer (no float, no bool:
    TypeError, as for a Python sequence). One beyond int32 would be
    truncated by ctypes onto another index, so it is refused here with
    OutOfRangeError, the IndexError the library raises for one within
    int32 but outside [0, count)."""
    try:
        return check_int(i, field, INT32_MIN, INT32_MAX, floats=False)
    except ValueError as e:
        raise OutOfRangeError(f"{e}; valid: [0, {count})", OutOfRangeError.status) from None


def _slab_index(s: Any, count: int) -> int:
    s = _index(s, "slab index", count)
    if not 0 <= s < count:
        raise OutOfRangeError(f"slab index {s} is outside [0, {count})", OutOfRangeError.status)
    return s


_F32 = np.dtype(np.float32)


def _native_order(out: Optional[np.ndarray], volume: Volume) -> np.ndarray:
    """A ``(ny, nz, nx)`` C-contiguous float32 array for the library's layout:
    new, or the memory under ``out``, a ``(z, y, x)`` view of one."""
    nz, ny, nx = volume.shape
    if out is None:
        return np.empty((ny, nz, nx), dtype=np.float32)
    if not isinstance(out, np.ndarray) or out.dtype != _F32 or out.shape != (nz, ny, nx):
        raise ValueError(f"out must be a float32 (z, y, x) = {volume.shape} array "
                         "(fdk_ct.empty_volume)")
    native = out.transpose(1, 0, 2)
    if not native.flags.c_contiguous or not native.flags.writeable:
        raise ValueError("out must be laid out as fdk_ct.empty_volume makes it (each y "
                         "plane contiguous: the (z, y, x) view of a (y, z, x) array)")
    return native


def _rows_as_they_are(dtype: np.dtype, shape: Tuple[int, ...], strides: Tuple[int, ...],
                      detector: Optional[Tuple[int, ...]]) -> bool:
    """Whether a view of this layout goes to the library as it is: float32,
    the detector's (rows, cols), contiguous rows a positive multiple of 4
    bytes apart (any row stride: a slice, a padded pitch, a strided scan)."""
    return (dtype == _F32 and shape == detector and strides[1] == 4
            and strides[0] >= 4 * shape[1] and not strides[0] % 4)


def _view_pixels(view: Any, shape: Optional[Tuple[int, int]]) -> np.ndarray:
    """The view as an array the library takes: itself when its rows are
    usable as they are, else converted (this view only), after the checks
    that name what is wrong."""
    arr = view if isinstance(view, np.ndarray) else np.asarray(view)
    if arr.ndim != 2:
        raise ValueError(f"a view must be 2-D (rows, cols), got shape {arr.shape}")
    if shape is not None and arr.shape != shape:
        raise ValueError(f"a view of shape {arr.shape} does not match the detector "
                         f"(rows, cols) = {shape}")
    if not np.issubdtype(arr.dtype, np.floating):
        raise TypeError(f"projections must be floating-point line integrals; got dtype "
                        f"{arr.dtype} (raw counts must be converted: -log(I/I0))")
    if _rows_as_they_are(arr.dtype, arr.shape, arr.strides, arr.shape):
        return arr
    return np.ascontiguousarray(arr, dtype=np.float32)
