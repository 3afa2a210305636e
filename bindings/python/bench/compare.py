"""The Python binding against C: one row per case from the JSON files of
tools/fdk-bench (--json) and fdk_bench.py (--json), run back to back on the
same libfdk.so.

    python3 compare.py CASE C.json [C.json ...] -- PY.json [PY.json ...]

Several files per side (rounds that alternated C and Python) pool their
timed runs; each figure is the median of the pooled runs. Overhead of the
streaming figure = Python end to end / C end to end - 1 (the same calls,
the same span). reconstruct() is one call: it is set against C's create +
end to end + destroy, the same work, and it allocates the volume besides.
"""
from __future__ import annotations

import json
import statistics
import sys
from typing import Dict, List


def pooled(docs: List[dict], key: str) -> List[float]:
    return [v for d in docs for v in d["runs_s"][key]]


def row(case: str, c_docs: List[dict], py_docs: List[dict]) -> Dict[str, float]:
    c_e2e = pooled(c_docs, "end_to_end")
    c_whole = [a + b + c for d in c_docs for a, b, c in
               zip(d["runs_s"]["create"], d["runs_s"]["end_to_end"], d["runs_s"]["destroy"])]
    streams = [d["streaming"] for d in py_docs if "streaming" in d]
    recs = [d["reconstruct"] for d in py_docs if "reconstruct" in d]
    py_e2e = pooled(streams, "end_to_end")
    py_push = pooled(streams, "filter_store")
    py_rec = [v for r in recs for v in r["runs_s"]]
    out = {"case": case, "runs_c": len(c_e2e), "runs_py": len(py_e2e),
           "c_end_to_end": statistics.median(c_e2e),
           "c_push": statistics.median(pooled(c_docs, "filter_store")),
           "c_whole": statistics.median(c_whole),
           "py_streaming": statistics.median(py_e2e) if py_e2e else float("nan"),
           "py_push": statistics.median(py_push) if py_push else float("nan"),
           "py_reconstruct": statistics.median(py_rec) if py_rec else float("nan"),
           "volume_faults": statistics.median([r["volume_faults_s"] for r in recs])
           if recs else float("nan")}
    out["overhead_pct"] = 100.0 * (out["py_streaming"] / out["c_end_to_end"] - 1.0)
    out["reconstruct_vs_c_whole_pct"] = 100.0 * (out["py_reconstruct"] / out["c_whole"] - 1.0)
    return out


def print_row(r: Dict[str, float], header: bool) -> None:
    if header:
        print("case, C end to end, Python streaming, Python reconstruct(), overhead %"
              "  [C create+e2e+destroy; reconstruct() vs that; push C / Python; "
              "volume faults; runs C / Python]")
    print(f"{r['case']}, {r['c_end_to_end']:.4f} s, {r['py_streaming']:.4f} s, "
          f"{r['py_reconstruct']:.4f} s, {r['overhead_pct']:+.2f} %"
          f"  [{r['c_whole']:.4f} s; {r['reconstruct_vs_c_whole_pct']:+.1f} %; "
          f"{r['c_push']:.4f} / {r['py_push']:.4f} s; {r['volume_faults']:.3f} s; "
          f"{r['runs_c']} / {r['runs_py']}]")


def main(argv: List[str]) -> int:
    if len(argv) < 4 or "--" not in argv:
        print(__doc__, file=sys.stderr)
        return 2
    case, rest = argv[0], argv[1:]
    cut = rest.index("--")
    c_docs = [json.load(open(p)) for p in rest[:cut]]
    py_docs = [json.load(open(p)) for p in rest[cut + 1:]]
    print_row(row(case, c_docs, py_docs), header=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
