#!/usr/bin/env bash
# fdk_ct installed from source, as a user would, and tested as installed:
#
#   1. a fresh venv (Debian's python3, no system site packages), then
#      `pip install ./bindings/python`: scikit-build-core builds libfdk.so
#      with CMake (CPU backend; the CUDA backend when nvcc is found or a
#      fatbin is given) into fdk_ct/_lib/;
#   2. the installed package loads its own libfdk (not the source tree's,
#      not the system's), has the CUDA backend when one was asked for, and
#      reconstructs the modified Shepp-Logan head (brain 0.004 within 10 %),
#      run with `python -I` from an empty folder;
#   3. pytest, tqdm and matplotlib from PyPI, then bindings/python/tests
#      against the installed package (FDK_TEST_INSTALLED=1, from a folder
#      where src/ is not importable, FDK_CT_LIBRARY unset);
#   4. the sdist: `python -m build --sdist` of bindings/python, installed into
#      a second fresh venv (it must carry the library's sources), the same
#      smoke test there. FDK_PY_SDIST=0 skips it.
#
#   python-source-install.sh [FATBIN]
#
# FATBIN (else $FDK_CUDA_FATBIN, else build-pkg/kernels/fdk_kernels.fatbin or
# build/kernels/fdk_kernels.fatbin when present): the GPU code an earlier
# build made, with its manifest FATBIN.cmake, passed through CMAKE_ARGS
# (-DFDK_CUDA_FATBIN) so that nvcc does not compile it again. Without one,
# a machine with nvcc compiles it inside pip (minutes). Needs python3-venv
# and PyPI (scikit-build-core, numpy, pytest, tqdm, matplotlib, build).
# FDK_JOBS: parallel compile jobs (default nproc). Prints the time of each
# install; the exit status is non-zero on any failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$(pwd)"
die() { echo "python-source-install.sh: FAILED: $*" >&2; exit 1; }
python="${PYTHON:-/usr/bin/python3}"
export CMAKE_BUILD_PARALLEL_LEVEL="${FDK_JOBS:-$(nproc)}"
unset PYTHONPATH FDK_CT_LIBRARY

fatbin="${1:-${FDK_CUDA_FATBIN:-}}"
if [ -z "$fatbin" ]; then
  for candidate in build-pkg/kernels/fdk_kernels.fatbin build/kernels/fdk_kernels.fatbin; do
    if [ -f "$candidate" ] && [ -f "$candidate.cmake" ]; then fatbin="$candidate"; break; fi
  done
fi
cmake_args=""
expect_cuda=0
if [ -n "$fatbin" ]; then
  fatbin="$(realpath "$fatbin")"
  [ -f "$fatbin.cmake" ] || die "no manifest $fatbin.cmake beside the fatbin"
  cmake_args="-DFDK_WITH_CUDA=ON -DFDK_CUDA_FATBIN=$fatbin"
  expect_cuda=1
  echo "python-source-install.sh: reusing the GPU code of $fatbin"
elif command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="$PATH:/usr/local/cuda/bin"
  expect_cuda=1
  echo "python-source-install.sh: no fatbin to reuse: nvcc compiles the GPU code"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/run"

# install VENV SOURCE: a fresh venv with SOURCE pip-installed; prints the time.
install() {
  local start=$SECONDS
  "$python" -m venv "$1"
  CMAKE_ARGS="$cmake_args" "$1/bin/python" -m pip install --quiet --disable-pip-version-check "$2" ||
    die "pip install $2"
  echo "python-source-install.sh: pip install $2: $((SECONDS - start)) s (venv included)"
}

# smoke VENV: the installed package, on its own libfdk, reconstructs the head.
smoke() {
  (cd "$work/run" && FDK_EXPECT_CUDA=$expect_cuda "$1/bin/python" -I -c '
import os, sys
import fdk_ct
from fdk_ct import phantom
here = os.path.dirname(os.path.abspath(fdk_ct.__file__))
assert here.startswith(sys.prefix), f"fdk_ct from {here}, not the venv {sys.prefix}"
lib = fdk_ct.library_path()
assert lib == os.path.join(here, "_lib", "libfdk.so"), f"libfdk from {lib}"
assert fdk_ct.library_version() == fdk_ct.__version__
info = fdk_ct.backend_info()
built = info["cuda_built"]
assert built == (os.environ["FDK_EXPECT_CUDA"] == "1"), info
geo = fdk_ct.Geometry.circular(180, sid=500.0, sdd=750.0, detector_spacing=1.2,
                               detector_shape=(96, 128))
head = phantom.modified_shepp_logan(60.0, mu=0.02)
grid = fdk_ct.Volume((64, 64, 64), 1.5)
vol = fdk_ct.reconstruct(phantom.project(geo, head), geo, grid)
truth = phantom.voxelize(head, grid)
brain = float(vol[(truth > 0.003) & (truth < 0.005)].mean())  # the truth: 0.004
assert abs(brain - 0.004) < 0.0004, brain
print(f"smoke: fdk_ct {fdk_ct.__version__} from {lib}, cuda_built={built}, "
      f"{vol!r}, brain {brain:.5f}")
') || die "the package installed in $1 failed its smoke test"
}

install "$work/venv" "$root/bindings/python"
smoke "$work/venv"

"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check pytest tqdm matplotlib ||
  die "pip install pytest tqdm matplotlib"
(cd "$work/run" && FDK_TEST_INSTALLED=1 "$work/venv/bin/python" -m pytest -q -p no:cacheprovider \
   "$root/bindings/python/tests") || die "the tests against the installed package"

if [ "${FDK_PY_SDIST:-1}" != 0 ]; then
  "$python" -m venv "$work/build-venv"
  "$work/build-venv/bin/python" -m pip install --quiet --disable-pip-version-check build ||
    die "pip install build"
  "$work/build-venv/bin/python" -m build --sdist --outdir "$work/sdist" "$root/bindings/python" \
    >"$work/sdist.log" 2>&1 || { cat "$work/sdist.log"; die "python -m build --sdist"; }
  sdist="$(echo "$work/sdist"/fdk_ct-*.tar.gz)"
  [ -f "$sdist" ] || die "no sdist written"
  # (Listed before grep: `tar | grep -q` can fail under pipefail when grep stops early.)
  listing="$(tar tzf "$sdist")"
  grep -q '/libfdk/capi/include/fdk/fdk.h$' <<<"$listing" || die "$sdist lacks the library's sources"
  install "$work/sdist-venv" "$sdist"
  smoke "$work/sdist-venv"
fi
echo "python-source-install.sh: passed"
