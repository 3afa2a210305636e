#!/usr/bin/env bash
# The long fuzzing run behind docs/RELIABILITY.md: every libFuzzer target of
# tests/fuzz for RUNS executions each (default 1,000,000), one target after
# another (one process at a time: the build machines are shared), each
# capped at CAP seconds (default 1500) in case a parser is too slow to reach
# RUNS; the summary line of each target says how many executions it reached.
#
#   scripts/fuzz-long.sh [RUNS] [CAP_SECONDS]
#
# Needs clang-14 with compiler-rt (scripts/install-deps.sh clang-14
# libclang-rt-14-dev) and libtiff-dev for the TIFF target. Builds into
# build-fuzz/ (FUZZ_BUILD_DIR), keeps the grown corpora there, and exits
# non-zero when any target crashed (reproducers in build-fuzz/artifacts-*/;
# fix, then commit the reproducer under tests/fuzz/corpus/<target>/).
set -u -o pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-1000000}
cap=${2:-1500}
echo "fuzz-long: $(date -u +%Y-%m-%dT%H:%MZ) on $(uname -n): $(nproc) cores," \
     "$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")," \
     "$("${CLANGXX:-clang++-14}" --version 2>/dev/null | head -1)"
FUZZ_RUNS=$runs exec bash "$root/tests/fuzz/run.sh" "$cap"
