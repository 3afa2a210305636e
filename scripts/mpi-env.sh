# shellcheck shell=bash
# Sourced (bash): chooses the OpenMPI that fdk's MPI ranks use on the GPU
# machine and sets the runtime settings for ranks on one host.
#   usage: [FDK_MPI=tree|system] source scripts/mpi-env.sh
# tree (the default when gpu-prebuilt/mpi is there): Debian 12's OpenMPI 4.1.4
#   that scripts/fetch-gpu-mpi.sh unpacked and the device call carried.
#   mpirun, mpicc and mpicxx are then that tree's, and CMake finds it with
#   cmake -DMPI_HOME="$OPAL_PREFIX" ...   (or -DMPI_C_COMPILER="$OPAL_PREFIX/bin/mpicc"
#   -DMPI_CXX_COMPILER="$OPAL_PREFIX/bin/mpicxx"); keep this environment for the
#   configure (the wrappers print relocated paths only with OPAL_PREFIX set) and
#   for running, since the binaries find libmpi through LD_LIBRARY_PATH (Debian
#   builds it with RUNPATH /usr/lib/x86_64-linux-gnu/openmpi/lib, not there).
# system (the default without gpu-prebuilt/mpi): the mpirun on PATH, as
#   installed. The GPU machines lent to this project's sessions in November
#   2026 (H100 and H200 kinds, Ubuntu 24.04.3) turned out to have Ubuntu's
#   OpenMPI 4.1.6 (openmpi-bin, libopenmpi-dev, PMIx 5.0.1, UCX 1.16)
#   installed, though the brief said they had no MPI; CMake 4.4 there finds it
#   with no hints. Only the runtime settings below are set. mpi-selfcheck.sh
#   passed so on an H200 (64 MiB between two ranks: 8.6 GB/s, 5.3 with CMA).
# Either way, C++ that includes mpi.h links MPI::MPI_CXX (libmpi_cxx: mpi.h
# pulls in OpenMPI's C++ bindings) or defines OMPI_SKIP_MPICXX=1 and links
# MPI::MPI_C only; with neither, the link fails (undefined MPI::Win::Free...).
# Binaries built on the development machine (Debian's 4.1.4) should run with
# the system's 4.1.6 (same libmpi.so.40; OpenMPI keeps the ABI within 4.x);
# not yet tried on the GPU machine, nor has the tree been run there.
# Source it in a fresh shell: switching FDK_MPI in one that has the tree on
# PATH finds the tree's mpirun again.
# FDK_MPI_ROOT names where the chosen MPI's libraries live (mpi-selfcheck.sh
# checks that every rank maps them from there).
#
# Relocation: Debian's OpenMPI 4.1.4 honours OPAL_PREFIX for everything but
# sysconfdir (/etc/openmpi, absolute in its configure line), which
# OPAL_SYSCONFDIR moves, so a host's own /etc/openmpi is not read either.
# PMIx (libpmix2) has its own prefix, /usr/lib/x86_64-linux-gnu/pmix2, but
# PMIX_PREFIX alone does not move its plugins (libdir and sysconfdir were
# configured absolute): without PMIX_LIBDIR/PMIX_PKGLIBDIR a host that has
# libpmix2 installed lends its pmix_mca_*.so (mpi-selfcheck.sh caught that),
# and Debian's pmix-mca-params.conf names /usr/lib/.../pmix2/lib/pmix as the
# component path (fetch-gpu-mpi.sh drops that line; the variable wins anyway).
#
# MCA settings for ranks on one host, each overridable by setting it first:
#   btl self,vader, pml ob1: shared memory only; UCX, InfiniBand, libfabric and
#     PSM are not in the tree anyway (a system MPI picks ob1 on its own on
#     the GPU machine, which has no InfiniBand device).
#   btl_vader_single_copy_mechanism none: the single copy of large messages
#     (CMA, process_vm_readv) needs ptrace rights between sibling ranks, which
#     containers (seccomp, no CAP_SYS_PTRACE) and Yama's ptrace_scope=1 deny;
#     a failing CMA aborts the job. "cma" works on the GPU machine (root) but
#     was not faster there (8.0 against 9.4 GB/s for 64 MiB messages, H100
#     kind, system MPI): mpi-selfcheck.sh measures both.
#   hwloc_base_binding_policy none: mpirun binds each rank to one core when
#     there are at most two ranks (to a socket above that; seen on the GPU
#     machine: "rank 0 bound to socket 0[core 0]"), which would leave a
#     rank's filtering and backprojection threads one core.
#   oob_tcp_if_include lo: mpirun talks to its ranks over TCP; the GPU machine
#     has no network, and only loopback is needed on one host.
#   rmaps_base_oversubscribe 1: more ranks than cores mpirun counts is allowed.
#   PMIX_MCA_gds hash: PMIx's shared-memory data store (ds12/ds21) is the
#     part known to trip in containers; the hash store needs nothing.
#   OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM): the device machine may run as root.
# The vader segments live in /dev/shm; where it is missing or has under 1 GiB
# free (a container's default is 64 MiB) they go to /tmp instead.
_fdk_mpi_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/gpu-prebuilt/mpi"
if [ -z "${FDK_MPI:-}" ]; then
  if [ -x "$_fdk_mpi_root/usr/bin/orterun" ]; then FDK_MPI=tree; else FDK_MPI=system; fi
