#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (-fsanitize=fuzzer,address,undefined)
# and fuzzes each one for a while, starting from the committed corpora.
#
#   tests/fuzz/run.sh [SECONDS_PER_TARGET]        (default 20, or $FUZZ_SECONDS)
#
# Environment: CLANGXX (default clang++-14, else clang++), FUZZ_BUILD_DIR
# (default <repo>/build-fuzz), FUZZ_TARGETS (default "rtk_xml scan_ini
# bad_pixel_list tiff stack_header"), FUZZ_RUNS (stop each target after this many
# executions, SECONDS then being only a cap; scripts/fuzz-long.sh uses it).
# Targets run one after another, one process each (never in parallel).
# Needs clang with compiler-rt (Debian: clang-14 libclang-rt-14-dev) and, for
# the TIFF target, libtiff-dev (skipped with a note when its header is
# missing). New inputs go to $FUZZ_BUILD_DIR/corpus-<target>; the committed
# corpora under tests/fuzz/corpus are only read. Exits non-zero when a target
# crashes, leaks, trips a sanitizer or fails to build; the reproducer is in
# $FUZZ_BUILD_DIR/artifacts-<target>/.
set -u -o pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-${FUZZ_SECONDS:-20}}
cxx=${CLANGXX:-$(command -v clang++-14 || command -v clang++ || true)}
out=${FUZZ_BUILD_DIR:-$root/build-fuzz}
targets=${FUZZ_TARGETS:-"rtk_xml scan_ini bad_pixel_list tiff stack_header"}
runs=${FUZZ_RUNS:-}

if [ -z "$cxx" ]; then
  echo "fuzz: no clang++ found (set CLANGXX)" >&2
  exit 2
fi
mkdir -p "$out"
flags=(-std=c++17 -g -O1 -fno-omit-frame-pointer
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
       -I"$root/adapters/common/include" -I"$root/adapters/tiff/include" -I"$root/adapters/stack/include"
       -I"$root/capi/include")
common=("$root/adapters/common/src/files.cpp" "$root/adapters/common/src/geometry_io.cpp")

status=0
for t in $targets; do
  case $t in
    rtk_xml|scan_ini) sources=("$root/tests/fuzz/fuzz_$t.cpp" "${common[@]}"); libs=() ;;
    bad_pixel_list)
      sources=("$root/tests/fuzz/fuzz_$t.cpp" "$root/adapters/common/src/correction.cpp"
               "$root/adapters/common/src/files.cpp"); libs=() ;;
    tiff)
      if ! echo '#include <tiffio.h>' | "$cxx" -x c++ -fsyntax-only - 2>/dev/null; then
        echo "fuzz: tiff: skipped (no libtiff headers)"
        continue
      fi
      sources=("$root/tests/fuzz/fuzz_tiff.cpp" "$root/adapters/tiff/src/tiff_io.cpp"
               "$root/adapters/tiff/src/tiff_writer.cpp" "$root/adapters/tiff/src/libtiff_session.cpp"
               "$root/adapters/tiff/src/imagej_description.cpp" "$root/adapters/tiff/src/imagej_stack_writer.cpp"
               "$root/adapters/common/src/volume_writer.cpp" "$root/adapters/common/src/xyz_raw_writer.cpp"
               "$root/adapters/common/src/nrrd_writer.cpp" "$root/adapters/common/src/sample_type.cpp"
               "${common[@]}")
      libs=(-ltiff) ;;
    stack_header)
      sources=("$root/tests/fuzz/fuzz_$t.cpp" "$root/adapters/stack/src/stack_header.cpp"
               "$root/adapters/common/src/sample_type.cpp" "${common[@]}"); libs=() ;;
    *) echo "fuzz: unknown target '$t'" >&2; status=2; continue ;;
  esac
  bin="$out/fuzz_$t"
  echo "fuzz: building $bin"
  if ! "$cxx" "${flags[@]}" "${sources[@]}" "${libs[@]}" -o "$bin"; then
    echo "fuzz: $t: build FAILED" >&2
    status=1
    continue
  fi
  work="$out/corpus-$t"
  artifacts="$out/artifacts-$t/"
  mkdir -p "$work" "$artifacts"
  limit=(-max_total_time="$seconds")
  if [ -n "$runs" ]; then
    limit+=(-runs="$runs")
    echo "fuzz: running $t for $runs executions (at most ${seconds}s)"
  else
    echo "fuzz: running $t for ${seconds}s"
  fi
  started=$(date +%s)
  if ! "$bin" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
       -print_final_stats=1 -artifact_prefix="$artifacts" \
       "$work" "$root/tests/fuzz/corpus/$t" > "$out/fuzz_$t.log" 2>&1; then
    echo "fuzz: $t FAILED; see $out/fuzz_$t.log and $artifacts" >&2
    tail -40 "$out/fuzz_$t.log" >&2
    status=1
    result=FAILED
  else
    result=ok
  fi
  execs=$(grep -Eo "stat::number_of_executed_units: *[0-9]+" "$out/fuzz_$t.log" | grep -Eo "[0-9]+$" | tail -1)
  cov=$(grep -Eo "cov: [0-9]+ ft: [0-9]+" "$out/fuzz_$t.log" | tail -1)
  crashes=$(find "$artifacts" -type f | wc -l)
  echo "fuzz: $t $result: ${execs:-?} executions in $(( $(date +%s) - started )) s, ${cov:-cov ?}," \
       "corpus $(find "$work" -type f | wc -l) inputs, $crashes crash/leak/timeout files in $artifacts"
done
exit $status
