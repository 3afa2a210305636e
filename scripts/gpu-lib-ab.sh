#!/usr/bin/env bash
# One fdk-bench against several libfdk builds, alternately, on the GPU
# machine: the way to compare a change with its baseline in one call (cards
# vary between calls). Each DIR holds a libfdk.so.0 (and the libraries it
# needs that the machine lacks), e.g. gpu-prebuilt/lib from
# scripts/gpu-prebuild.sh and a copy of an earlier one; carry both.
#   usage: scripts/gpu-lib-ab.sh CASE ROUNDS DIR... [-- FDK-BENCH OPTIONS]
#   e.g.   scripts/gpu-lib-ab.sh a 3 gpu-prebuilt-base/lib gpu-prebuilt/lib -- --threads 8
# Prints, per round and library, the medians of --repeats 8 (unless given):
# end to end (and its minimum), push, after last push, create, destroy,
# and on several GPUs (--gpus N) the slab count and each GPU's busy time
# and share.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ $# -lt 3 ]; then sed -n '2,10p' "$0"; exit 2; fi
case_name=$1 rounds=$2
shift 2
dirs=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do dirs+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
bench=${BENCH:-gpu-prebuilt/bin/fdk-bench}
repeats=(--repeats 8)
for a in "$@"; do [ "$a" = "--repeats" ] && repeats=(); done
for d in "${dirs[@]}"; do
  [ -f "$d/libfdk.so.0" ] || { echo "gpu-lib-ab: no libfdk.so.0 in $d" >&2; exit 2; }
done
for r in $(seq 1 "$rounds"); do
  for d in "${dirs[@]}"; do
    printf "%-24s round %d: " "$d" "$r"
    LD_LIBRARY_PATH="$PWD/$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$bench" --case "$case_name" --backend cuda \
      "${repeats[@]}" "$@" 2>&1 |
      awk '/^create \(plan\)/ {c = $3}
           /^filter\+store/ {p = $3}
           /^end to end +[0-9]/ && !e {e = $4; emin = $5}
           /^after last push/ {a = $4}
           /^destroy/ {d = $2}
           /^plan / {pl = sprintf(", %s slabs", $2)}
           /^gpu [0-9]+ +busy/ {g = g sprintf(" | gpu %s busy %s s %s", $2, $4, $9)}
           /failed/ {print; bad = 1}
           END {if (!bad) printf "end to end %s (min %s), push %s, after last push %s, create %s, destroy %s%s%s\n", e, emin, p, a, c, d, pl, g}'
  done
done
