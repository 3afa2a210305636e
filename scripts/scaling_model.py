#!/usr/bin/env python3
"""fdk's distributed design on paper: how long a reconstruction takes on 1-64
nodes of 8 H200s (docs/DISTRIBUTED.md, "The scaling model", prints its tables).

Nothing here is measured. Each input below says where it comes from: a figure
measured on the GPU machine (docs/PERFORMANCE.md, the design's BENCHMARKS.md,
issue 29) or an assumption about a cluster we have never run on, marked
ASSUMED. Every time the script prints is computed from these inputs.

Usage: python3 scripts/scaling_model.py   (plain Python 3, no packages)
       python3 scripts/scaling_model.py --check docs/DISTRIBUTED.md
"""
import contextlib
import io
import math
import sys

GB = 1e9
GiB = 2.0 ** 30

# --- Geometry: the design's BENCHMARKS.md, used by every case ----------------
SID_MM = 1000.0
SDD_MM = 1500.0
CUBE_MM = 256.0            # volume: a cube centred on the isocentre
DETECTOR_MM = CUBE_MM * 1.5  # pixel 256*1.5/U mm, so U pixels span 384 mm
# fdk backprojects the whole cube by default (outside_fov, docs/DECISIONS.md),
# so the farthest voxel from the axis is a corner of the cube's x-z square.
RADIUS_MM = CUBE_MM / 2.0 * math.sqrt(2.0)
ROW_MARGIN = 1             # bilinear interpolation reads one row either side

# --- The H200, measured (docs/PERFORMANCE.md unless said) --------------------
# Backprojection, GUPS per GPU = N^3 K / kernel seconds.
#  1494: (d) 4096^3 on one H200, 97fe20b (2026-11-25), kernel 110.4 s, voxels
#        outside the field of view backprojected (the default since 0.2); the
#        latest (d) kernel figure. Used for every table below.
#  2306: (d) with float16 storage on four H200s, f021536 (2026-11-22), 17.7-18.0 s
#        busy per GPU, voxels outside the field of view then zeroed and skipped.
#        Used only in the "what would have to change" table.
BP_GUPS = 1494.0
BP_GUPS_F16_ZEROED = 2306.0
# Ramp filter on the GPU (upload, weights, cuFFT, download), 3b6082d's c8 line:
# "filter 1.47 s" for 1200 views of 2048 x 2048. Rows are filtered along u, so
# the cost grows with the pixels times log2 of the padded row length (ASSUMED
# scaling: an FFT's N log N; the 4096- and 8192-wide rows are not measured).
FILTER_PX_PER_S = 1200 * 2048 * 2048 / 1.47
FILTER_REF_LOG2 = math.log2(2 * 2048)
# The store, on one core of the GPU machine (store-bench --width 2048, Gaussian
# noise 2e-3, the benchmark's data), MB/s of float32 input; float16 storage:
STORE_F16_CODED_MBS = 691.0      # zstd-coded, ratio 2.378 against float32
STORE_F16_CODED_READ_MBS = 1873.0
STORE_F16_UNCODED_MBS = 2162.0   # byte-shuffled only, ratio 2.0
STORE_F16_UNCODED_READ_MBS = 5026.0
STORE_F16_CODED_RATIO = 2.378
STORE_WORKERS = 12               # docs/DECISIONS.md: "Store workers (up to 12)"
# Host <-> GPU copies with every GPU copying at once (BENCHMARKS.md, measured on
# four H200s on PCIe Gen5 x16): 41 GB/s up, 35 GB/s down per GPU. ASSUMED to
# hold for eight GPUs per node.
H2D_BYTES_PER_S = 41 * GB
D2H_BYTES_PER_S = 35 * GB
# Host memory copies on one node: a host-only probe on the four-GPU machine
# copied views into pinned memory at 60-68 GB/s while four GPUs uploaded
# (PERFORMANCE.md, sixth pass). ASSUMED: MPI's shared-memory transport moves
# rank-to-rank bytes on one node at 60 GB/s in all (one copy, CMA).
INTRA_NODE_BYTES_PER_S = 60 * GB
# A resident volume's GPUs start after an eighth of the scan: the first group
# of diagonal mirror pairs completes at view 213 of 1200 (PERFORMANCE.md,
# ninth pass).
RESIDENT_START_FRACTION = 213.0 / 1200.0

