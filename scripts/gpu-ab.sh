#!/usr/bin/env bash
# One call on the GPU machine: two builds' fdk-bench on the same GPU, in
# alternating rounds (odd rounds A first, even rounds B first), so that a
# change is measured against its baseline under the same card, clocks and
# neighbours. A and B are prebuilt folders (bin/fdk-bench, lib/libfdk.so.0
# and what it needs), e.g. gpu-prebuilt-base/ (the previous commit) and
# gpu-prebuilt/ (scripts/gpu-prebuild.sh); carry both.
#   usage: AB_ROUNDS=3 scripts/gpu-ab.sh A B [CASES...]   (default cases: a b c c8)
# Prints, per case, the median over every timed run of each side (end to
# end, push, after last push, kernel) and B against A in per cent.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
a="$1" b="$2"
shift 2
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(a b c c8)
# Logs and JSON in a work folder; $OUT (when set) gets the summary and
# a tarball of the JSON (a device call brings back only a few files).
out=/tmp/fdk-ab
rm -rf "$out"
mkdir -p "$out"
rounds="${AB_ROUNDS:-3}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/gpu.txt"
run_side() {  # side dir case round
  local side="$1" dir="$2" c="$3" r="$4" extra=()
  case "$c" in
    c8) extra=(--budget-gpu 8GiB --pool 64); c=c ;;
    c) extra=(--pool 64) ;;
  esac
  LD_LIBRARY_PATH="$PWD/$dir/lib" "$dir/bin/fdk-bench" --case "$c" --backend cuda --repeats 3 \
    --commit "$(cat "$dir/COMMIT" 2>/dev/null || echo "$dir")" --json "$out/$side-$3-$r.json" \
    "${extra[@]}" >"$out/$side-$3-$r.log" 2>&1 || echo "ab: $side $3 round $r failed (exit $?)"
  echo "$side ($3) round $r: $(grep -E '^end to end +[0-9]' "$out/$side-$3-$r.log" | head -1)"
}
for c in "${cases[@]}"; do
  for r in $(seq 1 "$rounds"); do
    if [ $((r % 2)) = 1 ]; then run_side A "$a" "$c" "$r"; run_side B "$b" "$c" "$r"
    else run_side B "$b" "$c" "$r"; run_side A "$a" "$c" "$r"; fi
  done
done
python3 - "$out" "$a" "$b" "${cases[@]}" <<'PY' | tee "$out/summary.txt"
import glob, json, statistics, sys
out, a, b, cases = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
keys = [("end_to_end", "end to end"), ("filter_store", "push"), ("after_last_push", "after last push"),
        ("lib_backprojection", "kernel")]
def runs(side, case):
    vals = {k: [] for k, _ in keys}
    for f in sorted(glob.glob(f"{out}/{side}-{case}-*.json")):
        j = json.load(open(f))
        for k, _ in keys:
            vals[k] += [v for v in j["runs_s"].get(k, []) if v is not None]
    return vals
print(f"A = {a}, B = {b}: medians of every timed run (s)")
for c in cases:
    ra, rb = runs("A", c), runs("B", c)
    for k, name in keys:
        if not ra[k] or not rb[k]:
            continue
        ma, mb = statistics.median(ra[k]), statistics.median(rb[k])
        print(f"({c}) {name:16s} A {ma:8.4f}  B {mb:8.4f}  B/A {100 * (mb / ma - 1):+6.2f} %  (n {len(ra[k])}/{len(rb[k])})")
PY
if [ -n "${OUT:-}" ]; then
  cp "$out/summary.txt" "$out/gpu.txt" "$OUT/"
  tar czf "$OUT/ab-runs.tgz" -C "$out" .
fi
