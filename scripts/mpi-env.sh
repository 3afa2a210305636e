# shellcheck shell=bash
# Sourced (bash): points the shell at the OpenMPI that scripts/fetch-gpu-mpi.sh
# unpacked into gpu-prebuilt/mpi, for the GPU machine, which has no MPI.
#   usage: source scripts/mpi-env.sh
# Then mpirun, mpicc and mpicxx are that tree's, and CMake finds it with
#   cmake -DMPI_HOME="$OPAL_PREFIX" ...   (or -DMPI_C_COMPILER="$OPAL_PREFIX/bin/mpicc"
#   -DMPI_CXX_COMPILER="$OPAL_PREFIX/bin/mpicxx"); keep this environment for the
# configure (the wrappers print relocated paths only with OPAL_PREFIX set) and
# for running, since the binaries find libmpi through LD_LIBRARY_PATH (Debian
# builds it with RUNPATH /usr/lib/x86_64-linux-gnu/openmpi/lib, not there).
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
#     PSM are not in the tree anyway.
#   btl_vader_single_copy_mechanism none: the single copy of large messages
#     (CMA, process_vm_readv) needs ptrace rights between sibling ranks, which
#     containers (seccomp, no CAP_SYS_PTRACE) and Yama's ptrace_scope=1 deny;
#     a failing CMA aborts the job. "cma" is faster where it works:
#     mpi-selfcheck.sh measures both.
#   hwloc_base_binding_policy none: mpirun binds each rank to one core when
#     there are at most two ranks (to a socket above that), which would leave
#     a rank's filtering and backprojection threads one core.
#   oob_tcp_if_include lo: mpirun talks to its ranks over TCP; the GPU machine
#     has no network, and only loopback is needed on one host.
#   rmaps_base_oversubscribe 1: more ranks than cores mpirun counts is allowed.
#   PMIX_MCA_gds hash: PMIx's shared-memory data store (ds12/ds21) is the
#     part known to trip in containers; the hash store needs nothing.
#   OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM): the device machine may run as root.
# The vader segments live in /dev/shm; where it is missing or has under 1 GiB
# free (a container's default is 64 MiB) they go to /tmp instead.
_fdk_mpi_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/gpu-prebuilt/mpi"
if [ ! -x "$_fdk_mpi_root/usr/bin/orterun" ]; then
  echo "mpi-env: no OpenMPI in $_fdk_mpi_root (run scripts/fetch-gpu-mpi.sh here and carry gpu-prebuilt)" >&2
  unset _fdk_mpi_root
  # shellcheck disable=SC2317 # exit: when run instead of sourced
  return 1 2>/dev/null || exit 1
fi
export FDK_MPI_ROOT="$_fdk_mpi_root"
export OPAL_PREFIX="$FDK_MPI_ROOT/usr"
export OPAL_SYSCONFDIR="$FDK_MPI_ROOT/etc/openmpi"
export PMIX_PREFIX="$OPAL_PREFIX/lib/x86_64-linux-gnu/pmix2"
export PMIX_LIBDIR="$PMIX_PREFIX/lib" PMIX_PKGLIBDIR="$PMIX_PREFIX/lib/pmix"
export PMIX_DATADIR="$PMIX_PREFIX/share" PMIX_PKGDATADIR="$PMIX_PREFIX/share/pmix" PMIX_SYSCONFDIR="$PMIX_PREFIX/share"
export PMIX_MCA_mca_base_component_path="$PMIX_PKGLIBDIR"
export PATH="$OPAL_PREFIX/bin${PATH:+:$PATH}"
_fdk_mpi_libs="$OPAL_PREFIX/lib/x86_64-linux-gnu:$OPAL_PREFIX/lib/x86_64-linux-gnu/openmpi/lib:$PMIX_PREFIX/lib"
case ":${LD_LIBRARY_PATH:-}:" in
  *":$_fdk_mpi_libs:"*) ;;
  *) export LD_LIBRARY_PATH="$_fdk_mpi_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
esac
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