# --- The cluster: ASSUMED, none of it measured by us -------------------------
GPUS_PER_NODE = 8
GPU_BUDGET = 120 * GiB          # of the H200's 140 GiB (143 771 MiB reported)
SLAB_MAX = 48 * GiB             # a streamed slab; two buffers + row windows fit
HOST_STORE_LIMIT = 128 * GiB    # per rank: half of 256 GiB (a 2 TiB node / 8)
# Network: 4 x 400 Gb/s per node = 200 GB/s each way; MPI reaches 80 % of it
# on large messages; a non-blocking fat tree (full bisection).
NET_BYTES_PER_S = 4 * 400e9 / 8
NET_EFFICIENCY = 0.8
# Parallel file system: each node reads at 50 GB/s and writes at 25 GB/s (half
# of two 400 Gb/s storage links), the whole system at most 1 TB/s read and
# 0.5 TB/s write, shared by all nodes.
FS_READ_NODE = 50 * GB
FS_READ_TOTAL = 1000 * GB
FS_WRITE_NODE = 25 * GB
FS_WRITE_TOTAL = 500 * GB
# NVLink inside a node (only the "what would have to change" variants use it):
# ASSUMED 300 GB/s per GPU for a reduce-scatter between the 8 GPUs of a node.
NVLINK_BYTES_PER_S = 300 * GB

# --- The data -----------------------------------------------------------------
RAW_BYTES = 4        # projections enter as float32 line integrals
VOLUME_BYTES = 4     # the volume leaves as float32

CASES = [
    # name, N (volume N^3), K views, U = V detector
    ("(d) 4096³ from 2400 × 4096²", 4096, 2400, 4096),
    ("8192³ from 4800 × 8192²", 8192, 4800, 8192),
]
NODE_COUNTS = [1, 2, 4, 8, 16, 32, 64]

AS_BUILT = dict(
    name="as built", ranks_per_range=1, wire_bytes=RAW_BYTES,
    filter_on_sender=False, keep_views=True, gups=BP_GUPS,
    volume_bytes=VOLUME_BYTES)


def rows_for_planes(n, v, p0, p1):
    """Detector rows a y-range of planes [p0, p1) needs over a full turn.

    A plane at height y projects onto v = y * SDD / (SID - s), s the voxel's
    depth towards the source; over the turn s spans +-RADIUS_MM, so the same
    plane lands on rows magnified from SDD/(SID+R) to SDD/(SID-R)."""
    vox = CUBE_MM / n
    pix = DETECTOR_MM / v
    y0 = (p0 + 0.5) * vox - CUBE_MM / 2
    y1 = (p1 - 0.5) * vox - CUBE_MM / 2
    near = SDD_MM / (SID_MM - RADIUS_MM)
    far = SDD_MM / (SID_MM + RADIUS_MM)
    lo = min(y0 * near, y0 * far) / pix + v / 2 - 0.5
    hi = max(y1 * near, y1 * far) / pix + v / 2 - 0.5
    first = max(0, math.floor(lo) - ROW_MARGIN)
    last = min(v - 1, math.ceil(hi) + ROW_MARGIN)
    return max(0, last - first + 1)


