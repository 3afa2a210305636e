#!/usr/bin/env bash
# What the geometry estimate costs a reconstruction (issue 41, point 4):
# fdk-bench per case with and without --estimate-geometry, alternately,
# ROUNDS rounds of REPEATS timed runs each, medians; the estimate's cost is
# (end to end + estimate with it) against end to end without it.
#   usage: [ROUNDS=2] [REPEATS=3] [BACKEND=cuda] scripts/gpu-estimate-cost.sh [CASES...]  (default: a b)
# Uses $BENCH, else gpu-prebuilt/ when present (scripts/gpu-prebuild.sh), else build/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(a b)
if [ -n "${BENCH:-}" ]; then
  bench=$BENCH
elif [ -x gpu-prebuilt/bin/fdk-bench ]; then
  export LD_LIBRARY_PATH="$PWD/gpu-prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  bench=gpu-prebuilt/bin/fdk-bench
else
  bench=build/tools/fdk-bench/fdk-bench
fi
out=${OUT:-/tmp/fdk-estimate-cost}
mkdir -p "$out"
for c in "${cases[@]}"; do
  for round in $(seq 1 "${ROUNDS:-2}"); do
    for mode in plain estimate; do
      extra=()
      [ "$mode" = estimate ] && extra=(--estimate-geometry)
      "$bench" --case "$c" --backend "${BACKEND:-cuda}" --repeats "${REPEATS:-3}" "${extra[@]}" \
        --json "$out/est-$c-$mode-$round.json" >"$out/est-$c-$mode-$round.log" 2>&1 ||
        echo "== $c $mode round $round failed: $(tail -2 "$out/est-$c-$mode-$round.log")"
    done
  done
  python3 - "$c" "$out" <<'PY'
import glob, json, statistics, sys
case, out = sys.argv[1], sys.argv[2]
def runs(mode, key):
    v = []
    for f in sorted(glob.glob(f"{out}/est-{case}-{mode}-*.json")):
        v += json.load(open(f))["runs_s"][key]
    return v
e2e, e2e_est = statistics.median(runs("plain", "end_to_end")), statistics.median(runs("estimate", "end_to_end"))
push, push_est = statistics.median(runs("plain", "filter_store")), statistics.median(runs("estimate", "filter_store"))
est = statistics.median(runs("estimate", "estimate"))
print(f"case {case}: end to end {e2e:.4f} s without, {e2e_est:.4f} s with the rows kept "
      f"(push {push:.4f} / {push_est:.4f} s); estimate {est:.4f} s; "
      f"cost {(e2e_est + est - e2e) / e2e * 100:+.1f} % of end to end")
PY
  grep -h "^geometry estimate" "$out"/est-"$c"-estimate-1.log || true
done
