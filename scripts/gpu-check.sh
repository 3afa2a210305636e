#!/usr/bin/env bash
# One call on the GPU machine (device tool): builds for sm_90 with TIFF off,
# runs the gpu-labelled tests, then the benchmark cases, and prints a short
# table last. Debian's gtest and KissFFT travel unpacked in .deps/root (see
# scripts/fetch-gpu-deps.sh); carry ".deps" with the call.
#   usage: [FDK_COMMIT=abc1234] scripts/gpu-check.sh [tests] [agreement] [bench] [deb] [python] [CASES...]
#          (default: tests bench a b c; python alone: cases a b)
# python: the Python binding (fdk_ct) against C on the same libfdk.so.0:
# per case, fdk-bench and bindings/python/bench/fdk_bench.py, PY_ROUNDS
# rounds (default 2; odd rounds C first, even ones Python first),
# PY_REPEATS timed runs each (default 7) after one warm-up, then one line
# "case, C end to end, Python streaming, Python reconstruct(), overhead %"
# (bindings/python/bench/compare.py, medians of the pooled runs;
# PY_BACKEND=cpu tries the step on a machine without a GPU). numpy:
# python3's own, else a wheel carried in gpu-prebuilt/wheels (pip download
# numpy --only-binary=:all: --python-version 3.12 --platform
# manylinux2014_x86_64 -d gpu-prebuilt/wheels).
# agreement: the matrix of scripts/rtk-agreement.sh on the CPU and CUDA
# backends against rtkfdk's figures measured on the development machine
# (gpu-prebuilt/agreement-reference.json, staged by gpu-prebuild.sh after
# scripts/rtk-agreement.sh; docs/ACCURACY.md says how the CUDA rows bound
# their distance to rtkfdk).
#   (the device copy may not carry .git: FDK_COMMIT names the commit measured)
# With gpu-prebuilt/ carried (scripts/gpu-prebuild.sh, run here first) it
# uses those binaries instead of building, and runs the gpu tests binary by
# binary; carry ".deps" and "gpu-prebuilt".
# CASES: a b c d, store (tools/store-bench's coders on one core), c8 (--budget-gpu 8GiB), X16 (float16), Xpaced (--rate 600),
# Xzero (--outside-fov zero: the field of view's outside not computed),
# Xpl (slabs read into page-locked memory from fdk_alloc_host); a
# plain case runs on one GPU. d100 is (d) under a 100 GiB host budget. A suffix @N (b@2, c8@4, d@4) runs it on GPUs
# 0..N-1 and, in the same invocation, on one GPU: the summary then holds the
# scaling and each GPU's busy time. d runs under a 160 GiB host budget, one
# timed run and no warm-up, 64 distinct projections pushed cyclically.
# A/B runs of a knob that only the CUDA backend's test seams turn (plane
# pairs, ramped first groups; libfdk.so has no such knob, nor reads one from
# the environment): fdk-bench-seams, built and staged next to fdk-bench, e.g.
#   gpu-prebuilt/bin/fdk-bench-seams --case b --backend cuda --plane-pairs on|off
#   gpu-prebuilt/bin/fdk-bench-seams --case c --backend cuda --gpus 4 --ramp-groups on|off
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
out="${OUT:-/tmp/fdk-gpu-out}"
mkdir -p "$out"
deps="$PWD/.deps/root/usr"
# Debian's .pc files say prefix=/usr: point them at the unpacked copy.
for pc in "$deps"/lib/x86_64-linux-gnu/pkgconfig/*.pc; do
  [ -f "$pc" ] && sed -i "s|^prefix=.*|prefix=$deps|" "$pc"
done
run_tests=0 run_bench=0 run_agreement=0 run_deb=0 run_python=0 cases=()
for arg in "$@"; do
  case "$arg" in
    tests) run_tests=1 ;;
    agreement) run_agreement=1 ;;
    bench) run_bench=1 ;;
    deb) run_deb=1 ;;
    python) run_python=1 ;;
    *) cases+=("$arg") ;;
  esac
done
if [ $run_tests -eq 0 ] && [ $run_bench -eq 0 ] && [ $run_agreement -eq 0 ] && [ $run_deb -eq 0 ] && [ $run_python -eq 0 ]; then run_tests=1 run_bench=1; fi
if [ ${#cases[@]} -eq 0 ]; then
  cases=(a b c)
  [ $run_python -eq 1 ] && [ $run_bench -eq 0 ] && cases=(a b)
fi

nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv,noheader | tee "$out/gpu.txt"
commit=${FDK_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
summary=()
if [ -x gpu-prebuilt/bin/fdk-bench ]; then
  # Built on the development machine (scripts/gpu-prebuild.sh) and carried.
  bin=gpu-prebuilt/bin
  export LD_LIBRARY_PATH="$PWD/gpu-prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  [ -n "${FDK_COMMIT:-}" ] || commit=$(cat gpu-prebuilt/COMMIT)
  echo "prebuilt $(cat gpu-prebuilt/COMMIT) (gpu-prebuilt/)"
  summary+=("binaries: prebuilt $(cat gpu-prebuilt/COMMIT)")
  libfdk="$PWD/gpu-prebuilt/lib/libfdk.so.0"
  bench=$bin/fdk-bench store_bench=$bin/store-bench cuda_tests=$bin/test_cuda_backend multi_tests=$bin/test_multi_gpu
  filter_tests=$bin/test_gpu_filter
  accuracy_tests=$bin/test_phantom_accuracy agreement_tool=$bin/fdk-agreement
else
  bin=""
  rm -f build-gpu/CMakeCache.txt
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DFDK_WITH_TIFF=OFF -DCMAKE_PREFIX_PATH="$deps" >"$out/configure.log" 2>&1 ||
    { tail -40 "$out/configure.log"; exit 1; }
  cmake --build build-gpu --parallel "$(nproc)" \
    --target fdk fdk-bench fdk-bench-seams store-bench test_cuda_backend test_multi_gpu test_gpu_filter test_phantom_accuracy fdk-agreement >"$out/build.log" 2>&1 ||
    { grep -E -A5 "error|Error" "$out/build.log" | head -80; exit 1; }
  echo "built $commit"
  bench=./build-gpu/tools/fdk-bench/fdk-bench
  libfdk="$PWD/build-gpu/capi/libfdk.so.0"
  store_bench=./build-gpu/tools/store-bench/store-bench
  cuda_tests=./build-gpu/tests/gpu/test_cuda_backend multi_tests=./build-gpu/tests/gpu/test_multi_gpu
  accuracy_tests=./build-gpu/tests/accuracy/test_phantom_accuracy
  agreement_tool=./build-gpu/tools/fdk-agreement/fdk-agreement
fi

if [ $run_tests -eq 1 ]; then
  if [ -z "$bin" ]; then
    ctest --test-dir build-gpu -L gpu --output-on-failure -j4 >"$out/ctest-gpu.log" 2>&1
    grep -E "^\[gpu\]|^\[accuracy\] (full_360|short_scan|offset_det) +brain" "$out/ctest-gpu.log" | sort -u | head -40
    grep -E "tests passed|FAILED|Failed|\(Failed\)" "$out/ctest-gpu.log" | head -20
    summary+=("gpu tests: $(grep -E 'tests passed' "$out/ctest-gpu.log")")
  else
    # No build tree to give ctest: the same tests, binary by binary.
    { "$cuda_tests"; "$multi_tests"; "$filter_tests"; FDK_TEST_BACKEND=cuda "$accuracy_tests"; } >"$out/ctest-gpu.log" 2>&1
    passed=$(grep -E '^\[  PASSED  \] [0-9]+ test' "$out/ctest-gpu.log" | awk '{s += $4} END {print s + 0}')
    skipped=$(grep -E '^\[  SKIPPED \] [0-9]+ test' "$out/ctest-gpu.log" | awk '{s += $4} END {print s + 0}')
    # gtest names a failed test twice (as it fails, then in the summary).
    failed=$(grep -oE '^\[  FAILED  \] [A-Za-z_0-9/]+\.[A-Za-z_0-9/]+' "$out/ctest-gpu.log" | sort -u | wc -l)
    grep -E '^\[  FAILED  \]' "$out/ctest-gpu.log" | head -20
    summary+=("gpu tests (gtest, binary by binary): $passed passed, $failed failed, $skipped skipped")
  fi
  # ctest hides a passing test's output: the agreement figures, from the binaries.
  "$cuda_tests" 2>&1 | grep -E "^\[gpu\]" | tee "$out/gpu-figures.txt"
  "$multi_tests" 2>&1 | grep -E "^\[gpu\]" | tee -a "$out/gpu-figures.txt"
  FDK_TEST_BACKEND=cuda "$accuracy_tests" \
    --gtest_filter='*FullScan*:*ShortScan*:*OffsetDetector*:*Missing*' 2>&1 |
    grep -E "^\[accuracy\].*(brain|dark|bright|air)" | tee -a "$out/gpu-figures.txt"
fi

if [ $run_agreement -eq 1 ]; then
  reference=gpu-prebuilt/agreement-reference.json
  if [ -f "$reference" ]; then
    python3 scripts/rtk_agreement.py --tool "$agreement_tool" --work /tmp/fdk-agreement --backends cpu,cuda \
      --reference "$reference" --reference-volumes gpu-prebuilt/agreement-rtk \
      --markdown "$out/agreement.md" >"$out/agreement.log" 2>&1
    grep -E "^\|" "$out/agreement.log"
    summary+=("agreement with rtkfdk: $(tail -1 "$out/agreement.log")")
  else
    summary+=("agreement: no $reference (run scripts/rtk-agreement.sh, then gpu-prebuild.sh, here)")
  fi
fi

if [ $run_bench -eq 1 ]; then
  for c in "${cases[@]}"; do
    extra=()
    name="$c"
    tag="$c"  # file names without '@'
    gpus=""
    case "$c" in
      *@*)
        gpus=${c##*@} c=${c%@*}
        if ! [[ $gpus =~ ^[1-9][0-9]*$ ]]; then echo "== case $name: bad GPU count '$gpus'"; continue; fi
        tag="$c-${gpus}gpus" ;;
    esac
    if [ "$c" = store ]; then
      # The store's coding on one core of this machine: 2048^2 views like
      # (c)'s, Gaussian noise as the benchmark's, and Poisson counts at two
      # typical doses (tools/store-bench).
      for data in "--noise 2e-3" "--photons 1e4" "--photons 1e5"; do
        # shellcheck disable=SC2086
        "$store_bench" --width 2048 --height 2048 --seconds 2 $data | tee -a "$out/store-bench.log"
        while IFS= read -r line; do summary+=("store ${data#--}: $line"); done < <(grep -E "^float" "$out/store-bench.log" | tail -4)
      done
      continue
    fi
    case "$c" in
      c8) c=c; extra=(--budget-gpu 8GiB) ;;      # (c) within 8 GiB of GPU memory: streamed slabs
      d100) c=d; d_budget=100GiB ;;              # (d) under 100 GiB: the store policy's harder test
      *16) c=${c%16}; extra=(--precision f16) ;;  # float16 storage
      *paced) c=${c%paced}; extra=(--rate 600) ;; # pushed like a scanner, 600 views/s
      *pl) c=${c%pl}; extra=(--page-locked) ;;     # slabs read into fdk_alloc_host memory
      *zero) c=${c%zero}; extra=(--outside-fov zero) ;;  # voxels outside the field of view left at 0
    esac
    repeats=3
    [ "$c" = c ] && extra+=(--pool 64)
    # (d): 4096^3 from 2400 views of 4096^2 under a 160 GiB host budget; one
    # timed run without warm-up (each is long), 4 GiB of distinct projections.
    [ "$c" = d ] && { extra+=(--pool 64 --budget-host "${d_budget:-160GiB}" --warmup 0); repeats=1; }
    d_budget=
    [ -n "$gpus" ] && extra+=(--gpus "$gpus")  # N > 1: the one-GPU baseline runs too
    # (d) on one GPU would not fit the same call: no baseline there.
    [ "$c" = d ] && [ -n "$gpus" ] && extra+=(--no-baseline)
    log="$out/bench-$tag.log"
    "$bench" --case "$c" --backend cuda --repeats "$repeats" --commit "$commit" \
      --json "$out/bench-$tag.json" "${extra[@]}" >"$log" 2>&1
    echo "== case $name (exit $?)"
    more=""
    { [ -n "$gpus" ] || [ "$c" = d ]; } && more="|gpu [0-9]|gpus busy|baseline +1 GPU|scaling|host peak|projections|fdk-bench:"
    grep -E "^(backend|plan|store|pushes|backprojection|end to end|after|kernel|phase|filter|finish|read|create|  $more)" "$log"
    med() { grep -E "^$1 +[0-9]" "$log" | head -1 | awk '{print $(NF-2)}'; }
    summary+=("$name: end to end $(med 'end to end') s, push $(med 'filter\+store \(push\)') s, after last push $(med 'after last push') s; $(grep -E '^kernel' "$log" | head -1)")
    if [ -n "$gpus" ] || [ "$c" = d ]; then
      while IFS= read -r line; do summary+=("$name: $line"); done < <(grep -E "^(scaling|gpu [0-9]|host peak|store)" "$log")
    fi
  done
fi

if [ $run_python -eq 1 ]; then
  pysite=""
  if ! python3 -c "import numpy" 2>/dev/null; then
    wheel=$(ls gpu-prebuilt/wheels/numpy-*.whl 2>/dev/null | head -1)
    if [ -n "$wheel" ] && python3 -m pip install -q --no-index --no-deps --target /tmp/fdk-py-site "$wheel"; then
      pysite=/tmp/fdk-py-site
    else
      summary+=("python: no numpy in python3 and no gpu-prebuilt/wheels/numpy-*.whl to install")
    fi
  fi
  if python3 -c "import numpy" 2>/dev/null || [ -n "$pysite" ]; then
    pypath="$PWD/bindings/python/src${pysite:+:$pysite}"
    echo "python $(python3 -c 'import sys; print(sys.version.split()[0])'), numpy $(PYTHONPATH="$pypath" python3 -c 'import numpy; print(numpy.__version__)'), libfdk $libfdk"
    header=1
    for c in "${cases[@]}"; do
      cjson=() pyjson=()
      for round in $(seq 1 "${PY_ROUNDS:-2}"); do
        clog="$out/py-$c-c$round" pylog="$out/py-$c-python$round"
        run_c() {
          "$bench" --case "$c" --backend "${PY_BACKEND:-cuda}" --repeats "${PY_REPEATS:-7}" --commit "$commit" \
            --json "$clog.json" >"$clog.log" 2>&1 || echo "== case $c round $round: fdk-bench failed: $(tail -3 "$clog.log")"
        }
        run_py() {
          FDK_CT_LIBRARY="$libfdk" PYTHONPATH="$pypath" PYTHONUNBUFFERED=1 python3 bindings/python/bench/fdk_bench.py \
            --case "$c" --backend "${PY_BACKEND:-cuda}" --repeats "${PY_REPEATS:-7}" --commit "$commit" \
            --json "$pylog.json" >"$pylog.log" 2>&1 || echo "== case $c round $round: fdk_bench.py failed: $(tail -3 "$pylog.log")"
        }
        # Odd rounds C first, even rounds Python first: neither side always
        # gets the GPU straight from idle.
        if [ $((round % 2)) -eq 1 ]; then run_c; run_py; else run_py; run_c; fi
        # The warm-up volumes' min, max and mean: the same data reconstructed.
        echo "== case $c round $round, warm-up volumes: C: $(grep -E '^volume check' "$clog.log" | sed 's/^volume check *warm-up run: //'); Python: $(grep -E '^volume check' "$pylog.log" | sed 's/^volume check *warm-up run: //' | paste -sd'|')"
        grep -E "^(end to end|filter\+store \(push\)|after last push|create \(plan\)|destroy) +[0-9.]+ +[0-9.]+ +[0-9.]+$|^reconstruct\(\) +median|^volume faults" "$clog.log" "$pylog.log" | sed "s|^$out/||"
        [ -f "$clog.json" ] && cjson+=("$clog.json")
        [ -f "$pylog.json" ] && pyjson+=("$pylog.json")
      done
      if [ ${#cjson[@]} -gt 0 ] && [ ${#pyjson[@]} -gt 0 ]; then
        line=$(python3 bindings/python/bench/compare.py "$c" "${cjson[@]}" -- "${pyjson[@]}")
        [ $header -eq 1 ] && summary+=("python: $(echo "$line" | head -1)")
        header=0
        summary+=("python: $(echo "$line" | tail -1)")
      fi
    done
  fi
fi

# deb: the packaged library (libfdk0's .deb from .ci/packaging.sh, staged by
# gpu-prebuild.sh in gpu-prebuilt/deb/): its fat binary listed by
# cuobjdump, then (b) and (c) run by the same fdk-bench against it and
# against the sm_90 build, alternately, so the two are compared in one call.
if [ $run_deb -eq 1 ]; then
  deb=$(ls gpu-prebuilt/deb/libfdk0_*.deb 2>/dev/null | head -1)
  if [ -z "$deb" ] || [ -z "${bench:-}" ]; then
    summary+=("deb: no gpu-prebuilt/deb/libfdk0_*.deb or no prebuilt fdk-bench (run .ci/packaging.sh, then gpu-prebuild.sh)")
  else
    debroot="$out/debroot"
    rm -rf "$debroot" && mkdir -p "$debroot" && dpkg-deb -x "$deb" "$debroot"
    packaged=$(ls "$debroot"/usr/lib/libfdk.so.*.*.* | head -1)
    cuobjdump --list-elf "$packaged" | tee "$out/deb-cuobjdump.txt"
    cuobjdump --list-ptx "$packaged" | tee -a "$out/deb-cuobjdump.txt"
    summary+=("deb $(basename "$deb"): cuobjdump --list-elf: $(grep -o 'sm_[0-9]*' "$out/deb-cuobjdump.txt" | sort -u -V | tr '\n' ' ')")
    for c in b c; do
      for lib in sm90 deb; do
        extra=()
        [ "$c" = c ] && extra+=(--pool 64)
        libpath="${LD_LIBRARY_PATH:-}"
        [ $lib = deb ] && libpath="$debroot/usr/lib:${LD_LIBRARY_PATH:-}"
        log="$out/bench-$c-$lib.log"
        LD_LIBRARY_PATH="$libpath" "$bench" --case "$c" --backend cuda --repeats 3 --commit "$commit-$lib" "${extra[@]}" >"$log" 2>&1
        echo "== case $c from the $lib library (exit $?): $(LD_LIBRARY_PATH="$libpath" ldd "$bench" | grep 'libfdk\.so')"
        grep -E "^(gpu code|end to end|kernel)" "$log"
        med() { grep -E "^$1 +[0-9]" "$log" | head -1 | awk '{print $(NF-2)}'; }
        summary+=("$c from $lib: end to end $(med 'end to end') s; $(grep -E '^kernel' "$log" | head -1); $(grep -E '^gpu code' "$log")")
      done
    done
  fi
fi

echo
echo "== summary ($commit, $(head -1 "$out/gpu.txt"))"
for line in "${summary[@]}"; do echo "$line"; done
