#!/usr/bin/env bash
# What the live preview costs a reconstruction (issue 43): fdk-bench per
# case with and without --preview, alternately, ROUNDS rounds of REPEATS
# timed runs each, medians of end to end (which, with the preview, includes
# reading it whole once after fdk_finish).
#   usage: [ROUNDS=2] [REPEATS=3] [BACKEND=cuda] scripts/gpu-preview-cost.sh [CASES...]  (default: b c)
#   a case "c8" is (c) within an 8 GiB GPU budget (streamed slabs).
# Uses $BENCH, else gpu-prebuilt/ when present (scripts/gpu-prebuild.sh), else build/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(b c)
if [ -n "${BENCH:-}" ]; then
  bench=$BENCH
elif [ -x gpu-prebuilt/bin/fdk-bench ]; then
  export LD_LIBRARY_PATH="$PWD/gpu-prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  bench=gpu-prebuilt/bin/fdk-bench
else
  bench=build/tools/fdk-bench/fdk-bench
fi
out=${OUT:-/tmp/fdk-preview-cost}
mkdir -p "$out"
for c in "${cases[@]}"; do
  args=(--case "$c")
  [ "$c" = c8 ] && args=(--case c --budget-gpu 8G)
  for round in $(seq 1 "${ROUNDS:-2}"); do
    for mode in plain preview; do
      extra=()
      [ "$mode" = preview ] && extra=(--preview)
      "$bench" "${args[@]}" --backend "${BACKEND:-cuda}" --repeats "${REPEATS:-3}" "${extra[@]}" \
        --json "$out/pv-$c-$mode-$round.json" >"$out/pv-$c-$mode-$round.log" 2>&1 ||
        echo "== $c $mode round $round failed: $(tail -2 "$out/pv-$c-$mode-$round.log")"
    done
  done
  python3 - "$c" "$out" <<'PY'
import glob, json, statistics, sys
case, out = sys.argv[1], sys.argv[2]
def runs(mode, key):
    v = []
    for f in sorted(glob.glob(f"{out}/pv-{case}-{mode}-*.json")):
        v += json.load(open(f))["runs_s"].get(key, [])
    return v
m = statistics.median
e2e, e2e_p = m(runs("plain", "end_to_end")), m(runs("preview", "end_to_end"))
push, push_p = m(runs("plain", "filter_store")), m(runs("preview", "filter_store"))
alp, alp_p = m(runs("plain", "after_last_push")), m(runs("preview", "after_last_push"))
read = m(runs("preview", "preview"))
print(f"case {case}: end to end {e2e:.4f} s without, {e2e_p:.4f} s with the preview "
      f"({(e2e_p - e2e) / e2e * 100:+.1f} %); push {push:.4f} / {push_p:.4f} s; "
      f"after last push {alp:.4f} / {alp_p:.4f} s; preview read after finish {read:.4f} s")
PY
  grep -h "^preview:" "$out"/pv-"$c"-preview-1.log || true
done
