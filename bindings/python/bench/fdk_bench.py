"""fdk-bench's measurement through the Python binding (fdk_ct).

The same cases (design/BENCHMARKS.md, tools/fdk-bench/cases.hpp), the same
synthetic projections (synthetic.py), a pool of them pushed cyclically, one
warm-up then --repeats timed runs, medians; so that its figures sit next to
tools/fdk-bench's, measured on the same libfdk.so, and the difference is
what Python costs.

Two figures:

streaming    a Reconstructor per run: every view pushed (view i from
             pool[i % P]), finish(), every slab read into one reused,
             pre-touched buffer with read_slab(i, out=buf): fdk-bench's loop,
             call for call. Phases as fdk-bench's; end to end = first push
             to the last slab in host memory.
reconstruct  one fdk_ct.reconstruct(projections, geometry, volume, out=vol)
             call, timed whole: it also creates and destroys the context
             (which fdk-bench times apart, outside its end to end). Its out=
             is one volume made once and written before the timing, as
             fdk-bench reuses one touched slab buffer; what a new volume's
             page faults would add is measured apart ("volume faults").

    FDK_CT_LIBRARY=build/capi/libfdk.so PYTHONPATH=bindings/python/src \\
        python3 bindings/python/bench/fdk_bench.py --case cpu --backend cpu

Options as fdk-bench's where they exist (--case, --size/--views/--det,
--backend, --precision, --budget-host, --budget-gpu, --threads,
--slab-thickness, --repeats, --warmup, --pool, --gpus, --outside-fov,
--json, --commit); --only streaming|reconstruct runs one of the two;
--push raw and --pool-layout block are diagnostics (see parse_args).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import socket
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synthetic  # noqa: E402

import fdk_ct  # noqa: E402

# name: (size, views, det_u, det_v), as kCases in tools/fdk-bench/cases.hpp.
CASES = {
    "a": (512, 360, 512, 512),
    "b": (1024, 1200, 1024, 1012),
    "c": (2048, 1200, 2048, 2048),
    "d": (4096, 2400, 4096, 4096),
    "cpu": (256, 360, 256, 256),
}
# fdk-bench's automatic pool: every view unless they exceed a quarter of the
# RAM, then this many.
LARGE_POOL = 64

PHASES = [  # (row label, JSON key), fdk-bench's names
    ("create (plan)", "create"),
    ("filter+store (push)", "filter_store"),
    ("finish", "finish"),
    ("read (all slabs)", "read"),
    ("end to end", "end_to_end"),
    ("after last push", "after_last_push"),
    ("destroy", "destroy"),
]


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--case", choices=sorted(CASES), default=None)
    p.add_argument("--size", type=int)
    p.add_argument("--views", type=int)
    p.add_argument("--det", type=int, nargs=2, metavar=("U", "V"))
    p.add_argument("--backend", choices=["auto", "cpu", "cuda"], default="auto")
    p.add_argument("--precision", choices=["f32", "f16"], default="f32")
    p.add_argument("--budget-host", default=None)
    p.add_argument("--budget-gpu", default=None)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--slab-thickness", type=int, default=0)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--pool", type=int, default=0)
    p.add_argument("--gpus", type=int, default=1)
    p.add_argument("--outside-fov", choices=["backproject", "zero"], default="backproject")
    p.add_argument("--only", choices=["streaming", "reconstruct"], default=None)
    # --push raw: through ctypes directly (no Reconstructor.push), to tell
    # the binding's cost from the process's. --pool-layout: the views
    # allocated one by one as fdk-bench's (the default: like for like), or
    # one (pool, rows, cols) block, which numpy marks for huge pages and
    # which the H200 machine copies from measurably slower (about 1.5 ms of
    # (a)'s 62 ms, with raw pushes too: docs/PERFORMANCE.md).
    p.add_argument("--push", choices=["binding", "raw"], default="binding")
    p.add_argument("--pool-layout", choices=["block", "views"], default="views")
    p.add_argument("--json", default="")
    p.add_argument("--commit", default="")
    o = p.parse_args(argv)
    if o.repeats < 1 or o.warmup < 0:
        p.error("--repeats must be >= 1 and --warmup >= 0")
    size, views, det_u, det_v = CASES[o.case or "cpu"]
    o.case_name = o.case or ("" if (o.size or o.views or o.det) else "cpu")
    o.size = o.size or size
    o.views = o.views or views
    o.det_u, o.det_v = o.det if o.det else (det_u, det_v)
    return o


def case_geometry(o: argparse.Namespace):
    """fdk_bench::case_geometry: a full circle at SID 1000, SDD 1500, a
    256 mm cube centred on the isocentre, square pixels of 384 / det_u mm,
    the detector centred."""
    voxel = 256.0 / o.size
    geometry = fdk_ct.Geometry.circular(o.views, sid=1000.0, sdd=1500.0,
                                        detector_spacing=256.0 * 1.5 / o.det_u,
                                        detector_shape=(o.det_v, o.det_u))
    volume = fdk_ct.Volume((o.size, o.size, o.size), voxel)
    return geometry, volume


def options(o: argparse.Namespace) -> Dict[str, Any]:
    """fdk-bench's make_config as keyword options."""
    kw: Dict[str, Any] = dict(backend=o.backend,
                              precision="float16" if o.precision == "f16" else "float32",
                              budget=o.budget_host, gpu_budget=o.budget_gpu,
                              threads=o.threads, slab_thickness=o.slab_thickness,
                              outside_fov=o.outside_fov)
    if o.backend != "cpu":
        kw["devices"] = list(range(o.gpus))
    return kw


def physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 0


class Check:
    """min, max, sum and count of a volume's finite voxels, and its NaN/Inf."""

    def __init__(self) -> None:
        self.min = self.max = float("nan")
        self.sum = 0.0
        self.count = self.non_finite = 0

    def add(self, a: np.ndarray) -> None:
        finite = np.isfinite(a)
        n = int(finite.sum())
        self.non_finite += a.size - n
        if n:
            f = a[finite] if n != a.size else a
            lo, hi = float(f.min()), float(f.max())
            self.min = lo if self.count == 0 else min(self.min, lo)
            self.max = hi if self.count == 0 else max(self.max, hi)
            self.sum += float(f.sum(dtype=np.float64))
            self.count += n

    @property
    def mean(self) -> float:
        return self.sum / self.count if self.count else 0.0

    def text(self) -> str:
        return (f"min {self.min:.4g}, max {self.max:.4g}, mean {self.mean:.4g}, "
                + ("no NaN/Inf" if self.non_finite == 0 else f"{self.non_finite} NaN/Inf"))

    def as_dict(self) -> Dict[str, Any]:
        return {"min": self.min, "max": self.max, "mean": self.mean,
                "non_finite": self.non_finite}


def streaming_run(o, geometry, volume, pool: Any, buf_holder: list,
                  check: Optional[Check]) -> Dict[str, float]:
    """fdk-bench's run_series body, call for call, through a Reconstructor."""
    t: Dict[str, float] = {}
    c0 = time.perf_counter()
    rec = fdk_ct.Reconstructor(geometry, volume, **options(o))
    t["create"] = time.perf_counter() - c0
    nz, _, nx = volume.shape
    largest = max((y1 - y0) * nz * nx for y0, y1 in
                  (rec.slab_planes(s) for s in range(rec.slab_count)))
    if buf_holder[0].size < largest:
        buf_holder[0] = np.ones(largest, dtype=np.float32)  # touched, as fdk-bench's
    buf = buf_holder[0]
    views, npool, slabs = o.views, len(pool), rec.slab_count
    push, read = rec.push, rec.read_slab
    if o.push == "raw":
        raw, handle = rec._lib.fdk_push_projection, rec._handle
        pointers = [v.ctypes.data for v in pool]
        pitch = 4 * o.det_u
        p0 = time.perf_counter()
        for view in range(views):
            if raw(handle, view, pointers[view % npool], pitch, None) != 0:
                raise RuntimeError(f"fdk_push_projection(view {view}) failed")
        p1 = time.perf_counter()
    else:
        p0 = time.perf_counter()
        for view in range(views):
            push(view, pool[view % npool])
        p1 = time.perf_counter()
    rec.finish()
    f1 = time.perf_counter()
    for s in range(slabs):
        slab = read(s, out=buf)
        if check is not None:
            check.add(slab.data)
    r1 = time.perf_counter()
    t.update(filter_store=p1 - p0, finish=f1 - p1, read=r1 - f1, end_to_end=r1 - p0,
             after_last_push=r1 - p1)
    t["_backend"] = rec.backend  # type: ignore[assignment]
    t["_slabs"] = slabs
    t["_timings"] = rec.timings()  # type: ignore[assignment]
    d0 = time.perf_counter()
    rec.close()
    t["destroy"] = time.perf_counter() - d0
    return t


