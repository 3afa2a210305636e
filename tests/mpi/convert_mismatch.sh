#!/usr/bin/env bash
# fdk-convert under mpirun, ranks started with different arguments (label
# mpi): rank 0 gets one value, ranks 1 and 2 another. Every rank must stop
# at start-up with exit code 2, well within the 120 s meeting timeout, and
# rank 0 alone must say "ranks disagree on ARGUMENT" naming the argument;
# nothing may be written. Ranks that differ only in per-rank settings
# (threads, budgets, read threads, progress), or name one output folder
# from different working directories, must still succeed.
#
# usage: convert_mismatch.sh setup SCAN_DIR FDK_SCAN_SIM
#        convert_mismatch.sh CASE WORK_DIR SCAN_DIR FDK_CONVERT MPIEXEC [MPIEXEC_ARGS...] NUMPROC_FLAG
set -u
fail() { echo "FAIL: $*"; exit 1; }

if [ "$1" = setup ]; then  # the scan every case reads (a ctest fixture)
  scan=$2 sim=$3
  rm -rf "$scan" && mkdir -p "$scan" && cd "$scan" || fail "no scan folder $scan"
  "$sim" scan --views 36 --detector 40 --threads 1 > sim.log 2>&1 || fail "fdk-scan-sim: $(cat sim.log)"
  cp -r scan copy || fail "cannot copy the scan"  # the same files under another path
  # One view's angle moved by half a degree (its <Matrix>, which would no
  # longer match, dropped): a per-view geometry that differs in one view.
  sed '/<GantryAngle>20</,/<\/Matrix>/{s/<GantryAngle>20</<GantryAngle>20.5</;/Matrix>/d;/^ *[-0-9]/d}' \
    scan/geometry.xml > scan/geometry-moved.xml
  cmp -s scan/geometry.xml scan/geometry-moved.xml && fail "the moved geometry is the same"
  echo "PASS: scan ready"
  exit 0
fi

