#!/usr/bin/env bash
# Installs the Debian packages fdk needs to build and test, only if one is
# missing (checked with dpkg -s first, so a ready machine costs nothing and
# needs no network). Extra package names may be given as arguments.
# Works as root without sudo, or through sudo otherwise.
set -euo pipefail

# python3-tifffile and python3-numpy: tests/adapters/check_outputs_python.py
# (fdk-convert's outputs as tifffile reads them), which skips without them.
# python3-pytest and python3-mypy (with python3-numpy): the Python binding's tests
# (bindings/python/tests); python3-matplotlib and python3-tqdm for its
# notebook tests (examples/orthogonal_slices.py, progress=tqdm), which skip
# without them.
# zlib1g-dev and libhdf5-dev: compressed MetaImage/NRRD and HDF5 projection
# stacks (both optional in the build).
# libopenmpi-dev and openmpi-bin: libfdk_mpi and its tests under mpirun
# (optional in the build).
packages=(cmake ninja-build pkg-config g++ libzstd-dev libkissfft-dev libgtest-dev libpng-dev libtiff-dev
  zlib1g-dev libhdf5-dev python3-tifffile python3-numpy python3-pytest python3-mypy python3-matplotlib python3-tqdm libopenmpi-dev openmpi-bin "$@")

missing=()
for package in "${packages[@]}"; do
  if ! dpkg -s "$package" >/dev/null 2>&1; then
    missing+=("$package")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "install-deps: missing ${missing[*]}, and not root and no sudo to install them" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -q --no-install-recommends "${missing[@]}"