def reconstruct_parts(o, geometry, volume, projections: np.ndarray, out: np.ndarray) -> Dict[str, float]:
    """reconstruct()'s steps timed one by one (the same calls it makes):
    where a difference to C's create + end to end + destroy comes from."""
    t: Dict[str, float] = {}
    t0 = time.perf_counter()
    rec = fdk_ct.Reconstructor(geometry.with_detector_shape(projections.shape[1:]), volume, **options(o))
    t1 = time.perf_counter()
    rec._push_scan(projections)
    t2 = time.perf_counter()
    rec.finish()
    t3 = time.perf_counter()
    rec.read_volume(out)
    t4 = time.perf_counter()
    rec.close()
    t5 = time.perf_counter()
    t.update(create=t1 - t0, push=t2 - t1, finish=t3 - t2, read=t4 - t3, destroy=t5 - t4, total=t5 - t0)
    return t


def reconstruct_run(o, geometry, volume, projections: np.ndarray,
                    check: Optional[Check], out: np.ndarray) -> float:
    t0 = time.perf_counter()
    vol = fdk_ct.reconstruct(projections, geometry, volume, out=out, **options(o))
    t1 = time.perf_counter()
    if check is not None:
        for y in range(vol.shape[1]):  # one contiguous y plane at a time
            check.add(vol[:, y, :])
    return t1 - t0


