#!/usr/bin/env python3
"""RTK's own files through fdk-convert, checked the way a lab would check them.

RTK makes a scan as its users keep one: rtksimulatedgeometry writes the RTK
XML geometry, rtkprojectshepploganphantom the projections as a MetaImage
stack (spacing and origin in its header). rtkfdk reconstructs it; fdk-convert
converts the same two files with no flag about the detector (pixel pitch and
origin come from the stack's header) and `--like` rtkfdk's volume for the
grid, into a MetaImage, an NRRD and TIFF slices. Then:

  * SimpleITK reads fdk's .mha and .nrrd with rtkfdk's size, spacing, origin
    and direction, and arrays within REL_L2_BOUND relative L2 of rtkfdk's
    over the field of view (CASES says which), as the agreement matrix
    measures; the
    figure over all voxels is printed too (outside the field of view both
    hold partial sums, which are not the object and which differ for tilted
    and half-fan views, see docs/ACCURACY.md);
  * tifffile reads the TIFF slices as ImageJ files that Fiji shows in
    millimetres (unit, spacing, resolution) with the same values.

Each geometry case (a centred full scan, a short scan with offsets and
tilts, a displaced detector) is one row; exit 0 when every row passes.

usage: rtk_roundtrip.py --convert FDK_CONVERT --rtk-bin VENV/bin --work DIR
Needs numpy, SimpleITK and tifffile (scripts/rtk-roundtrip.sh installs them
with itk-rtk into build/rtk-venv).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import SimpleITK as sitk
import tifffile

REL_L2_BOUND = 1e-3

# name, rtksimulatedgeometry options, projection size (u, v), pixel (mm),
# volume (size, spacing), half fan. The field of view of a half fan is the
# circle fdk's plan counts (--outside-fov zero keeps it); of a full fan, the
# voxels every view's matrix maps onto the detector (which also follows
# tilts, which fdk's count leaves out).
CASES = [
    ("full_scan", ["-n", "180", "--sid", "500", "--sdd", "800"], (128, 96), 1.0, (96, 1.0), False),
    ("short_scan_offsets_tilts",
     ["-n", "120", "--arc", "220", "--first_angle", "10", "--sid", "600", "--sdd", "900",
      "--proj_iso_y", "-2", "--source_x", "1.5", "--source_y", "0.5",
      "--out_angle", "2", "--in_angle", "1"], (128, 96), 1.0, (80, 1.2), False),
    ("displaced_detector", ["-n", "200", "--sid", "500", "--sdd", "800", "--proj_iso_x", "40"],
     (112, 96), 1.0, (96, 1.0), True),
]


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.stderr.write(f"command failed ({r.returncode}): {' '.join(cmd)}\n{r.stdout}\n{r.stderr}\n")
        raise SystemExit(1)
    return r


def same_grid(a, b):
    problems = []
    if a.GetSize() != b.GetSize():
        problems.append(f"size {a.GetSize()} vs {b.GetSize()}")
    for what, x, y in (("spacing", a.GetSpacing(), b.GetSpacing()),
                       ("origin", a.GetOrigin(), b.GetOrigin()),
                       ("direction", a.GetDirection(), b.GetDirection())):
        if not np.allclose(x, y, rtol=0, atol=1e-6):
            problems.append(f"{what} {tuple(round(v, 6) for v in x)} vs {tuple(round(v, 6) for v in y)}")
    return problems


def seen_by_every_view(geometry_xml, projections, volume):
    """[z][y][x] mask of the voxels whose centres every view's matrix maps
    inside the detector (between the first and last pixel centres)."""
    text = open(geometry_xml).read()
    matrices = [np.array([float(v) for v in m.split()]).reshape(3, 4)
                for m in re.findall(r"<Matrix>(.*?)</Matrix>", text, re.S)]
    nu, nv = projections.GetSize()[:2]
    ou, ov = projections.GetOrigin()[:2]
    su, sv = projections.GetSpacing()[:2]
    size, origin, spacing = volume.GetSize(), volume.GetOrigin(), volume.GetSpacing()
    axes = [origin[a] + spacing[a] * np.arange(size[a]) for a in range(3)]
    z, y, x = np.meshgrid(axes[2], axes[1], axes[0], indexing="ij")
    points = np.stack([x.ravel(), y.ravel(), z.ravel(), np.ones(x.size)])
    mask = np.ones(x.size, dtype=bool)
    for m in matrices:
        p = m @ points
        u = (p[0] / p[2] - ou) / su
        v = (p[1] / p[2] - ov) / sv
        mask &= (u >= 0) & (u <= nu - 1) & (v >= 0) & (v <= nv - 1)
    return mask.reshape(x.shape)


def rel_l2(a, b, mask=None):
    if a.shape != b.shape:
        return float("inf")
    if mask is not None:
        a, b = a[mask], b[mask]
    return float(np.linalg.norm((a - b).ravel()) / np.linalg.norm(b.ravel()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--convert", required=True)
    ap.add_argument("--rtk-bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--backend", default="cpu")
    args = ap.parse_args()
    tool = lambda name: os.path.join(args.rtk_bin, name)
    failures = 0
    print(f"{'case':26} {'grid':9} {'FOV':>5} {'mha (FOV)':>10} {'nrrd (FOV)':>10} "
          f"{'tiff (FOV)':>10} {'mha (all)':>10} {'ImageJ':>7}")
    for name, geometry_options, (nu, nv), pixel, (n, voxel), half_fan in CASES:
        work = os.path.join(args.work, name)
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        geometry = os.path.join(work, "geometry.xml")
        projections = os.path.join(work, "projections.mha")
        run([tool("rtksimulatedgeometry"), "-o", geometry] + geometry_options)
        run([tool("rtkprojectshepploganphantom"), "-g", geometry, "-o", projections,
             "--spacing", str(pixel), "--dimension", f"{nu},{nv}", "--phantomscale", "40"])
        rtk_volume = os.path.join(work, "rtk.mha")
        run([tool("rtkfdk"), "-p", work, "-r", "projections.mha", "-g", geometry, "-o", rtk_volume,
             "--spacing", str(voxel), "--dimension", str(n)])
        reference = sitk.ReadImage(rtk_volume)
        ref = sitk.GetArrayFromImage(reference).astype(np.float64)
        fov_dir = os.path.join(work, "fdk_fov")
        run([args.convert, projections, fov_dir, "--geometry", geometry, "--like", rtk_volume,
             "--format", "mha", "--outside-fov", "zero", "--backend", args.backend, "--quiet", "--no-preview"])
        fov = sitk.GetArrayFromImage(sitk.ReadImage(os.path.join(fov_dir, "volume.mha"))) != 0
        if not half_fan:
            fov &= seen_by_every_view(geometry, sitk.ReadImage(projections), reference)
        row = {"fov": float(fov.mean())}
        for fmt in ("mha", "nrrd", "tiff"):
            out = os.path.join(work, "fdk_" + fmt)
            run([args.convert, projections, out, "--geometry", geometry, "--like", rtk_volume,
                 "--format", fmt, "--backend", args.backend, "--quiet", "--no-preview"])
            if fmt == "tiff":
                files = sorted(f for f in os.listdir(out) if f.endswith(".tif"))
                planes, meta_ok = [], True
                for f in files:
                    with tifffile.TiffFile(os.path.join(out, f)) as t:
                        ij = t.imagej_metadata or {}
                        meta_ok &= t.is_imagej and ij.get("unit") in ("mm", "millimeter") and \
                            abs(float(ij.get("spacing", 0)) - reference.GetSpacing()[1]) < 1e-6
                        page = t.pages[0]
                        x_res = page.tags["XResolution"].value
                        meta_ok &= abs(x_res[1] / x_res[0] - reference.GetSpacing()[0]) < 1e-6
                        planes.append(t.asarray())
                # fdk's slices are y planes: x across, z down -> array [y][z][x];
                # ITK's array of rtkfdk's volume is [z][y][x].
                vol = np.stack(planes).transpose(1, 0, 2).astype(np.float64)
                row["tiff"] = rel_l2(vol, ref, fov)
                row["imagej"] = meta_ok and len(files) == reference.GetSize()[1]
            else:
                path = os.path.join(out, "volume." + fmt)
                image = sitk.ReadImage(path)
                problems = same_grid(image, reference)
                row["grid_" + fmt] = problems
                arr = sitk.GetArrayFromImage(image).astype(np.float64)
                row[fmt] = rel_l2(arr, ref, fov)
                if fmt == "mha":
                    row["all"] = rel_l2(arr, ref)
        grid_ok = not row["grid_mha"] and not row["grid_nrrd"]
        ok = grid_ok and row["mha"] <= REL_L2_BOUND and row["nrrd"] <= REL_L2_BOUND and \
            row["tiff"] <= REL_L2_BOUND and row["imagej"]
        failures += not ok
        print(f"{name:26} {'same' if grid_ok else 'DIFFERENT':9} {row['fov']:5.3f} {row['mha']:10.2e} "
              f"{row['nrrd']:10.2e} {row['tiff']:10.2e} {row['all']:10.2e} "
              f"{'yes' if row['imagej'] else 'NO':>7}  {'ok' if ok else 'FAILED'}")
        for p in row["grid_mha"] + row["grid_nrrd"]:
            print(f"    {p}")
    print(f"rtk round trip: {len(CASES) - failures} of {len(CASES)} cases pass "
          f"(bound {REL_L2_BOUND:g} relative L2 over the field of view)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
