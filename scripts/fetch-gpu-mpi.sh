#!/usr/bin/env bash
# Unpacks Debian 12's OpenMPI 4.1.4 (runtime, mpirun, compiler wrappers,
# C/C++ headers) and the shared libraries it needs beyond a bare Ubuntu 24.04
# into gpu-prebuilt/mpi/ (ignored by git), for a GPU machine without MPI that
# cannot reach a package registry. (The machines lent in November 2026 turned
# out to have Ubuntu's OpenMPI 4.1.6 installed: mpi-env.sh uses it when no
# tree was carried; see there.) Run here (apt-get download needs no root);
# carry "gpu-prebuilt" with the device call, then there:
#   source scripts/mpi-env.sh && bash scripts/mpi-selfcheck.sh
#   usage: scripts/fetch-gpu-mpi.sh
# scripts/gpu-prebuild.sh starts with rm -rf gpu-prebuilt: run this after it.
#
# Layout: the packages are unpacked as they are (gpu-prebuilt/mpi/usr/...),
# because Debian configured OpenMPI with prefix /usr and every directory
# except sysconfdir below it (libdir ${prefix}/lib/x86_64-linux-gnu/openmpi/lib,
# pkglibdir .../openmpi3, pkgdatadir ${prefix}/share/openmpi): OPAL_PREFIX=
# gpu-prebuilt/mpi/usr then relocates mpirun, the MCA plugins, the help texts
# and the mpicc wrapper's -I/-L alike. PMIx (libpmix2, its own prefix
# /usr/lib/x86_64-linux-gnu/pmix2) follows PMIX_PREFIX; mpi-env.sh sets both.
#
# Pruned, since the ranks run on one host over shared memory (vader) and TCP:
# the MCA components for InfiniBand/UCX/libfabric/PSM/PSM2/netlink, OpenSHMEM,
# Fortran, Java and the monitoring/tracing layers, man pages and docs, and the
# internal development headers (only mpi.h, mpi-ext.h and the C++ binding
# headers that mpi.h pulls in under C++ stay). MPI-IO (ompio, romio) stays.
# A component is removed when a library it needs is neither in the tree nor in
# what Ubuntu 24.04's base surely has (glibc, libstdc++, libgcc_s, zlib,
# zstd); the script fails if anything kept still lacks a library.
# Shipped libraries: libpmix2, libhwloc15 (without its plugins: PCI and GL
# discovery only), libevent 2.1 core/pthreads, libmunge2 (PMIx links it) and
# libudev1 (libhwloc links it). Debian 12 builds against glibc 2.36, so they
# load under Ubuntu 24.04's glibc 2.39.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
debs=.deps/mpi-debs
root=gpu-prebuilt/mpi
mkdir -p "$debs"
rm -f "$debs"/*.deb
(cd "$debs" && apt-get download openmpi-bin libopenmpi3 openmpi-common libopenmpi-dev \
  libpmix2 libhwloc15 libevent-core-2.1-7 libevent-pthreads-2.1-7 libmunge2 libudev1) 2>&1 |
  { grep -v 'Download is performed unsandboxed' || true; }
rm -rf "$root" && mkdir -p "$root"
for f in "$debs"/*.deb; do dpkg -x "$f" "$root"; done

u=$root/usr
lib=$u/lib/x86_64-linux-gnu
omp=$lib/openmpi
rm -rf "$u/share/man" "$u/share/doc" "$u/share/lintian" "$u/share/java" "$lib/fortran" \
  "$lib/pkgconfig" "$omp/lib/pkgconfig" "$lib/pmix2/share/pmix/pmix-valgrind.supp" \
  "$u/share/openmpi/openmpi-valgrind.supp" "$root/etc/openmpi/openmpi-totalview.tcl"
# Debian's PMIx names its plugin directory here as an absolute path, which
# would not follow the tree (mpi-env.sh sets the relocated one).
sed -i '/^mca_base_component_path/d' "$lib/pmix2/share/pmix-mca-params.conf"
# Executables: mpirun (orterun), orted, ompi_info and the C/C++ wrappers.
for f in "$u"/bin/*; do
  case "${f##*/}" in
    orterun|orted|ompi_info|opal_wrapper|mpirun.openmpi|mpiexec.openmpi|mpicc.openmpi|mpicxx.openmpi|mpic++.openmpi|mpiCC.openmpi) ;;
    *) rm -f "$f" ;;
  esac
