#!/usr/bin/env python3
"""fdk-convert's outputs opened by standard Python tools.

tifffile: the TIFF slices, the ImageJ stack and the BigTIFF carry ImageJ's
metadata (is_imagej, unit, spacing, min/max, origin; X/YResolution in pixels
per mm with ResolutionUnit none) and the right values. SimpleITK, when it is
importable: the MetaImage (.mha and .mhd + .raw) and the NRRD have size
(nx, ny, nz), spacing, origin and identity direction, GetArrayFromImage
gives [z][y][x], the same voxels as the TIFF slices, and the .mha has the
fields and bytes ITK's own writer (so rtkfdk) gives the same grid. Without SimpleITK the
MetaImage and NRRD are read by hand (plain x, y, z order).

usage: check_outputs_python.py FDK_SCAN_SIM FDK_CONVERT WORK_DIR
Exits 77 (ctest: skipped) when tifffile or numpy is not importable
(Debian 12: python3-tifffile python3-numpy; scripts/install-deps.sh installs
them). SimpleITK is not packaged in Debian: pip install SimpleITK into a venv
(e.g. build/rtk-venv) and configure with -DFDK_TEST_PYTHON=that/bin/python.
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


def convert_to(name, *args):
    out = os.path.join(work, name)
    run(convert, f"{scan}/projections", out, *common, "--no-preview", *args)
    return out


slices_dir = convert_to("slices")
stack_dir = convert_to("stack", "--format", "stack", "--window", "0,0.04")
big_dir = convert_to("big", "--format", "bigtiff", "--output-type", "uint16", "--window", "0,0.04")
stack16_dir = convert_to("stack16", "--format", "stack", "--output-type", "uint16", "--window", "0,0.04")
mha_dir = convert_to("mha", "--format", "mha")
mhd_dir = convert_to("mhd", "--format", "mhd")
nrrd_dir = convert_to("nrrd", "--format", "nrrd")
nrrd16_dir = convert_to("nrrd16", "--format", "nrrd", "--output-type", "uint16", "--window", "0,0.04")

# The grid fdk-convert chose: centred on the field of view in x and z.
ox, oz = -(nx - 1) / 2 * sx, -(nz - 1) / 2 * sz


def check_resolution(page):
    assert int(page.tags["ResolutionUnit"].value) == 1, page.tags["ResolutionUnit"].value  # none
    xres = page.tags["XResolution"].value
    yres = page.tags["YResolution"].value
    assert abs(xres[0] / xres[1] - 1 / sx) < 1e-5, xres  # pixels per mm
    assert abs(yres[0] / yres[1] - 1 / sz) < 1e-5, yres


def check_imagej(ij, images, first_y=0):
    assert ij["unit"] == "mm", ij
    assert abs(ij["spacing"] - sy) < 1e-9, ij
    assert ij.get("images", 1) == images, ij
    if images > 1:
        assert ij["slices"] == images, ij
    assert ij["loop"] is False, ij
    # ImageJ's physical coordinate: (pixel - origin) * pixel size.
    assert abs(-ij["xorigin"] * sx - ox) < 1e-6, ij
    assert abs(-ij["yorigin"] * sz - oz) < 1e-6, ij
    assert ij["fdk_volume_size"] == f"{nx} {ny} {nz}", ij
    oy = float(ij["fdk_volume_origin"].split()[1])
    assert abs(-ij["zorigin"] * sy - (oy + first_y * sy)) < 1e-6, ij
    return oy


# TIFF slices: one per y plane, x across, z down, ImageJ metadata.
names = sorted(n for n in os.listdir(slices_dir) if n.startswith("slice_"))
assert len(names) == ny, names
assert names[0] == "slice_0000.tif" and names[-1] == f"slice_{ny - 1:04d}.tif", names
planes = []
for y, name in enumerate(names):
    with tifffile.TiffFile(os.path.join(slices_dir, name)) as t:
        assert t.is_imagej, name
        page = t.pages[0]
        a = page.asarray()
        assert a.shape == (nz, nx) and a.dtype == np.float32, (a.shape, a.dtype)
        check_resolution(page)
        ij = t.imagej_metadata
        oy = check_imagej(ij, 1, y)
        # A single slice's display range: its own finite min..max.
        assert np.isclose(ij["min"], a.min()) and np.isclose(ij["max"], a.max()), ij
        planes.append(a)
volume = np.stack(planes)  # (y, z, x)
assert np.isfinite(volume).all()
assert volume.max() > 0.03, volume.max()  # the skull: 2.0 * 0.02 / mm

# The ImageJ stack: a classic TIFF, the same planes, the window as display range.
with tifffile.TiffFile(os.path.join(stack_dir, "volume.tif")) as t:
    assert t.is_imagej and not t.is_bigtiff
    assert len(t.pages) == ny, len(t.pages)
    check_resolution(t.pages[0])
    ij = t.imagej_metadata
    check_imagej(ij, ny)
    assert ij["min"] == 0 and ij["max"] == 0.04, ij
    stack = t.asarray()
assert stack.shape == (ny, nz, nx) and stack.dtype == np.float32, (stack.shape, stack.dtype)
assert np.array_equal(stack, volume), "the ImageJ stack differs from the slices"

# BigTIFF and the uint16 stack: the same planes as uint16 through [0, 0.04].
expect = np.clip(np.round(volume.astype(np.float64) / 0.04 * 65535), 0, 65535)
for path, big in ((os.path.join(big_dir, "volume.tif"), True),
                  (os.path.join(stack16_dir, "volume.tif"), False)):
    with tifffile.TiffFile(path) as t:
        assert t.is_bigtiff == big and t.is_imagej, path
        assert len(t.pages) == ny, len(t.pages)
        ij = t.imagej_metadata
        check_imagej(ij, ny)
        assert ij["min"] == 0 and ij["max"] == 65535, ij
        assert ij["fdk_uint16_window"] == "0 0.04", ij
        a = t.asarray()
    assert a.shape == (ny, nz, nx) and a.dtype == np.uint16, (a.shape, a.dtype)
    assert np.abs(a.astype(np.float64) - expect).max() <= 1, path

# MetaImage and NRRD: (x, y, z) order, identity direction, as rtkfdk writes.
xyz = np.ascontiguousarray(volume.transpose(1, 0, 2))  # [z][y][x]
origin = (ox, oy, oz)
files = [os.path.join(mha_dir, "volume.mha"), os.path.join(mhd_dir, "volume.mhd"),
         os.path.join(nrrd_dir, "volume.nrrd")]
if sitk is not None:
    for path in files:
        img = sitk.ReadImage(path)
        assert img.GetSize() == (nx, ny, nz), (path, img.GetSize())
        assert np.allclose(img.GetSpacing(), (sx, sy, sz)), (path, img.GetSpacing())
        assert np.allclose(img.GetDirection(), (1, 0, 0, 0, 1, 0, 0, 0, 1)), (path, img.GetDirection())
        assert np.allclose(img.GetOrigin(), origin, atol=1e-9), (path, img.GetOrigin(), origin)
        p = img.TransformIndexToPhysicalPoint((3, 5, 7))
        assert np.allclose(p, (ox + 3 * sx, oy + 5 * sy, oz + 7 * sz)), p
        arr = sitk.GetArrayFromImage(img)
        assert arr.dtype == np.float32 and np.array_equal(arr, xyz), f"{path}: voxels differ from the slices"
    # What ITK itself (so rtkfdk) writes for this grid: the same fields and
    # values, the same voxel bytes.
    ref = sitk.GetImageFromArray(xyz)
    ref.SetOrigin(origin)
    ref.SetSpacing((sx, sy, sz))
    ref_path = os.path.join(work, "itk.mha")
    sitk.WriteImage(ref, ref_path)

    def mha_fields(path):
        with open(path, "rb") as f:
            data = f.read()
        cut = data.index(b"ElementDataFile = LOCAL\n") + len(b"ElementDataFile = LOCAL\n")
        fields = dict(line.split(" = ", 1) for line in data[:cut].decode().splitlines())
        return fields, data[cut:]

    ours, our_voxels = mha_fields(files[0])
    itks, itk_voxels = mha_fields(ref_path)
    for key in ("NDims", "BinaryData", "BinaryDataByteOrderMSB", "CompressedData", "TransformMatrix",
                "AnatomicalOrientation", "DimSize", "ElementType"):
        assert ours[key] == itks[key], (key, ours[key], itks[key])
    for key in ("Offset", "CenterOfRotation", "ElementSpacing"):
        assert np.allclose([float(v) for v in ours[key].split()], [float(v) for v in itks[key].split()],
                           atol=1e-12), (key, ours[key], itks[key])
    assert our_voxels == itk_voxels, "the voxels are not laid out as ITK lays them out"
    arr = sitk.GetArrayFromImage(sitk.ReadImage(os.path.join(nrrd16_dir, "volume.nrrd")))
    assert arr.dtype == np.uint16 and np.abs(arr - expect.transpose(1, 0, 2)).max() <= 1
    print("SimpleITK reads the MetaImage, the .mhd + .raw and the NRRD as rtkfdk's layout; "
          "ITK writes the same MetaImage fields and bytes")
else:
    def header_of(path, end):
        with open(path, "rb") as f:
            data = f.read()
        cut = data.index(end) + len(end)
        return data[:cut].decode(), data[cut:]

    text, raw = header_of(files[0], b"ElementDataFile = LOCAL\n")
    assert f"DimSize = {nx} {ny} {nz}\n" in text and "TransformMatrix = 1 0 0 0 1 0 0 0 1\n" in text
    assert np.array_equal(np.frombuffer(raw, dtype="<f4").reshape(nz, ny, nx), xyz)
    with open(os.path.join(mhd_dir, "volume.raw"), "rb") as f:
        assert f.read() == raw
    text, raw = header_of(files[2], b"\n\n")
    assert f"sizes: {nx} {ny} {nz}\n" in text and "space: left-posterior-superior\n" in text
    assert np.array_equal(np.frombuffer(raw, dtype="<f4").reshape(nz, ny, nx), xyz)
    text, raw = header_of(os.path.join(nrrd16_dir, "volume.nrrd"), b"\n\n")
    assert "type: uint16\n" in text
    a = np.frombuffer(raw, dtype="<u2").reshape(nz, ny, nx)
    assert np.abs(a.astype(np.float64) - expect.transpose(1, 0, 2)).max() <= 1
    print("SimpleITK not installed: the MetaImage and NRRD were checked by hand")
print("tifffile reads the slices, the ImageJ stack and the BigTIFF with ImageJ's metadata: ok")