def fault_seconds(volume) -> float:
    """What reconstruct() pays that fdk-bench does not: a fresh volume's pages
    faulted in (one write per 4 KiB page), the volume then freed."""
    t0 = time.perf_counter()
    a = np.empty(volume.size_bytes // 4, dtype=np.float32)
    a[::1024] = 0.0
    t = time.perf_counter() - t0
    del a
    return t


def median(v: List[float]) -> float:
    return float(np.median(v)) if v else 0.0


def report_phases(runs: List[Dict[str, float]], o) -> None:
    print(f"\n{'phase':<22} {'median s':>10} {'min s':>10} {'max s':>10}   "
          f"({o.repeats} run{'s' if o.repeats != 1 else ''} after {o.warmup} warm-up)")
    for label, key in PHASES:
        v = [r[key] for r in runs]
        print(f"{label:<22} {median(v):10.3f} {min(v):10.3f} {max(v):10.3f}")


def main(argv: Optional[List[str]] = None) -> int:
    o = parse_args(argv)
    geometry, volume = case_geometry(o)
    bytes_per_view = 4.0 * o.det_u * o.det_v
    pool = o.pool
    if pool == 0:
        cap = 0.25 * physical_memory()
        pool = o.views
        if cap > 0 and bytes_per_view * o.views > cap:
            pool = max(1, min(LARGE_POOL, int(cap / bytes_per_view)))
    pool = min(pool, o.views)

    print(f"fdk_bench.py: fdk_ct {fdk_ct.__version__} over libfdk {fdk_ct.library_version()} "
          f"({fdk_ct.library_path()}), Python {platform.python_version()}, numpy "
          f"{np.__version__}")
    print(f"case {o.case_name}: volume {o.size}^3 ({256.0 / o.size:.4g} mm voxels), {o.views} "
          f"views over 360 deg, detector {o.det_u} x {o.det_v} ({384.0 / o.det_u:.4g} mm "
          f"pixels), SID 1000 mm, SDD 1500 mm")
    print(f"generating {pool} synthetic projection{'s' if pool != 1 else ''} "
          f"({bytes_per_view * pool / 2**20:.2f} MiB) ...", flush=True)
    g0 = time.perf_counter()
    views = synthetic.make_pool(pool, o.views, o.det_u, o.det_v)
    if o.pool_layout == "views":
        # One allocation per view, as fdk-bench's; the block is freed.
        views = [np.array(v) for v in views]
    print(f"generated in {time.perf_counter() - g0:.2f} s", flush=True)

    result: Dict[str, Any] = {}
    total = o.warmup + o.repeats
    if o.only in (None, "streaming"):
        print("== streaming: Reconstructor, push, finish, read_slab(i, out=buf)"
              + (" (pushed through ctypes directly)" if o.push == "raw" else "")
              + (" (views allocated one by one, as fdk-bench's)" if o.pool_layout == "views"
                 else " (views from one (pool, rows, cols) block)"))
        buf_holder = [np.empty(0, dtype=np.float32)]
        runs: List[Dict[str, float]] = []
        check = Check()
        last: Dict[str, Any] = {}
        for run in range(total):
            warm = run < o.warmup
            t = streaming_run(o, geometry, volume, views, buf_holder,
                              check if run == 0 and o.warmup > 0 else None)
            last = t
            print(f"{'warm-up' if warm else 'run'} {run + 1 if warm else run - o.warmup + 1}: "
                  f"filter+store {t['filter_store']:.3f} s, finish {t['finish']:.3f} s, read "
                  f"{t['read']:.3f} s, end to end {t['end_to_end']:.3f} s", flush=True)
            if run == 0 and o.warmup > 0 and check.non_finite:
                print(f"fdk_bench.py: the volume holds {check.non_finite} NaN/Inf voxels",
                      file=sys.stderr)
                return 1
            if not warm:
                runs.append(t)
        print(f"\nbackend         {last['_backend']}, {last['_slabs']} slab"
              f"{'s' if last['_slabs'] != 1 else ''}, slab buffer "
              f"{buf_holder[0].nbytes / 2**20:.1f} MiB (reused, touched before the runs)")
        if o.warmup > 0:
            print(f"volume check    warm-up run: {check.text()}")
        report_phases(runs, o)
        result["streaming"] = {
            "backend": last["_backend"], "slab_count": last["_slabs"],
            "volume_check": check.as_dict() if o.warmup > 0 else None,
            "median_s": {k: median([r[k] for r in runs]) for _, k in PHASES},
            "runs_s": {k: [r[k] for r in runs] for _, k in PHASES},
            "library_timings_last_run": last["_timings"],
        }

    if o.only in (None, "reconstruct"):
        print("\n== reconstruct(): one call, the whole volume returned")
        if pool < o.views:
            need = bytes_per_view * o.views
            if need > 0.5 * physical_memory():
                print(f"skipped: reconstruct() takes every view in one array "
                      f"({need / 2**30:.1f} GiB) and the pool holds {pool}")
                projections = None
            else:
                # Outside the timing: the pool repeated into one (views, rows, cols) array.
                projections = np.stack([views[i % pool] for i in range(o.views)])
        else:
            projections = views if isinstance(views, np.ndarray) else np.stack(views)
        if projections is not None:
            times: List[float] = []
            check2 = Check()
            out = fdk_ct.empty_volume(volume)
            out.fill(1.0)  # its pages written once, outside the timing
            for run in range(total):
                warm = run < o.warmup
                s = reconstruct_run(o, geometry, volume, projections,
                                    check2 if run == 0 and o.warmup > 0 else None, out)
                print(f"{'warm-up' if warm else 'run'} "
                      f"{run + 1 if warm else run - o.warmup + 1}: reconstruct() {s:.3f} s",
                      flush=True)
                if not warm:
                    times.append(s)
            parts = [reconstruct_parts(o, geometry, volume, projections, out) for _ in range(o.repeats)]
            print("reconstruct() parts, medians: " + ", ".join(
                f"{k} {median([p[k] for p in parts]):.4f} s" for k in parts[0]))
            faults = [fault_seconds(volume) for _ in range(3)]
            if o.warmup > 0:
                print(f"volume check    warm-up run: {check2.text()}")
            print(f"reconstruct()   median {median(times):.3f} s, min {min(times):.3f} s, "
                  f"max {max(times):.3f} s (create, push, finish, read into the reused "
                  f"{volume.size_bytes / 2**30:.2f} GiB volume out=, destroy)")
            print(f"volume faults   {median(faults):.3f} s (median of 3: a new volume's pages "
                  f"written once each, which reconstruct() without out= adds)")
            result["reconstruct"] = {
                "volume_check": check2.as_dict() if o.warmup > 0 else None,
                "median_s": median(times), "runs_s": times,
                "volume_bytes": volume.size_bytes, "volume_faults_s": median(faults),
                "parts_median_s": {k: median([p[k] for p in parts]) for k in parts[0]},
            }

    if o.json:
        doc = {
            "tool": "fdk_bench.py",
            "fdk_ct_version": fdk_ct.__version__,
            "fdk_version": fdk_ct.library_version(),
            "library": fdk_ct.library_path(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "commit": o.commit,
            "command": " ".join([Path(sys.argv[0]).name] + (argv or sys.argv[1:])),
            "host": socket.gethostname(),
            "case": o.case_name,
            "geometry": {"size": o.size, "views": o.views, "det_u": o.det_u, "det_v": o.det_v},
            "backend_requested": o.backend,
            "pool": pool, "repeats": o.repeats, "warmup": o.warmup,
            "push": o.push, "pool_layout": o.pool_layout,
            **result,
        }
        Path(o.json).write_text(json.dumps(doc, indent=2) + "\n")
        print(f"json            {o.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
