#!/usr/bin/env python3
"""Projection stacks and --like volumes as ITK writes them, read by fdk-convert.

ITK (SimpleITK) writes one stack of line integrals as a compressed MetaImage
and as a NRRD, with a pixel pitch and an origin; numpy writes the same
samples as a raw file. fdk-convert reconstructs the ITK files with no pitch
or origin flag and the raw file with the pitch and origin given as
--pixel-size/--detector-origin: the three volumes must be identical (so
ITK's Offset / space origin is read as the detector position of pixel (0,0),
as rtkfdk reads it). Then --like takes the grid of ITK-written volumes whose
direction permutes the axes: the output, opened by ITK, must cover the same
voxel centres.

usage: check_stacks_itk.py FDK_CONVERT WORK_DIR
Exits 77 (ctest: skipped) when SimpleITK or numpy is not importable.
"""
import os
import re
import shutil
import subprocess
import sys

try:
    import numpy as np
    import SimpleITK as sitk
except ImportError as e:  # optional test
    print(f"skipped: {e}")
    sys.exit(77)

convert, work = sys.argv[1:3]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def run(*args):
    r = subprocess.run(list(args), capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({r.returncode}):\n{r.stderr}")
    return r.stderr


def volume(folder):
    return sitk.GetArrayFromImage(sitk.ReadImage(os.path.join(folder, "volume.mha")))


# 60 views of 64 x 48 smooth line integrals, pitch 0.8 x 0.6, an off-centre origin.
w, h, n = 64, 48, 60
u = np.linspace(-1, 1, w)[None, None, :]
v = np.linspace(-1, 1, h)[None, :, None]
t = np.linspace(0, 2 * np.pi, n, endpoint=False)[:, None, None]
proj = (np.exp(-((u - 0.3 * np.cos(t)) ** 2 + v ** 2) * 4) * 2).astype(np.float32)  # (n, h, w)
pitch = (0.8, 0.6)
origin = (-24.0, -13.5)
img = sitk.GetImageFromArray(proj)
img.SetSpacing((pitch[0], pitch[1], 1.0))
img.SetOrigin((origin[0], origin[1], 0.0))
sitk.WriteImage(img, os.path.join(work, "p.mha"), useCompression=True)
sitk.WriteImage(img, os.path.join(work, "p.nrrd"), useCompression=False)
proj.astype(">f4").tofile(os.path.join(work, "p.raw"))

common = ["--sid", "500", "--sdd", "800", "--volume-size", "40", "--voxel-size", "0.5",
          "--format", "mha", "--no-preview", "--threads", "2", "--progress", "none"]
err = run(convert, os.path.join(work, "p.mha"), os.path.join(work, "mha"), *common)
if "pitch and origin in the MetaImage header" not in err:
    sys.exit(f"the MetaImage's pitch and origin were not used:\n{err}")
run(convert, os.path.join(work, "p.nrrd"), os.path.join(work, "nrrd"), *common)
run(convert, os.path.join(work, "p.raw"), os.path.join(work, "raw"), *common,
    "--raw", f"{w},{h},{n}", "--raw-type", "float32", "--raw-endian", "big",
    "--pixel-size", f"{pitch[0]},{pitch[1]}", "--detector-origin", f"{origin[0]},{origin[1]}")
ref = volume(os.path.join(work, "raw"))
for name in ("mha", "nrrd"):
    got = volume(os.path.join(work, name))
    if not np.array_equal(got, ref):
        sys.exit(f"the ITK {name} stack reconstructs differently from the raw file: "
                 f"max difference {np.abs(got - ref).max()}")
if np.abs(ref).max() == 0:
    sys.exit("the reference volume is empty")
print("ITK-written .mha (compressed) and .nrrd stacks == raw stack with the same pitch and origin")


def centres(image):
    """The physical positions of all voxel centres, sorted (a set of points)."""
    size = image.GetSize()
    idx = np.stack(np.meshgrid(*[np.arange(s) for s in size], indexing="ij"), -1).reshape(-1, 3)
    d = np.array(image.GetDirection()).reshape(3, 3)
    p = np.array(image.GetOrigin()) + (idx * np.array(image.GetSpacing())) @ d.T
    return p[np.lexsort(p.T[::-1])]


for direction, ext in (((0, 0, 1, 1, 0, 0, 0, 1, 0), "mha"), ((0, 1, 0, 0, 0, 1, 1, 0, 0), "nrrd"),
                       ((1, 0, 0, 0, 1, 0, 0, 0, 1), "mhd")):
    like = sitk.Image(6, 7, 8, sitk.sitkFloat32)
    like.SetSpacing((0.5, 0.75, 1.25))
    like.SetOrigin((-2.0, -3.0, -4.0))
    like.SetDirection(direction)
    path = os.path.join(work, "like." + ext)
    sitk.WriteImage(like, path)
    out = os.path.join(work, "like_" + ext)
    run(convert, os.path.join(work, "p.mha"), out, "--sid", "500", "--sdd", "800", "--format", "mha",
        "--no-preview", "--threads", "2", "--progress", "none", "--like", path)
    got = sitk.ReadImage(os.path.join(out, "volume.mha"))
    a, b = centres(like), centres(got)
    if a.shape != b.shape or not np.allclose(a, b, atol=1e-9):
        sys.exit(f"--like {path} (direction {direction}): the output covers other voxel centres "
                 f"(size {got.GetSize()}, spacing {got.GetSpacing()}, origin {got.GetOrigin()})")
print("--like: ITK volumes with permuted axes give the same voxel centres")
