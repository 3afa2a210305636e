#!/usr/bin/env bash
# Builds everything with warnings as errors (CUDA backend included when nvcc
# is found) and runs the whole test suite. The output ends with ctest's
# summary line ("N% tests passed, M tests failed out of T"); the exit status
# is ctest's.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh

cuda_args=(-DFDK_WITH_CUDA=OFF)
nvcc_path="$(command -v nvcc || true)"
if [ -z "$nvcc_path" ] && [ -x /usr/local/cuda/bin/nvcc ]; then
  nvcc_path=/usr/local/cuda/bin/nvcc
fi
if [ -n "$nvcc_path" ]; then
  cuda_args=(-DFDK_WITH_CUDA=ON "-DCMAKE_CUDA_COMPILER=$nvcc_path")
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DFDK_WERROR=ON "${cuda_args[@]}"
cmake --build build --parallel "${FDK_JOBS:-$(nproc)}"

# Without a GPU the gpu-labelled tests skip; ctest hides a skipped test's
# output, so show their reason once here (they take milliseconds then).
if ! nvidia-smi -L >/dev/null 2>&1; then
  skipped=$(ctest --test-dir build -L gpu -V 2>&1 | grep -c 'skipped: no GPU' || true)
  echo "gpu-labelled tests: $skipped say \"skipped: no GPU\" (this machine has none)"
fi

# ctest prints its summary line before the timing and the list of failures;
# hold that one line back and print it last.
set +e
ctest --test-dir build --output-on-failure -j2 2>&1 |
  awk '/^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+/ { summary = $0; next }
       { print; fflush() }
       END { if (summary != "") print summary }'
status=${PIPESTATUS[0]}
set -e
exit "$status"
