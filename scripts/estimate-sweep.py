#!/usr/bin/env python3
"""Random misaligned scans through the tools, as a user meets them
(docs/ACCURACY.md, "Scans the suite did not know"): fdk-scan-sim renders raw
frames of a detector off along u and turned in its plane while the geometry
files say neither; fdk-convert --estimate-geometry reads them. One line a
scan: the truth, the estimate, its sigmas and confidence, and a flag where an
answer is wrong with confidence 0.5 or more (OFFSET: more than 0.1 px off;
TILT: a tilt reported more than 0.05 deg off) or a tilt of 0.05 deg or more
was declined.

  usage: scripts/estimate-sweep.py SEED COUNT [BUILD_DIR]   (default build/)
"""
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

seed, count = int(sys.argv[1]), int(sys.argv[2])
build = sys.argv[3] if len(sys.argv) > 3 else os.path.join(os.path.dirname(__file__), "..", "build")
sim = os.path.join(build, "tools/fdk-scan-sim/fdk-scan-sim")
convert = os.path.join(build, "tools/fdk-convert/fdk-convert")
rng = random.Random(seed)


def number(pattern, text):
    m = re.search(pattern, text)
    return float(m.group(1)) if m else float("nan")


work = tempfile.mkdtemp(prefix="fdk-estimate-sweep-")
try:
    for k in range(count):
        det = rng.choice(["128", "256", "256,128", "384,192", "200,300", "512,96"])
        pix = rng.choice([0.2, 0.5, 0.8, 1.0])
        sid, sdd = rng.choice([(500, 800), (300, 1200), (1000, 1100), (700, 900), (150, 600)])
        views = rng.choice([90, 180, 360, 720])
        arc = rng.choice([360, 360, -360, "short", 270, 200])
        half_width = int(det.split(",")[0]) * pix / 2
        if arc == "short":
            arc = round(180 + 2 * math.degrees(math.atan(half_width / sdd)) + 2, 1)
        start = rng.choice([0, 37.5, -90])
        off = rng.choice([0, 0.3, -0.7, 1.5, -3, 5, -8, 12])
        tilt = rng.choice([0, 0, 0.05, -0.2, 0.5, -1])
        phantom = rng.choice(["shepp-logan", "modified"])
        noise = rng.choice(["--no-noise", "--i0 20000", "--i0 2000"])
        scale = rng.choice(["", "", "--scale %g" % (0.4 * half_width * sid / sdd)])
        scan = os.path.join(work, "scan")
        shutil.rmtree(scan, ignore_errors=True)
        args = (f"{sim} {scan} --views {views} --detector {det} --pixel-size {pix} --sid {sid} --sdd {sdd} "
                f"--arc {arc} --start-angle {start} --detector-offset {off} --detector-tilt {tilt} "
                f"--phantom {phantom} {noise} {scale} --threads 2")
        r = subprocess.run(args, shell=True, capture_output=True, text=True)
        if r.returncode:
            print("SIMFAIL", args, r.stderr.strip())
            continue
        r = subprocess.run(f"{convert} {scan}/projections --dark {scan}/dark --flat {scan}/flat "
                           f"--geometry {scan}/scan.ini --estimate-geometry --threads 2",
                           shell=True, capture_output=True, text=True)
        out = r.stdout + r.stderr
        offset = number(r"offset:\s+([-+0-9.]+) px", out)
        offset_sigma = number(r"offset:.*sigma ([0-9.]+) px", out)
        tilt_est = number(r"tilt:\s+([-+0-9.]+) deg", out)
        tilt_sigma = number(r"tilt:.*sigma ([0-9.]+) deg", out)
        confidence = number(r"confidence: ([0-9.]+)", out)
        tilt_reported = "tilt estimated" in out
        flags = []
        if confidence >= 0.5 and not abs(offset - off) <= 0.1:
            flags.append("OFFSET")
        if tilt_reported and confidence >= 0.5 and not abs(tilt_est - tilt) <= 0.05:
            flags.append("TILT")
        if not tilt_reported and abs(tilt) >= 0.05:
            flags.append("declined")
        tilt_error = f"{tilt_est - tilt:+.3f}" if tilt_reported else "  -   "
        print(f"{k:3d} det={det:8s} pix={pix} sid/sdd={sid}/{sdd} views={views} arc={arc} start={start} "
              f"off={off} tilt={tilt} {phantom[:4]} {noise:11s} {scale:13s} | off {offset:+.3f} "
              f"(err {offset - off:+.3f} s {offset_sigma}) tilt {tilt_est:+.3f} (err {tilt_error} s {tilt_sigma}) "
              f"conf {confidence} rc={r.returncode} {' '.join(flags)}", flush=True)
finally:
    shutil.rmtree(work, ignore_errors=True)