name=$1 work=$2 scan=$3 convert=$4
shift 4
launcher=("$@")  # the launcher and its flags; the rank-count flag follows
unset 'launcher[${#launcher[@]}-1]'
numproc=${*: -1}
[[ $scan = /* ]] || scan=$PWD/$scan
[[ $work = /* ]] || work=$PWD/$work
s=$scan/scan
base=(--dark "$s/dark" --flat "$s/flat" --geometry "$s/scan.ini" --volume-size 32,32,32 --backend cpu
      --threads 1 --read-threads 1 --slab-thickness 3 --quiet)
xml=(--dark "$s/dark" --flat "$s/flat" --pixel-size 0.8 --volume-size 32,32,32 --backend cpu
     --threads 1 --read-threads 1 --slab-thickness 3 --quiet)
proj0=$s/projections proj1=$s/projections
out0=$work/out out1=$work/out
dir0=$work dir1=$work
base0=("${base[@]}") base1=("${base[@]}")
a0=() a1=()
expect=disagree
# Each case: the argument the message must name, then what rank 0 and what
# ranks 1 and 2 get besides the common arguments.
case $name in
  output)            what=OUTPUT_DIR; out1=$work/other ;;
  output-cwd)        what=OUTPUT_DIR; dir0=$work/a dir1=$work/b; out0=out out1=out ;;
  format)            what=--format; a0=(--format tiff); a1=(--format mha) ;;
  prefix)            what=--prefix; a1=(--prefix img) ;;
  output-type)       what=--output-type; a0=(--output-type uint16 --window 0,0.05); a1=(--window 0,0.05) ;;
  window)            what=--window; a0=(--output-type uint16 --window 0,0.05)
                     a1=(--output-type uint16 --window 0,0.1) ;;
  compression)       what=--compression; a1=(--compression lzw) ;;
  no-preview)        what=--no-preview; a0=(--no-preview) ;;
  preview-at)        what=--preview-at; a1=(--preview-at 0,1,0) ;;
  projections)       what=PROJECTIONS; proj1=$scan/copy/projections ;;
  dark)              what=--dark; a1=(--dark "$scan/copy/dark") ;;
  min-transmission)  what=--min-transmission; a1=(--min-transmission 1e-4) ;;
  crop)              what=--crop; a1=(--crop 0,0,40,38) ;;
  bin)               what=--bin; a1=(--bin 2) ;;
  pixel-size)        what=--pixel-size; a1=(--pixel-size 0.7) ;;
  sid)               what=--sid; a1=(--sid 510) ;;
  sdd)               what=--sdd; a0=(--sdd 810) ;;
  start-angle)       what=--start-angle; a1=(--start-angle 5) ;;
  arc)               what=--arc; a1=(--direction cw) ;;
  geometry-kind)     what=--geometry; base0=("${xml[@]}" --geometry "$s/geometry.xml") ;;
  geometry-one-view) what=--geometry; base0=("${xml[@]}" --geometry "$s/geometry.xml")
                     base1=("${xml[@]}" --geometry "$s/geometry-moved.xml") ;;
  volume-size)       what=--volume-size; a1=(--volume-size 30) ;;
  voxel-size)        what=--voxel-size; a1=(--voxel-size 0.6) ;;
  volume-origin)     what=--volume-origin; a0=(--volume-origin -8,-8,-8) ;;
  slab-thickness)    what=--slab-thickness; a1=(--slab-thickness 4) ;;
  filter)            what=--filter; a1=(--filter hann) ;;
  cutoff)            what=--cutoff; a1=(--cutoff 0.8) ;;
  hann-y)            what=--hann-y; a1=(--hann-y 0.5) ;;
  padding)           what=--padding; a1=(--padding 0.25) ;;
  outside-fov)       what=--outside-fov; a1=(--outside-fov zero) ;;
  precision)         what=--precision; a1=(--precision float16) ;;
  # Per-rank settings may differ: the job runs.
  per-rank-settings) expect=ok; a0=(--threads 2 --read-threads 2 --host-memory 2G --progress none)
                     a1=(--host-memory 1G --read-threads 1 --gpu-memory 1G) ;;
  # One folder named from two working directories: relative on rank 0,
  # absolute on the others.
  same-folder-other-cwd) expect=ok; dir0=$work/a dir1=$work/b; out0=../out out1=$work/out ;;
  # Issue 39 under mpirun: a bad option on one rank alone is named by rank
  # 0; an output onto an input, or an earlier result without --force, is
  # refused on every rank; with --force the earlier result is replaced whole.
  bad-option-one-rank) expect=refused; what="rank 1: --sid"; a1=(--sid abc) ;;
  output-into-projections) expect=refused; what="would join the projections"; out0=$s/projections
                     out1=$s/projections; a0=(--force) a1=(--force) ;;
  earlier-result)    expect=refused; what="holds an earlier result"; earlier=16 ;;
  earlier-result-force) expect=replaced; earlier=40; a0=(--force) a1=(--force) ;;
  *) fail "unknown case '$name'" ;;
esac

# Both output folders exist: ranks that each write their share to their own
# folder would otherwise end with exit code 0.
rm -rf "$work" && mkdir -p "$work/a" "$work/b" "$work/rc" "$work/other" || fail "no work folder $work"
cd "$work" || fail "cannot enter $work"
if [ -n "${earlier:-}" ]; then  # an earlier result: more slices than this run writes
  mkdir -p out && for i in $(seq 0 $((earlier - 1))); do printf 'earlier' > "out/$(printf 'slice_%04d.tif' "$i")"; done
fi
# Each rank's own exit code (mpirun reports one), through a wrapper.
cat > rank.sh <<'EOF'
#!/bin/sh
"$@"
rc=$?
echo $rc > "$RC_DIR/rank${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${PMI_RANK:-x}}}"
exit $rc
EOF
chmod +x rank.sh
export RC_DIR=$work/rc
# OpenMPI ends the others when one rank exits with a nonzero code, before
# their wrappers can write theirs: let every rank end on its own.
# (mpirun itself then exits with 0: the wrappers' codes are what counts.)
export OMPI_MCA_orte_abort_on_non_zero_status=0

start=$(date +%s%N)
# Bounded well above the verdict's few seconds, well below the 120 s a rank
# waits for the others (the behaviour this replaces).
timeout 60 "${launcher[@]}" -wdir "$dir0" "$numproc" 1 "$work/rank.sh" "$convert" "$proj0" "$out0" \
  "${base0[@]}" "${a0[@]}" : -wdir "$dir1" "$numproc" 2 "$work/rank.sh" "$convert" "$proj1" "$out1" \
  "${base1[@]}" "${a1[@]}" > log 2>&1
code=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
seconds=$((ms / 1000)).$(printf %03d $((ms % 1000)))
echo "$name: mpirun exit code $code after $seconds s"
tail -n 20 log
[ "$code" -ne 124 ] || fail "$name: the job hung (killed after 60 s)"

if [ "$expect" = ok ]; then
  for r in 0 1 2; do
    [ "$(cat "rc/rank$r" 2>/dev/null)" = 0 ] || fail "$name: rank $r exit code '$(cat "rc/rank$r" 2>/dev/null)', not 0"
  done
  [ -s out/slice_0031.tif ] || fail "$name: no volume in $work/out: $(ls out 2>&1)"
  grep -q "disagree" log && fail "$name: a disagreement was reported"
  echo "PASS: $name: the ranks agreed and ran"
  exit 0
fi

if [ "$expect" = replaced ]; then
  for r in 0 1 2; do
    [ "$(cat "rc/rank$r" 2>/dev/null)" = 0 ] || fail "$name: rank $r exit code '$(cat "rc/rank$r" 2>/dev/null)', not 0"
  done
  n=$(ls out | grep -c '^slice_')
  [ "$n" = 32 ] || fail "$name: $n slices in out, not the 32 of this run: $(ls out | tail -3)"
  grep -q "earlier" out/slice_0000.tif && fail "$name: an earlier slice survived"
  ls -a out | grep -q staging && fail "$name: the staging folder was left"
  echo "PASS: $name: the earlier result replaced whole"
  exit 0
fi

for r in 0 1 2; do
  [ "$(cat "rc/rank$r" 2>/dev/null)" = 2 ] || fail "$name: rank $r exit code '$(cat "rc/rank$r" 2>/dev/null)', not 2"
done
[ "$ms" -lt 20000 ] || fail "$name: took $seconds s to stop (20 s at most)"
if [ "$expect" = refused ]; then
  grep -qF "$what" log || fail "$name: the message does not say '$what'"
  [ -z "$(find "$s/projections" -newer "$work/rank.sh" | head -1)" ] || fail "$name: the projections folder changed"
  if [ -n "${earlier:-}" ]; then
    [ "$(ls out | grep -c '^slice_')" = "$earlier" ] || fail "$name: the earlier result changed"
  fi
  echo "PASS: $name: every rank exit code 2 after $seconds s: $what"
  exit 0
fi
grep -qF "ranks disagree on $what" log || fail "$name: the message does not name $what"
[ "$(grep -c 'ranks disagree' log)" -eq 1 ] || fail "$name: not one report (rank 0 alone speaks)"
left=$(find "$work" -name '*.tif' -o -name '*.mha' -o -name 'preview.*' -o -name '.*tmp*' | head -5)
[ -z "$left" ] || fail "$name: files written: $left"
echo "PASS: $name: every rank exit code 2 after $seconds s, naming $what"
