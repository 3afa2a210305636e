"""Run by check-wheel.sh inside a fresh venv where only the wheel is installed.

Checks what a user of the wheel relies on: the package loads the libfdk.so it
carries (and the libraries bundled with it), not one of the machine's, and
reconstructs. The phantom is a uniform sphere at the isocentre, whose line
integrals are known in closed form; every view sees the same disc, so the
check does not depend on the angle convention.
"""
import importlib.metadata
import os
import sys
import sysconfig
from pathlib import Path

import numpy as np

import fdk_ct

SID, SDD = 500.0, 1000.0
PITCH = 2.0           # detector pixel; 1.0 at the isocentre (magnification 2)
ROWS = COLS = 64
N = 64                # voxels per side, spacing 1.0
RADIUS = 20.0
VIEWS = 90

failures = []


def check(ok: bool, what: str) -> None:
    print(("ok:     " if ok else "FAILED: ") + what)
    if not ok:
        failures.append(what)


def sphere_projections() -> np.ndarray:
    u = (np.arange(COLS) - (COLS - 1) / 2.0) * PITCH
    v = (np.arange(ROWS) - (ROWS - 1) / 2.0) * PITCH
    r2 = u[None, :] ** 2 + v[:, None] ** 2
    # Distance from the sphere's centre to the ray source -> pixel.
    d2 = SID ** 2 * r2 / (r2 + SDD ** 2)
    chord = 2.0 * np.sqrt(np.maximum(RADIUS ** 2 - d2, 0.0))
    return np.broadcast_to(chord.astype(np.float32), (VIEWS, ROWS, COLS))


def mapped_libraries() -> list:
    with open("/proc/self/maps") as maps:
        # address perms offset dev inode [path]; anonymous maps have no path.
        fields = [line.split(maxsplit=5) for line in maps]
    paths = {f[5].strip() for f in fields if len(f) == 6}
    return sorted(p for p in paths if ".so" in os.path.basename(p))


installed = Path(sysconfig.get_paths()["platlib"]).resolve()
package = Path(fdk_ct.__file__).resolve().parent
print(f"fdk_ct from {package}")
check(package.parent == installed, f"fdk_ct is the installed one ({installed})")
check((package / "py.typed").is_file(), "py.typed is installed")

geometry = fdk_ct.Geometry.circular(VIEWS, sid=SID, sdd=SDD, detector_spacing=PITCH,
                                    detector_shape=(ROWS, COLS))
volume = fdk_ct.reconstruct(sphere_projections(), geometry, fdk_ct.Volume((N, N, N), 1.0))
centre = float(np.mean(volume[N // 2 - 4:N // 2 + 4, N // 2 - 4:N // 2 + 4, N // 2 - 4:N // 2 + 4]))
outside = float(volume[N // 2, N // 2, N // 2 + 26])
check(volume.shape == (N, N, N), f"volume shape {volume.shape}")
check(abs(centre - 1.0) <= 0.05, f"centre of the unit sphere reconstructs to {centre:.4f} (1 +- 5 %)")
check(abs(outside) <= 0.05, f"outside the sphere: {outside:.4f} (0 +- 0.05)")

# The sample phantom, the modified Shepp-Logan head of fdk_ct.phantom (the
# C library's sample scan's), projected exactly: the brain at 0.2 of mu.
from fdk_ct import phantom  # noqa: E402

head = phantom.modified_shepp_logan(scale=25.0, mu=0.02)
head_geometry = fdk_ct.Geometry.circular(120, sid=SID, sdd=SDD, detector_spacing=PITCH,
                                         detector_shape=(ROWS, COLS))
head_volume = fdk_ct.reconstruct(phantom.project(head_geometry, head), head_geometry,
                                 fdk_ct.Volume((N, N, N), 1.0))
truth = phantom.voxelize(head, head_volume.volume)
brain = (np.abs(np.gradient(truth)).sum(axis=0) == 0) & (np.abs(truth - 0.004) < 1e-6)
brain_mean = float(head_volume[brain].mean())
check(abs(brain_mean - 0.004) <= 0.0004,
      f"the Shepp-Logan head's brain reconstructs to {brain_mean:.5f} (0.004 +- 10 %)")

# Asked before the mapped libraries are listed: on a GPU machine this loads
# the NVIDIA driver, and must load nothing of a CUDA toolkit.
info = fdk_ct.backend_info()

# The libraries the process really mapped, not what the package says it loaded.
toolkit = [p for p in mapped_libraries()
           if os.path.basename(p).lower().startswith(("libcudart", "libcufft", "libnvrtc", "libnvjitlink"))]
check(not toolkit, f"no CUDA toolkit library mapped (the GPU needs only the NVIDIA driver): {toolkit}")
print("mapped libfdk and its bundled dependencies:")
ours = [p for p in mapped_libraries()
        if os.path.basename(p).startswith(("libfdk", "libkissfft", "libzstd"))]
for p in ours:
    print(f"  {p}")
for prefix in ("libfdk.so", "libkissfft", "libzstd"):
    hits = [p for p in ours if os.path.basename(p).startswith(prefix)]
    check(len(hits) == 1 and Path(hits[0]).resolve().is_relative_to(installed),
          f"{prefix} is mapped once, from the installed wheel: {hits}")
check(Path(fdk_ct.library_path()).resolve() == package / "_lib" / "libfdk.so",
      f"fdk_ct.library_path() is the bundled library: {fdk_ct.library_path()}")

notices = [f for f in importlib.metadata.files("fdk-ct") or []
           if f.name == "THIRD-PARTY-NOTICES.txt"]
text = notices[0].read_text() if notices else ""
check(all(f"== {os.path.basename(p)} " in text for p in ours if "libfdk" not in p),
      "THIRD-PARTY-NOTICES.txt names every bundled library")

distribution = importlib.metadata.version("fdk-ct")
check(distribution == fdk_ct.library_version() == fdk_ct.__version__,
      f"one version: wheel {distribution}, library {fdk_ct.library_version()}, "
      f"fdk_ct.__version__ {fdk_ct.__version__}")
print(f"backend: CUDA usable {info['cuda_usable']}, driver CUDA {info['driver_version_text'] or 'none'} "
      f"(the GPU code needs {info['driver_required_text'] or '-'}); {info['message']}")

if failures:
    sys.exit(f"smoke_wheel.py: {len(failures)} check(s) failed")
print("smoke_wheel.py: the installed wheel works")
