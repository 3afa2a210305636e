"""What Reconstructor.push costs in Python alone, per call.

fdk_push_projection is replaced by a C function that returns at once (built
here with cc into a temporary folder), so the loop times only the binding:
360 pushes of 512 x 512 float32 views through Reconstructor.push, against
the same 360 calls made through ctypes directly with pointers computed
beforehand. The difference is what each view's push waits for Python.

    FDK_CT_LIBRARY=build/capi/libfdk.so PYTHONPATH=bindings/python/src \\
        python3 bindings/python/bench/push_cost.py
"""
from __future__ import annotations

import ctypes
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import fdk_ct
from fdk_ct import _native

VIEWS, ROWS, COLS, LOOPS = 360, 512, 512, 300


def no_op_push() -> ctypes._CFuncPtr:
    folder = Path(tempfile.mkdtemp(prefix="fdk-push-cost-"))
    (folder / "noop.c").write_text(
        "int noop(void* c, int i, const void* p, unsigned long pitch, const void* g)"
        " { return 0; }\n")
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", str(folder / "noop.c"), "-o",
                    str(folder / "libnoop.so")], check=True)
    f = ctypes.CDLL(str(folder / "libnoop.so")).noop
    # fdk_push_projection's prototype, so that ctypes converts the same arguments.
    f.restype = ctypes.c_int32
    f.argtypes = [ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p, ctypes.c_size_t,
                  ctypes.POINTER(_native.View)]
    return f


def median_per_call(loop) -> float:
    times = sorted(loop() for _ in range(LOOPS))
    return times[len(times) // 2] / VIEWS


def main() -> int:
    f = no_op_push()
    geometry = fdk_ct.Geometry.circular(VIEWS, 1000.0, 1500.0, 0.75,
                                        detector_shape=(ROWS, COLS))
    rec = fdk_ct.Reconstructor(geometry, fdk_ct.Volume((8, 8, 8), 1.0), backend="cpu")
    real = rec._push
    rec._push = f  # the function Reconstructor.push calls
    pool = np.ones((VIEWS, ROWS, COLS), np.float32)
    pointers = [pool[i].ctypes.data for i in range(VIEWS)]
    handle, push = rec._handle, rec.push

    def binding() -> float:
        t = time.perf_counter()
        for v in range(VIEWS):
            push(v, pool[v])
        return time.perf_counter() - t

    def raw() -> float:
        t = time.perf_counter()
        for v in range(VIEWS):
            f(handle, v, pointers[v], 4 * COLS, None)
        return time.perf_counter() - t

    try:
        b, r = median_per_call(binding), median_per_call(raw)
    finally:
        rec._push = real
        rec.close()
    print(f"Reconstructor.push {b * 1e6:.2f} us, ctypes directly {r * 1e6:.2f} us per call "
          f"(medians of {LOOPS} loops of {VIEWS}); the binding's own cost "
          f"{(b - r) * 1e6:.2f} us a push, {(b - r) * VIEWS * 1e3:.2f} ms for {VIEWS} views")
    return 0


if __name__ == "__main__":
    sys.exit(main())