fi
if [ "$FDK_MPI" = tree ] && [ -x "$_fdk_mpi_root/usr/bin/orterun" ]; then
  export FDK_MPI_ROOT="$_fdk_mpi_root"
  export OPAL_PREFIX="$FDK_MPI_ROOT/usr"
  export OPAL_SYSCONFDIR="$FDK_MPI_ROOT/etc/openmpi"
  export PMIX_PREFIX="$OPAL_PREFIX/lib/x86_64-linux-gnu/pmix2"
  export PMIX_LIBDIR="$PMIX_PREFIX/lib" PMIX_PKGLIBDIR="$PMIX_PREFIX/lib/pmix"
  export PMIX_DATADIR="$PMIX_PREFIX/share" PMIX_PKGDATADIR="$PMIX_PREFIX/share/pmix" PMIX_SYSCONFDIR="$PMIX_PREFIX/share"
  export PMIX_MCA_mca_base_component_path="$PMIX_PKGLIBDIR"
  case ":$PATH:" in *":$OPAL_PREFIX/bin:"*) ;; *) export PATH="$OPAL_PREFIX/bin:$PATH" ;; esac
  _fdk_mpi_libs="$OPAL_PREFIX/lib/x86_64-linux-gnu:$OPAL_PREFIX/lib/x86_64-linux-gnu/openmpi/lib:$PMIX_PREFIX/lib"
  case ":${LD_LIBRARY_PATH:-}:" in
    *":$_fdk_mpi_libs:"*) ;;
    *) export LD_LIBRARY_PATH="$_fdk_mpi_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
  esac
elif [ "$FDK_MPI" = system ] && command -v mpirun >/dev/null; then
  # A relocation variable left from the tree would misdirect the system MPI.
  unset OPAL_PREFIX OPAL_SYSCONFDIR PMIX_PREFIX PMIX_LIBDIR PMIX_PKGLIBDIR PMIX_DATADIR PMIX_PKGDATADIR \
    PMIX_SYSCONFDIR PMIX_MCA_mca_base_component_path
  FDK_MPI_ROOT="$(dirname "$(dirname "$(readlink -f "$(command -v mpirun)")")")"
  export FDK_MPI_ROOT
else
  echo "mpi-env: no OpenMPI ($FDK_MPI): neither $_fdk_mpi_root (scripts/fetch-gpu-mpi.sh here, then carry gpu-prebuilt) nor mpirun on PATH" >&2
  unset _fdk_mpi_root
  # shellcheck disable=SC2317 # exit: when run instead of sourced
  return 1 2>/dev/null || exit 1
fi
export FDK_MPI
export OMPI_MCA_btl="${OMPI_MCA_btl:-self,vader}"
export OMPI_MCA_pml="${OMPI_MCA_pml:-ob1}"
export OMPI_MCA_btl_vader_single_copy_mechanism="${OMPI_MCA_btl_vader_single_copy_mechanism:-none}"
export OMPI_MCA_hwloc_base_binding_policy="${OMPI_MCA_hwloc_base_binding_policy:-none}"
export OMPI_MCA_oob_tcp_if_include="${OMPI_MCA_oob_tcp_if_include:-lo}"
export OMPI_MCA_rmaps_base_oversubscribe="${OMPI_MCA_rmaps_base_oversubscribe:-1}"
export PMIX_MCA_gds="${PMIX_MCA_gds:-hash}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
_fdk_shm_free="$(df -Pk /dev/shm 2>/dev/null | awk 'NR==2{print $4}')"
if [ -z "${OMPI_MCA_btl_vader_backing_directory:-}" ] && [ "${_fdk_shm_free:-0}" -lt 1048576 ]; then
  export OMPI_MCA_btl_vader_backing_directory=/tmp
fi
unset _fdk_mpi_root _fdk_mpi_libs _fdk_shm_free
