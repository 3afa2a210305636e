#!/usr/bin/env bash
# fdk-convert under mpirun (label mpi): a small simulated scan converted by
# one process and by 2 and 3 ranks with the same --slab-thickness gives the
# same files byte for byte (TIFF slices and one MetaImage), with a preview;
# a projection that only one rank reads, unreadable, ends the job with exit
# code 3 (unusable input) on every rank, in bounded time, leaving no output;
# the geometry estimate's flags are refused (exit code 2, not supported yet).
# usage: convert_mpi.sh WORKDIR FDK_SCAN_SIM FDK_CONVERT MPIEXEC [MPIEXEC_ARGS...] NUMPROC_FLAG
set -u
work=$1 sim=$2 convert=$3
shift 3
launcher=("$@")  # the launcher and its flags; the rank count follows
unset 'launcher[${#launcher[@]}-1]'
numproc=${*: -1}
fail() { echo "FAIL: $*"; exit 1; }

rm -rf "$work" && mkdir -p "$work" && cd "$work" || fail "no work folder $work"
"$sim" scan --views 36 --detector 40 --threads 1 > sim.log 2>&1 || fail "fdk-scan-sim: $(cat sim.log)"
args=(--dark scan/dark --flat scan/flat --geometry scan/scan.ini --volume-size 32,32,32 --backend cpu
      --threads 1 --read-threads 1 --slab-thickness 3 --quiet)

for format in tiff mha; do
  "$convert" scan/projections "one-$format" "${args[@]}" --format "$format" || fail "one process, $format"
  for n in 2 3; do
    out="ranks$n-$format"
    timeout 120 "${launcher[@]}" "$numproc" "$n" "$convert" scan/projections "$out" "${args[@]}" \
      --format "$format" --progress json > "$out.json" || fail "$n ranks, $format: exit code $?"
    # Rank 0 alone reports, and its plan is the ranks' (not N copies of one process's).
    [ "$(grep -c '"event":"plan"' "$out.json")" -eq 1 ] || fail "$n ranks: not one plan event: $(cat "$out.json")"
    grep -q "\"event\":\"plan\",\"ranks\":$n," "$out.json" || fail "$n ranks: the plan is not over $n ranks"
    [ "$(grep -c '"event":"done"' "$out.json")" -eq 1 ] || fail "$n ranks: not one done event"
    [ -s "$out/preview.png" ] || [ -s "$out/preview.pgm" ] || fail "$n ranks, $format: no preview"
    count=0
    for f in "one-$format"/*; do
      case $f in */preview.*) continue ;; esac
      cmp -s "$f" "$out/${f##*/}" || fail "$n ranks, $format: ${f##*/} differs from one process's"
      count=$((count + 1))
    done
    [ "$count" -ge 1 ] || fail "one process wrote no $format output"
    [ "$(ls "$out" | grep -vc '^preview\.')" -eq "$count" ] || fail "$n ranks, $format: other files than one process's"
    echo "$n ranks, $format: $count files identical to one process's"
  done
done

# View 1 is read by rank 1 only (view i on rank i mod size): point its pixel
# data past the end of the file, so its header passes the folder scan every
# rank makes and only the reading fails.
cp -r scan bad
f=bad/projections/proj_0001.tif
ifd=$(od -An -tu4 -j4 -N4 "$f" | tr -d ' ')
entries=$(od -An -tu2 -j"$ifd" -N2 "$f" | tr -d ' ')
for ((e = 0; e < entries; e++)); do
  at=$((ifd + 2 + 12 * e))
  if [ "$(od -An -tu2 -j$at -N2 "$f" | tr -d ' ')" = 273 ]; then  # StripOffsets
    printf '\377\377\377\177' | dd of="$f" bs=1 seek=$((at + 8)) conv=notrunc status=none
  fi
done
"$convert" bad/projections one-bad "${args[@]/scan\//bad/}" > one-bad.log 2>&1
[ $? -eq 3 ] || fail "one process did not refuse the damaged view with exit code 3: $(cat one-bad.log)"
for n in 2 3; do
  start=$SECONDS
  timeout 60 "${launcher[@]}" "$numproc" "$n" "$convert" bad/projections "bad$n" "${args[@]/scan\//bad/}" \
    > "bad$n.log" 2>&1
  code=$?
  [ "$code" -eq 3 ] || fail "$n ranks, damaged view 1: exit code $code, not 3: $(cat "bad$n.log")"
  grep -q "rank 1: .*proj_0001" "bad$n.log" || fail "$n ranks: the failure does not name rank 1: $(cat "bad$n.log")"
  [ -z "$(ls "bad$n" 2>/dev/null | grep -v '^\.')" ] || fail "$n ranks, damaged view: files left: $(ls "bad$n")"
  echo "$n ranks, damaged view 1: exit code 3 after $((SECONDS - start)) s, nothing left behind"
done

# The geometry estimate needs every view in one process: under 2 ranks its
# flags are refused with exit code 2 before any work, naming the reason.
for flags in "est --estimate-geometry" "apply --apply-estimate"; do
  set -- $flags
  timeout 60 "${launcher[@]}" "$numproc" 2 "$convert" scan/projections "$1" "${args[@]}" "$2" > "$1.log" 2>&1
  code=$?
  [ "$code" -eq 2 ] || fail "2 ranks, $2: exit code $code, not 2: $(cat "$1.log")"
  grep -q "not supported yet with several ranks" "$1.log" || fail "2 ranks, $2: no reason: $(cat "$1.log")"
  [ -z "$(ls "$1" 2>/dev/null)" ] || fail "2 ranks, $2: files left: $(ls "$1")"
  echo "2 ranks, $2: refused with exit code 2"
done
echo "PASS"
