"""The CUDA backend through Python: the same volume as the CPU backend, and
the streaming calls on a volume resident on the GPU. Skipped, saying so, on a
machine without a usable GPU."""
import threading

import numpy as np
import pytest

import fdk_ct

pytestmark = pytest.mark.skipif(not fdk_ct.backend_info()["cuda_usable"],
                                reason="skipped: no GPU (" + fdk_ct.backend_info()["message"] + ")")


def test_cuda_agrees_with_the_cpu_backend(small_scan):
    geo, proj, grid = small_scan
    cpu = fdk_ct.reconstruct(proj, geo, grid, backend="cpu", threads=2)
    with fdk_ct.Reconstructor(geo, grid, backend="cuda") as rec:
        assert rec.backend == "cuda" and len(rec.device_stats()) >= 1
        for i in range(geo.num_views):
            rec.push(i, proj[i])
        rec.finish()
        cuda = rec.read_volume()
    # The texture units interpolate with 8-bit fractions: single voxels
    # differ by up to ~1e-3 of the peak, the volume by far less (the C GPU
    # tests' bound on the relative L2 is the same).
    rel_l2 = float(np.linalg.norm(cuda - cpu) / np.linalg.norm(cpu))
    assert rel_l2 < 1e-3, rel_l2
    assert float(np.abs(cuda - cpu).max()) < 2e-3 * float(np.abs(cpu).max())


def test_cuda_streaming_with_a_reader_thread(small_scan):
    geo, proj, grid = small_scan
    ref = fdk_ct.reconstruct(proj, geo, grid, backend="cuda")
    out = np.full(grid.shape, np.nan, np.float32)
    with fdk_ct.Reconstructor(geo, grid, backend="cuda", slab_thickness=16) as rec:
        t = threading.Thread(target=lambda: [out.__setitem__((slice(None), slice(s.y_begin, s.y_end)), s.data)
                                             for s in rec.slabs()])
        t.start()
        for i in range(geo.num_views):
            rec.push(i, proj[i])
        rec.finish()
        t.join(60)
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-6 * float(np.abs(ref).max()))


def test_cuda_float16_store(small_scan):
    geo, proj, grid = small_scan
    exact = fdk_ct.reconstruct(proj, geo, grid, backend="cuda")
    half = fdk_ct.reconstruct(proj, geo, grid, backend="cuda", precision="float16")
    assert np.abs(exact - half).max() < 1e-3 * np.abs(exact).max()
