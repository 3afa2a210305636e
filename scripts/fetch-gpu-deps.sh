#!/usr/bin/env bash
# Unpacks Debian's GoogleTest and KissFFT into .deps/root for the GPU
# machine, which has neither and cannot reach a package registry. Run here;
# then carry ".deps" with the device call.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mkdir -p .deps/debs
(cd .deps/debs && apt-get download libkissfft-dev libkissfft-float131 libgtest-dev)
rm -rf .deps/root && mkdir -p .deps/root
for f in .deps/debs/*.deb; do dpkg -x "$f" .deps/root; done
echo "unpacked into .deps/root"
