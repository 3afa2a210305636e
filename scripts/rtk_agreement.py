#!/usr/bin/env python3
"""The agreement matrix of fdk with RTK's rtkfdk (scripts/rtk-agreement.sh runs it).

For every case of tools/fdk-agreement (its `list`), on the same exact
projections and the same RTK XML geometry:

  rel L2 (FOV)  ||fdk - rtkfdk|| / ||rtkfdk|| over the voxels both
                reconstruct: fdk's field of view (where fdk with
                outside_fov = ZERO equals fdk's default);
  rel L2 (all)  the same over every voxel (fdk's default backprojects all);
  RMSE          of each against the phantom at the voxel centres, over the
                central region (planes within 8 of y = 0, columns within 60 mm
                of the axis).

A row is green when rel L2 (FOV) <= 1e-3 and fdk's RMSE is within 10 % of
rtkfdk's. Without rtkfdk (the GPU machine), --reference gives each case's
figures measured with rtkfdk elsewhere on the CPU backend's volume, whose
hash must match: the CUDA row then shows the bound
||cuda - rtk|| <= ||cuda - cpu|| + ||cpu - rtk|| (an upper bound, marked <=).
Needs numpy only; rtkfdk's volumes are read as plain MetaImage.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import time

import numpy as np

N = 128
CENTRE_PLANES = 8
CENTRE_RADIUS = 60.0
VOXEL = 1.6
REL_L2_BOUND = 1e-3
RMSE_RATIO_BOUND = 1.10


def read_mha(path):
    with open(path, "rb") as f:
        data = f.read()
    header, size, etype = {}, None, None
    pos = 0
    while True:
        end = data.index(b"\n", pos)
        line = data[pos:end].decode()
        pos = end + 1
        key, _, value = line.partition("=")
        header[key.strip()] = value.strip()
        if key.strip() == "ElementDataFile":
            break
    if header.get("CompressedData", "False") != "False" or header["ElementDataFile"] != "LOCAL":
        raise SystemExit(f"{path}: only uncompressed MetaImage with LOCAL data is read")
    size = [int(x) for x in header["DimSize"].split()]
    etype = {"MET_FLOAT": np.float32, "MET_DOUBLE": np.float64}[header["ElementType"]]
    count = int(np.prod(size))
    arr = np.frombuffer(data, dtype=etype, count=count, offset=len(data) - count * np.dtype(etype).itemsize)
    return arr.reshape(size[::-1]).astype(np.float32)


def read_raw(path):
    return np.fromfile(path, dtype=np.float32).reshape(N, N, N)  # y, z, x


def central_mask():
    c = -0.5 * (N - 1) * VOXEL + VOXEL * np.arange(N)
    y = np.abs(c) <= CENTRE_PLANES * VOXEL
    xz = (c[None, :] ** 2 + c[:, None] ** 2) <= CENTRE_RADIUS ** 2  # [z, x]
    return y[:, None, None] & xz[None, :, :]


def rmse(volume, phantom, mask):
    d = (volume - phantom)[mask].astype(np.float64)
    return float(np.sqrt(np.mean(d * d)))


def norm(a, mask=None):
    a = a.astype(np.float64)
    return float(np.sqrt(np.sum((a[mask] if mask is not None else a) ** 2)))


def sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()[:16]


def run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if r.returncode != 0:
        sys.stdout.write(r.stdout)
        raise SystemExit(f"failed ({r.returncode}): {' '.join(cmd)}")
    return r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", required=True, help="the fdk-agreement executable")
    ap.add_argument("--work", required=True, help="a folder for projections and volumes")
    ap.add_argument("--backends", default="cpu", help="cpu, cuda or cpu,cuda")
    ap.add_argument("--rtkfdk", help="rtkfdk to run (else --reference)")
    ap.add_argument("--reference", help="JSON of rtkfdk figures from a run with --rtkfdk (read)")
    ap.add_argument("--save-reference", help="write the rtkfdk figures as JSON (merged into an existing file)")
    ap.add_argument("--reference-volumes",
                    help="a folder of rtkfdk volumes (CASE.raw, fdk's layout) measured elsewhere: where one is "
                         "there, rows show the distance itself rather than a bound")
    ap.add_argument("--markdown", help="also write the table as Markdown")
    ap.add_argument("--keep-rtk", action="store_true",
                    help="reuse an rtkfdk volume already in the work folder (same cases, same projections)")
    ap.add_argument("cases", nargs="*")
    a = ap.parse_args()
    a.tool = os.path.abspath(a.tool)  # rtkfdk runs in each case's folder
    if a.rtkfdk:
        a.rtkfdk = os.path.abspath(a.rtkfdk)

    listing = run([a.tool, "list"]).splitlines()
    what = {line.split()[0]: line.split(None, 1)[1] for line in listing if line.strip()}
    cases = a.cases or list(what)
    backends = a.backends.split(",")
    reference = json.load(open(a.reference)) if a.reference else {}
    saved = {}
    t0 = time.time()
    print(run([a.tool, "simulate", a.work] + cases), end="")
    for b in backends:
        print(run([a.tool, "reconstruct", a.work, b] + cases), end="")
    centre = central_mask()
    rows = []
    for case in cases:
        d = os.path.join(a.work, case)
        phantom = read_raw(os.path.join(d, "phantom.raw"))
        rtk = None
        if a.rtkfdk:
            t = time.time()
            if not (a.keep_rtk and os.path.exists(os.path.join(d, "rtk.mha"))):
                extra = run([a.tool, "rtk-args", case]).split()  # the case's filter (--hann, --hannY)
                run([a.rtkfdk, "-g", "geometry.xml", "-p", ".", "-r", "projections.mha", "-o", "rtk.mha",
                     "--dimension", str(N), "--spacing", str(VOXEL), "--origin", str(-0.5 * (N - 1) * VOXEL)] + extra,
                    cwd=d)
            rtk = np.transpose(read_mha(os.path.join(d, "rtk.mha")), (1, 0, 2))  # z,y,x -> y,z,x
            rtk_seconds = time.time() - t
            np.ascontiguousarray(rtk).tofile(os.path.join(d, "rtk.raw"))  # for --reference-volumes
        elif a.reference_volumes and os.path.exists(os.path.join(a.reference_volumes, case + ".raw")):
            rtk = read_raw(os.path.join(a.reference_volumes, case + ".raw"))
        cpu_path = os.path.join(d, "fdk-cpu.raw")
        cpu = read_raw(cpu_path) if os.path.exists(cpu_path) else None
        # The field of view is the library's, one mask for both backends:
        # read off the CPU's pair of volumes where there is one.
        first = "cpu" if "cpu" in backends else backends[0]
        fov = read_raw(os.path.join(d, f"fdk-{first}.raw")) == read_raw(os.path.join(d, f"fdk-{first}-zero.raw"))
        for b in backends:
            fdk = read_raw(os.path.join(d, f"fdk-{b}.raw"))
            row = {"case": case, "what": what[case], "backend": b, "fov": float(fov.mean()),
                   "rmse_fdk": rmse(fdk, phantom, centre)}
            if rtk is not None:
                row["rel_fov"] = norm(fdk - rtk, fov) / norm(rtk, fov)
                row["rel_all"] = norm(fdk - rtk) / norm(rtk)
                row["rmse_rtk"] = rmse(rtk, phantom, centre)
                row["bound"] = False
                if b == "cpu" and a.rtkfdk:
                    saved[case] = {"hash": sha(cpu_path), "d_fov": norm(fdk - rtk, fov), "n_fov": norm(rtk, fov),
                                   "d_all": norm(fdk - rtk), "n_all": norm(rtk), "rmse_rtk": row["rmse_rtk"],
                                   "fov_hash": hashlib.sha256(np.packbits(fov).tobytes()).hexdigest()[:16],
                                   "rtk_seconds": rtk_seconds}
            elif case in reference and cpu is not None:
                ref = reference[case]
                same_cpu = sha(cpu_path) == ref["hash"]
                row["rel_fov"] = (norm(fdk - cpu, fov) + ref["d_fov"]) / ref["n_fov"]
                row["rel_all"] = (norm(fdk - cpu) + ref["d_all"]) / ref["n_all"]
                row["rmse_rtk"] = ref["rmse_rtk"]
                row["bound"] = True
                row["cpu_matches_reference"] = same_cpu
                row["fov_matches_reference"] = (
                    hashlib.sha256(np.packbits(fov).tobytes()).hexdigest()[:16] == ref["fov_hash"])
            rows.append(row)
    if a.save_reference:
        if os.path.exists(a.save_reference):  # other cases' figures stay
            saved = {**json.load(open(a.save_reference)), **saved}
        with open(a.save_reference, "w") as f:
            json.dump(saved, f, indent=1, sort_keys=True)

    lines = ["| case | geometry | backend | FOV | rel L2 vs rtkfdk (FOV) | rel L2 (all voxels) | "
             "RMSE fdk | RMSE rtkfdk | fdk / rtkfdk | ok |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    green = 0
    for r in rows:
        if "rel_fov" not in r:
            lines.append(f"| {r['case']} | {r['what']} | {r['backend']} | {r['fov']:.3f} | n/a | n/a | "
                         f"{r['rmse_fdk']:.5f} | n/a | n/a | no reference |")
            continue
        ratio = r["rmse_fdk"] / r["rmse_rtk"]
        ok = r["rel_fov"] <= REL_L2_BOUND and ratio <= RMSE_RATIO_BOUND
        note = ""
        if r["bound"] and not (r["cpu_matches_reference"] and r["fov_matches_reference"]):
            ok, note = False, " (CPU volume or FOV differs from the reference's)"
        green += ok
        le = "<= " if r["bound"] else ""
        lines.append(f"| {r['case']} | {r['what']} | {r['backend']} | {r['fov']:.3f} | {le}{r['rel_fov']:.2e} | "
                     f"{le}{r['rel_all']:.2e} | {r['rmse_fdk']:.5f} | {r['rmse_rtk']:.5f} | {ratio:.3f} | "
                     f"{'yes' if ok else 'NO'}{note} |")
    lines.append("")
    lines.append(f"{green} of {len(rows)} rows green (rel L2 (FOV) <= {REL_L2_BOUND:g} and RMSE within "
                 f"{round((RMSE_RATIO_BOUND - 1) * 100)} % of rtkfdk's); {time.time() - t0:.0f} s")
    text = "\n".join(lines)
    print(text)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text + "\n")
    return 0 if green == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