done
# The names Debian's update-alternatives would have made (postinst, not in
# the packages); relative so that the tree can move.
for n in mpirun mpiexec mpicc mpicxx mpic++; do ln -sf "$n.openmpi" "$u/bin/$n"; done
for f in "$u"/share/openmpi/*-wrapper-data.txt; do
  case "${f##*/}" in mpicc*|mpicxx*|mpic++*|mpiCC*) ;; *) rm -f "$f" ;; esac
done
rm -f "$u"/share/openmpi/help-oshmem-* "$u"/share/openmpi/help-shmem-* "$u"/share/openmpi/help-*openib* \
  "$u"/share/openmpi/help-mtl-* "$u"/share/openmpi/help-common-ofi.txt "$u"/share/openmpi/mca-btl-openib-device-params.ini
# Headers: what mpi.h and mpi-ext.h include, nothing of the internals.
inc=$omp/include
find "$inc" -mindepth 1 -maxdepth 1 ! -name mpi.h ! -name mpi-ext.h ! -name mpi_portable_platform.h ! -name openmpi -exec rm -rf {} +
find "$inc/openmpi" -mindepth 1 -maxdepth 1 ! -name ompi ! -name mpiext -exec rm -rf {} +
find "$inc/openmpi/ompi" -mindepth 1 -maxdepth 1 ! -name mpi -exec rm -rf {} +
find "$inc/openmpi/ompi/mpi" -mindepth 1 -maxdepth 1 ! -name cxx -exec rm -rf {} +
find "$inc/openmpi/mpiext" -mindepth 1 ! -name '*_c.h' -exec rm -rf {} +
# Libraries and components of the layers not used on one host.
rm -f "$lib"/libmpi_mpifh* "$lib"/libmpi_usempi* "$lib"/libmpi_java* "$lib"/liboshmem* \
  "$lib"/libompitrace* "$lib"/libmca_common_monitoring* "$lib"/libmca_common_ofi* \
  "$lib"/libmca_common_ucx* "$lib"/libmca_common_verbs* "$omp"/lib/ompi_monitoring_prof.so \
  "$omp"/lib/openmpi3/libompi_dbg_msgq.so
# Each dangling .so link left in openmpi/lib points at a removed library.
find "$omp/lib" -xtype l -delete
# Ubuntu 24.04's base (the CUDA image on top of it) surely has these.
base='^(libc|libm|libdl|librt|libpthread|libutil|ld-linux-x86-64|libstdc\+\+|libgcc_s|libz|libzstd)\.so'
needed() { readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
have() { [ -e "$lib/$1" ] || [ -e "$omp/lib/$1" ] || [ -e "$lib/pmix2/lib/$1" ] || [[ "$1" =~ $base ]]; }
elves() { find "$u" -type f \( -name '*.so*' -o -path '*/bin/*' \) -exec sh -c 'head -c4 "$1" | grep -q ELF' _ {} \; -print; }
# Remove components until every kept one finds what it needs (one pass can
# orphan another: e.g. a component of a removed common library).
while :; do
  removed=0
  for f in "$omp"/lib/openmpi3/*.so "$lib"/pmix2/lib/pmix/*.so; do
    for n in $(needed "$f"); do
      if ! have "$n"; then rm -f "$f"; removed=1; break; fi
    done
  done
  [ "$removed" = 0 ] && break
done
missing=0
for f in $(elves); do
  for n in $(needed "$f"); do
    have "$n" || { echo "fetch-gpu-mpi: $f needs $n, which is not in the tree" >&2; missing=1; }
  done
done
[ "$missing" = 0 ] || exit 1
find "$root" -type l -lname '/*' -printf 'fetch-gpu-mpi: absolute link %p -> %l\n' | grep . >&2 && exit 1
find "$root" -type d -empty -delete
echo "fetch-gpu-mpi: $(find "$omp"/lib/openmpi3 -name '*.so' | wc -l) MCA components kept"
du -sh "$root"
echo "fetch-gpu-mpi: unpacked into $root; on the GPU machine: source scripts/mpi-env.sh && bash scripts/mpi-selfcheck.sh"