def split(total, parts):
    """Equal contiguous shares (every rank the same capacity)."""
    return [(i * total // parts, (i + 1) * total // parts) for i in range(parts)]


def filter_seconds(pixels, u):
    return pixels / FILTER_PX_PER_S * math.log2(2 * u) / FILTER_REF_LOG2


def model(case, nodes, d, gpn=GPUS_PER_NODE, fs=True):
    """Stage times (seconds), each of its slowest rank, and the total, for design d.

    ranks_per_range s: 1 is fdk's design (every rank its own y range, every
    view to every rank); s > 1 lets s ranks share one y range, each taking
    every s-th view, their partial volumes summed before the write.
    gpn: GPUs (ranks) per node. fs=False: projections already in host memory
    and the volume left there (fdk-bench's host-to-host runs)."""
    _, n, k, u = case
    v = u
    gpus = nodes * gpn
    s = d["ranks_per_range"]
    ranges = split(n, gpus // s)
    bands = [rows_for_planes(n, v, a, b) for a, b in ranges]
    rank_range = [r // s for r in range(gpus)]
    views_per_rank = k / s              # views each rank receives
    row_bytes = u * d["wire_bytes"]
    total_band = sum(bands)

    # Read: every view read once, whole, by one rank (root = -1).
    input_bytes = k * u * v * RAW_BYTES
    t_read = input_bytes / min(nodes * FS_READ_NODE, FS_READ_TOTAL) if fs else 0.0

    # Send: each view goes to one rank of every y range, its band of rows.
    t_net = 0.0
    t_intra = 0.0
    for node in range(nodes):
        mine = range(node * gpn, (node + 1) * gpn)
        kept = sum(bands[rank_range[r]] for r in mine) / s  # rows per view
        egress = k / nodes * (total_band - kept) * row_bytes
        ingress = sum(views_per_rank * bands[rank_range[r]] for r in mine) \
            * (nodes - 1) / nodes * row_bytes
        t_net = max(t_net, max(egress, ingress)
                    / (NET_BYTES_PER_S * NET_EFFICIENCY))
        t_intra = max(t_intra, k / nodes * kept * row_bytes
                      / INTRA_NODE_BYTES_PER_S)

    # Per rank: the ranks with the widest bands are the slowest.
    worst = {}
    for r in range(gpus):
        j = rank_range[r]
        p0, p1 = ranges[j]
        planes = p1 - p0
        band = bands[j]
        if d["filter_on_sender"]:
            # Whole views filtered by the rank that read them, then the
            # receiver uploads its filtered rows: both on this rank's GPU.
            t_filter = filter_seconds(k / gpus * u * v, u) \
                + views_per_rank * band * u * d["wire_bytes"] / H2D_BYTES_PER_S
        else:
            t_filter = filter_seconds(views_per_rank * band * u, u)
        f32_bytes = views_per_rank * band * u * 4
        f16_bytes = f32_bytes / 2
        coded = f16_bytes > HOST_STORE_LIMIT
        code_rate = STORE_F16_CODED_MBS if coded else STORE_F16_UNCODED_MBS
        read_rate = STORE_F16_CODED_READ_MBS if coded else STORE_F16_UNCODED_READ_MBS
        t_store = f32_bytes / (STORE_WORKERS * code_rate * 1e6)
        sub_bytes = planes * n * n * 4
        kept_views = f16_bytes if d["keep_views"] else 0
        resident = sub_bytes + kept_views <= GPU_BUDGET
        gups = d["gups"] * 1e9
        t_bp = planes * n * n * views_per_rank / gups
        out_bytes_per_plane = n * n * d["volume_bytes"] / s
        w_rate = min(FS_WRITE_NODE, FS_WRITE_TOTAL / nodes) / gpn if fs \
            else math.inf
        if s > 1:   # partial volumes summed: a reduce-scatter among s ranks
            link = NVLINK_BYTES_PER_S if s <= gpn else \
                NET_BYTES_PER_S * NET_EFFICIENCY / gpn
            t_reduce_plane = (s - 1) / s * n * n * 4 / link
        else:
            t_reduce_plane = 0.0

        if resident:
            slabs = [(p0, p1)]
            t_stream = 0.0
            t_d2h = planes * out_bytes_per_plane / D2H_BYTES_PER_S
            t_write = planes * out_bytes_per_plane / w_rate
            t_reduce = planes * t_reduce_plane
        else:
            count = math.ceil(sub_bytes / SLAB_MAX)
            step = math.ceil(planes / count / 16) * 16   # 16-plane aligned
            slabs = [(a, min(a + step, p1)) for a in range(p0, p1, step)]
            t_stream = t_d2h = t_write = t_reduce = 0.0
        row = dict(planes=planes, band=band, resident=resident, coded=coded,
                   gpu_need=sub_bytes + kept_views,
                   filter=t_filter, store=t_store if not resident else 0.0,
                   store_off_path=t_store if resident else 0.0,
                   bp=t_bp, slabs=len(slabs))
        ingest = max(t_read, t_net, t_intra, t_filter,
                     0.0 if resident else t_store)
        if resident:
            phase1 = max(ingest, ingest * RESIDENT_START_FRACTION + t_bp)
            out = t_reduce + max(t_d2h, t_write)
            total = phase1 + out
        else:
            # Slabs computed in turn from the store; a slab's rows stream in
            # while the previous slab computes, its copy back and write while
            # the next one computes (two slab buffers).
            total = ingest
            prev_out = 0.0
            for a, b in slabs:
                sb = rows_for_planes(n, v, a, b)
                px = views_per_rank * sb * u
                stream = max(px * 4 / (STORE_WORKERS * read_rate * 1e6),
                             px * 2 / H2D_BYTES_PER_S)
                bp = (b - a) * n * n * views_per_rank / gups
                total += max(bp, stream, prev_out)
                t_stream += stream
                red = (b - a) * t_reduce_plane
                d2h = (b - a) * out_bytes_per_plane / D2H_BYTES_PER_S
                wr = (b - a) * out_bytes_per_plane / w_rate
                t_reduce += red
                t_d2h += d2h
                t_write += wr
                prev_out = red + max(d2h, wr)
            total += prev_out
        row.update(stream=t_stream, d2h=t_d2h, write=t_write, reduce=t_reduce,
                   total=total)
        # Each column is its slowest rank; the total is the slowest rank's.
        for key, value in row.items():
            if key == "resident":
                worst[key] = worst.get(key, True) and value
            else:
                worst[key] = max(worst.get(key, value), value)
    worst.update(read=t_read, net=t_net, intra=t_intra, gpus=gpus,
                 widest=max(bands),
                 overlap=total_band * s / v, net_bytes=k * total_band * row_bytes,
                 input_bytes=input_bytes)
    stages = ["read", "net", "intra", "filter", "store", "bp", "stream",
              "reduce", "d2h", "write"]
    worst["bottleneck"] = max(stages, key=lambda key: worst[key])
    # Projections entering on one rank (root = R, on the first node): that
    # node sends every other node its bands of every view.
    first_node = sum(bands[rank_range[r]] for r in range(gpn)) / s
    root_egress = k * (total_band - first_node) * row_bytes
    worst["root_send"] = root_egress / (NET_BYTES_PER_S * NET_EFFICIENCY)
    return worst


NAMES = dict(read="file-system read", net="network", intra="intra-node copy",
             filter="filter", store="store", bp="backprojection",
             stream="stream-in", reduce="reduce", d2h="copy back",
             write="file-system write")


def fmt(t):
    if t == 0:
        return "–"
    return f"{t:.2f}" if t < 10 else f"{t:.1f}"


def stage_table(case):
    print(f"#### {case[0]}\n")
    print("| nodes | GPUs | read | send (network) | send (on node) | filter | "
          "store | backproject | stream-in | copy back | write | **total** | "
          "bottleneck |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for nodes in NODE_COUNTS:
        m = model(case, nodes, AS_BUILT)
        store = fmt(m["store"]) if m["store"] else f"({fmt(m['store_off_path'])})"
        print(f"| {nodes} | {m['gpus']} | {fmt(m['read'])} | {fmt(m['net'])} | "
              f"{fmt(m['intra'])} | {fmt(m['filter'])} | {store} | "
              f"{fmt(m['bp'])} | {fmt(m['stream'])} | {fmt(m['d2h'])} | "
              f"{fmt(m['write'])} | **{fmt(m['total'])}** | "
              f"{NAMES[m['bottleneck']]} |")
    print()


def band_table(case):
    _, n, k, u = case
    print(f"#### {case[0]}: the rows each rank receives\n")
    print("| nodes | planes per rank | its share of rows | widest band (rows) | "
          "rows received / detector rows | bytes delivered per scan | "
          "mode (a resident rank's GPU memory, of the budget) | "
          "send if projections enter on one rank |")
    print("|---|---|---|---|---|---|---|---|")
    for nodes in NODE_COUNTS:
        m = model(case, nodes, AS_BUILT)
        share = u // m["gpus"]
        if m["resident"]:
            mode = "resident"
        else:
            mode = f"streamed, {m['slabs']} slab" + ("s" if m["slabs"] > 1 else "")
        mode += ", store coded" if m["coded"] else ""
        mode += (f" ({m['gpu_need'] / GiB:.0f} of {GPU_BUDGET / GiB:.0f} GiB)")
        print(f"| {nodes} | {m['planes']} | {share} | {m['widest']} | "
              f"{m['overlap']:.2f} | {m['net_bytes'] / 1e12:.2f} TB | {mode} | "
              f"{fmt(m['root_send'])} s |")
    print()


VARIANTS = [
    ("as built", {}),
    ("no filtered views kept on the GPU (a resident volume backprojects "
     "from the views in flight only)", dict(keep_views=False)),
    ("float16 on the wire, each view filtered once, by the rank that read it",
     dict(keep_views=False, wire_bytes=2, filter_on_sender=True)),
    ("one y range per node, its views split among its 8 GPUs, the partial "
     "volumes summed over NVLink",
     dict(keep_views=False, wire_bytes=2, filter_on_sender=True,
          ranks_per_range=GPUS_PER_NODE)),
    ("float16 kernels at 2306 GUPS (measured with the outside of the field "
     "of view skipped)",
     dict(keep_views=False, wire_bytes=2, filter_on_sender=True,
          ranks_per_range=GPUS_PER_NODE, gups=BP_GUPS_F16_ZEROED)),
    ("a float16 volume written",
     dict(keep_views=False, wire_bytes=2, filter_on_sender=True,
          ranks_per_range=GPUS_PER_NODE, gups=BP_GUPS_F16_ZEROED,
          volume_bytes=2)),
]


def variant_table():
    cols = [(c, nodes) for c in CASES for nodes in (8, 64, 256)]
    print("| change (each row adds to the row above) | " + " | ".join(
        f"{c[0].split(' from')[0]}, {nodes} nodes" for c, nodes in cols) + " |")
    print("|---|" + "---|" * len(cols))
    for label, extra in VARIANTS:
        d = dict(AS_BUILT, **extra)
        cells = []
        for c, nodes in cols:
            m = model(c, nodes, d)
            cells.append(f"{fmt(m['total'])} s ({NAMES[m['bottleneck']]})")
        print(f"| {label} | " + " | ".join(cells) + " |")
    print()


# iFDK (Chen, Wahib, Takizawa, Takano, Matsuoka, SC'19; arXiv 1909.02724),
# abstract: 4096^3 within 30 s and 8192^3 within 2 minutes, I/O included, on
# up to 2048 V100 GPUs (ABCI). Their view count and detector size are not in
# the abstract, so the model runs our cases, not theirs.
IFDK = {4096: 30.0, 8192: 120.0}
IFDK_GPUS = 2048


def ifdk_table():
    print("| volume | iFDK, 2048 V100 | model, 2048 H200 (256 nodes) | "
          "fewest nodes under iFDK's time (model) |")
    print("|---|---|---|---|")
    for case in CASES:
        n = case[1]
        at = model(case, IFDK_GPUS // GPUS_PER_NODE, AS_BUILT)
        fewest = "none up to 256"
        for nodes in (1, 2, 4, 8, 16, 32, 64, 128, 256):
            m = model(case, nodes, AS_BUILT)
            if m["total"] < IFDK[n]:
                fewest = (f"{nodes} ({nodes * GPUS_PER_NODE} GPUs): "
                          f"{fmt(m['total'])} s")
                break
        print(f"| {case[0]} | about {IFDK[n]:.0f} s | {fmt(at['total'])} s "
              f"({NAMES[at['bottleneck']]}) | {fewest} |")
    print()


TWO_RANK_CASES = [
    ("(c) 2048³ from 1200 × 2048², float16", 2048, 1200, 2048),
    ("(d) 4096³ from 2400 × 4096², float16", 4096, 2400, 4096),
]


def two_rank_table():
    """The model's guess for section (e): two ranks of one H200 each on one
    host, host to host as fdk-bench measures (no file system)."""
    print("| case | model: two ranks, one H200 each | its bottleneck | "
          "widest band (rows of the detector's) |")
    print("|---|---|---|---|")
    for case in TWO_RANK_CASES:
        m = model(case, 1, AS_BUILT, gpn=2, fs=False)
        mode = "resident" if m["resident"] else f"streamed, {m['slabs']} slabs"
        print(f"| {case[0]} | {fmt(m['total'])} s ({mode}) | "
              f"{NAMES[m['bottleneck']]} | {m['widest']} of {case[3]} |")
    print()


def checks():
    """What the inputs say about runs that were measured."""
    raw = 2400 * 4096 * 4096 * 4
    store = raw / (STORE_WORKERS * STORE_F16_CODED_MBS * 1e6)
    print("Consistency check against a measured run: (d) in one process on two "
          "H200s stores 150 GiB of float32 views as coded float16 on 12 workers "
          f"in {store:.1f} s by these rates; the measured push (bound by the "
          "store) took 20.1–23.9 s (PERFORMANCE.md, d16@2 and d16@4).\n")


def data_table():
    near = SDD_MM / (SID_MM - RADIUS_MM)
    far = SDD_MM / (SID_MM + RADIUS_MM)
    print(f"Geometry: the cube's corners lie {RADIUS_MM:.1f} mm from the axis, "
          f"so a plane is magnified by {far:.3f} (corner far from the source) "
          f"to {near:.3f} (corner near it) over a turn; the isocentre's "
          f"magnification is {SDD_MM / SID_MM:.3f}.\n")
    print("| case | projections in (float32) | store (float16, uncoded) | "
          "volume out (float32) | backprojection work, one H200 |")
    print("|---|---|---|---|---|")
    for name, n, k, u in CASES:
        raw = k * u * u * RAW_BYTES
        print(f"| {name} | {raw / 1e12:.2f} TB | {raw / 2 / 1e12:.2f} TB | "
              f"{n ** 3 * VOLUME_BYTES / 1e12:.2f} TB | "
              f"{n ** 3 * k / (BP_GUPS * 1e9):.0f} s at {BP_GUPS:.0f} GUPS |")
    print()


def tables(text):
    """The Markdown tables of a text, each as one string."""
    found, rows = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            rows.append(line)
        elif rows:
            found.append("\n".join(rows))
            rows = []
    return found


def check(path):
    """Exit 1 when a table this script prints is not in the document as is."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        report()
    with open(path, encoding="utf-8") as f:
        doc = f.read()
    stale = [t.splitlines()[2] for t in tables(buf.getvalue()) if t not in doc]
    for row in stale:
        print(f"{path}: the table whose first row is {row} differs from the output")
    print(f"{path}: {'stale' if stale else 'matches the script'}")
    return 1 if stale else 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2]))
    if len(sys.argv) != 1:
        sys.exit("usage: scaling_model.py [--check docs/DISTRIBUTED.md]")
    report()


def report():
    print("<!-- printed by scripts/scaling_model.py -->\n")
    data_table()
    for case in CASES:
        stage_table(case)
    for case in CASES:
        band_table(case)
    print("#### What would have to change: totals in seconds (bottleneck)\n")
    variant_table()
    print("#### Against iFDK\n")
    ifdk_table()
    print("#### Two ranks on one host (the model's guess for section (e))\n")
    two_rank_table()
    checks()


if __name__ == "__main__":
    main()
