#!/usr/bin/env python3
"""fdk-convert's outputs opened by standard Python tools.

TIFF slices and the BigTIFF with tifffile (sizes, types, resolution tags,
values), the MetaImage with SimpleITK when it is installed (size, spacing,
origin, direction: ITK must see the physical image), else by hand.

usage: check_outputs_python.py FDK_SCAN_SIM FDK_CONVERT WORK_DIR
Exits 77 (ctest: skipped) when tifffile or numpy is not importable.
"""
import os
import shutil
import subprocess
import sys

try:
    import numpy as np
    import tifffile
except ImportError as e:  # optional test
    print(f"skipped: {e}")
    sys.exit(77)
try:
    import SimpleITK as sitk
except ImportError:
    sitk = None

sim, convert, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def run(*args):
    r = subprocess.run(list(args), capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({r.returncode}):\n{r.stderr}")


scan = os.path.join(work, "scan")
run(sim, scan, "--views", "60", "--detector", "64", "--threads", "2")
nx, ny, nz = 40, 30, 50
sx, sy, sz = 0.9, 0.7, 0.8
common = ["--dark", f"{scan}/dark", "--flat", f"{scan}/flat", "--geometry", f"{scan}/scan.ini",
          "--volume-size", f"{nx},{ny},{nz}", "--voxel-size", f"{sx},{sy},{sz}",
          "--threads", "2", "--quiet", "--force"]
out = os.path.join(work, "out")
run(convert, f"{scan}/projections", out, *common)
run(convert, f"{scan}/projections", out, *common, "--format", "bigtiff",
    "--output-type", "uint16", "--window", "0,0.04")
run(convert, f"{scan}/projections", out, *common, "--format", "mha", "--no-preview")

# TIFF slices: one per y plane, x across, z down.
names = sorted(n for n in os.listdir(out) if n.startswith("slice_"))
assert len(names) == ny, names
assert names[0] == "slice_0000.tif" and names[-1] == f"slice_{ny - 1:04d}.tif", names
planes = []
for name in names:
    with tifffile.TiffFile(os.path.join(out, name)) as t:
        page = t.pages[0]
        a = page.asarray()
        assert a.shape == (nz, nx) and a.dtype == np.float32, (a.shape, a.dtype)
        unit = page.tags["ResolutionUnit"].value
        xres = page.tags["XResolution"].value
        yres = page.tags["YResolution"].value
        assert int(unit) == 3, unit  # centimetre
        assert abs(xres[0] / xres[1] - 10 / sx) < 1e-3, xres
        assert abs(yres[0] / yres[1] - 10 / sz) < 1e-3, yres
        planes.append(a)
volume = np.stack(planes)  # (y, z, x)
assert np.isfinite(volume).all()
assert volume.max() > 0.03, volume.max()  # the skull: 2.0 * 0.02 / mm

# BigTIFF: the same planes as uint16 through the window [0, 0.04].
with tifffile.TiffFile(os.path.join(out, "volume.tif")) as t:
    assert t.is_bigtiff
    assert len(t.pages) == ny, len(t.pages)
    big = t.asarray()
assert big.shape == (ny, nz, nx) and big.dtype == np.uint16, (big.shape, big.dtype)
expect = np.clip(np.round(volume.astype(np.float64) / 0.04 * 65535), 0, 65535)
assert np.abs(big.astype(np.float64) - expect).max() <= 1, np.abs(big - expect).max()

# MetaImage: ITK's view of it.
mha = os.path.join(out, "volume.mha")
origin = (-(nx - 1) / 2 * sx, None, -(nz - 1) / 2 * sz)
if sitk is not None:
    img = sitk.ReadImage(mha)
    assert img.GetSize() == (nx, nz, ny), img.GetSize()
    assert np.allclose(img.GetSpacing(), (sx, sz, sy)), img.GetSpacing()
    assert np.allclose(img.GetDirection(), (1, 0, 0, 0, 0, 1, 0, 1, 0)), img.GetDirection()
    assert abs(img.GetOrigin()[0] - origin[0]) < 1e-9 and abs(img.GetOrigin()[2] - origin[2]) < 1e-9
    # Voxel (x=3, y=5, z=7) is index (3, 7, 5) and sits at origin + (3 sx, 5 sy, 7 sz).
    p = img.TransformIndexToPhysicalPoint((3, 7, 5))
    o = img.GetOrigin()
    assert np.allclose(p, (o[0] + 3 * sx, o[1] + 5 * sy, o[2] + 7 * sz)), p
    arr = sitk.GetArrayFromImage(img)  # numpy order (y, z, x)
    assert np.array_equal(arr, volume), "MetaImage voxels differ from the slices"
    print("SimpleITK reads the MetaImage as the physical volume")
else:
    header = {}
    with open(mha, "rb") as f:
        while True:
            line = f.readline().decode()
            k, v = (s.strip() for s in line.split("=", 1))
            header[k] = v
            if k == "ElementDataFile":
                break
        data = np.frombuffer(f.read(), dtype="<f4").reshape(ny, nz, nx)
    assert header["DimSize"] == f"{nx} {nz} {ny}", header["DimSize"]
    assert header["TransformMatrix"] == "1 0 0 0 0 1 0 1 0"
    assert np.array_equal(data, volume)
    print("SimpleITK not installed: the MetaImage header was checked by hand")
print("tifffile reads the slices and the BigTIFF: ok")
