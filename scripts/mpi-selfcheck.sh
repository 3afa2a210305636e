#!/usr/bin/env bash
# Checks, on the GPU machine, that the OpenMPI mpi-env.sh chose (the tree
# that scripts/fetch-gpu-mpi.sh unpacked into gpu-prebuilt/mpi, or the
# system's) compiles, links and runs two ranks, and that CMake finds it;
# prints PASS or FAIL last (exit status 0 or 1).
#   usage: [FDK_MPI=tree|system] source scripts/mpi-env.sh && bash scripts/mpi-selfcheck.sh
#   (it sources mpi-env.sh itself when FDK_MPI_ROOT is unset)
# Steps:
#   1. mpicc (relocated, for the tree) builds a C program; mpicxx builds a C++
#      one (mpi.h then pulls in the C++ bindings and links libmpi_cxx).
#   2. mpirun -n 2 --oversubscribe runs the C program: each rank prints its
#      rank, size and host; rank 0 sends 64 MiB to rank 1 (8 times, after a
#      warm-up) and both report the bandwidth. Each rank reads its own
#      /proc/self/maps and fails when libmpi, libopen-*, libpmix, libhwloc,
#      libevent, libudev, libmunge or an MCA plugin was loaded from outside
#      $FDK_MPI_ROOT (a system-wide OpenMPI would otherwise mask a broken tree).
#   3. The same with CMA single copy (OMPI_MCA_btl_vader_single_copy_mechanism
#      =cma), information only: it needs ptrace rights that containers deny.
#   4. The C++ program, run alone without mpirun (a singleton, as ctest runs
#      a test binary: MPI_Init then starts orted from the tree itself).
#   5. cmake -S <a project with find_package(MPI REQUIRED COMPONENTS C CXX)>
#      (with -DMPI_HOME="$OPAL_PREFIX" for the tree) finds this MPI (include
#      dirs and libraries inside it), builds, and its program runs under
#      mpirun -n 2.
# Work files go to ${TMPDIR:-/tmp}/fdk-mpi-selfcheck.
#
# --hide-system-mpi (for a machine that has MPI installed, as root, Debian or
# Ubuntu): reruns itself in a private mount namespace (unshare -m) where every
# file of the installed OpenMPI, PMIx, hwloc, libevent, munge, udev, UCX,
# libfabric, verbs, PSM and netlink packages reads as /dev/null, so that only
# gpu-prebuilt/mpi can serve; the development machine checks the tree so:
#   env -i PATH=/usr/bin:/bin bash scripts/mpi-selfcheck.sh --hide-system-mpi
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ "${1:-}" = --hide-system-mpi ]; then
  pkgs="$(dpkg-query -W -f='${binary:Package} ${db:Status-Status}\n' 'libopenmpi*' 'openmpi-*' 'libpmix*' 'libhwloc*' \
    'libevent*' 'libmunge*' 'libudev1*' 'libfabric*' 'libucx*' 'libibverbs*' 'librdmacm*' 'libnl-*' 'libpsm*' \
    'ibverbs-providers*' 2>/dev/null | awk '$2 == "installed" {print $1}')"
  # shellcheck disable=SC2016 # expanded by the inner bash
  exec unshare -m --propagation private bash -c '
    for p in $1; do dpkg -L "$p"; done | sort -u | while read -r f; do
      if [ -f "$f" ] && [ ! -L "$f" ]; then mount --bind /dev/null "$f" && echo; fi
    done | wc -l | sed "s/^/mpi-selfcheck: hidden files of the installed MPI packages: /"
    shift; exec bash "$@"' _ "$pkgs" "$0"
fi
if [ -z "${FDK_MPI_ROOT:-}" ]; then
  # shellcheck source=mpi-env.sh
  source "$here/mpi-env.sh" || { echo "mpi-selfcheck: FAIL (no MPI)"; exit 1; }
fi
cmake_hint=()
[ "$FDK_MPI" = tree ] && cmake_hint=(-DMPI_HOME="$OPAL_PREFIX")
work="${TMPDIR:-/tmp}/fdk-mpi-selfcheck"
rm -rf "$work" && mkdir -p "$work"
failed=()
step() { echo; echo "== $*"; }
fail() { echo "mpi-selfcheck: FAILED: $*"; failed+=("$*"); }

cat >"$work/hello.c" <<'EOF'
/* Two ranks: who and where, 64 MiB from rank 0 to rank 1, and where the
   MPI libraries were loaded from (FDK_MPI_ROOT must hold all of them). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int foreign_mpi_libraries(int rank) {
  const char *root = getenv("FDK_MPI_ROOT");
  FILE *maps = fopen("/proc/self/maps", "r");
  char line[4096];
  int foreign = 0, ours = 0;
  if (!root || !maps) return 1;
  while (fgets(line, sizeof line, maps)) {
    char *path = strchr(line, '/');
    if (!path) continue;
    path[strcspn(path, "\n")] = 0;
    if (!strstr(path, "libmpi") && !strstr(path, "libopen-") && !strstr(path, "libpmix") &&
        !strstr(path, "libhwloc") && !strstr(path, "libevent") && !strstr(path, "libudev") && !strstr(path, "libmunge") &&
        !strstr(path, "/mca_") &&
        !strstr(path, "pmix_mca_"))
      continue;
    if (strncmp(path, root, strlen(root)) == 0) {
      ours++;
    } else {
      printf("rank %d: %s is not from %s\n", rank, path, root);
      foreign++;
    }
  }
  fclose(maps);
  if (ours == 0) printf("rank %d: no MPI library mapped from %s\n", rank, root);
  return foreign > 0 || ours == 0;
}

int main(int argc, char **argv) {
  int rank, size, len, bad = 0, all_bad = 0;
  char host[MPI_MAX_PROCESSOR_NAME];
  const int bytes = 64 << 20, reps = 8;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Get_processor_name(host, &len);
  printf("rank %d of %d on %s\n", rank, size, host);
  fflush(stdout);
  if (size >= 2 && rank < 2) {
    unsigned char *buf = malloc(bytes);
    for (int i = 0; i < bytes; i++) buf[i] = rank == 0 ? (unsigned char)(i * 7) : 0;
    double t0 = 0;
    for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
      if (r == 0) { MPI_Barrier(MPI_COMM_WORLD); t0 = MPI_Wtime(); }
      if (rank == 0) MPI_Send(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
      else MPI_Recv(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double s = MPI_Wtime() - t0;
    if (rank == 1)
      for (int i = 0; i < bytes; i++)
        if (buf[i] != (unsigned char)(i * 7)) { printf("rank 1: byte %d differs\n", i); bad = 1; break; }
    printf("rank %d: %s 64 MiB x %d in %.3f s: %.2f GB/s\n", rank, rank == 0 ? "sent" : "received",
           reps, s, (double)bytes * reps / s / 1e9);
    free(buf);
  } else if (size >= 2) {
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  bad |= foreign_mpi_libraries(rank);
  MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  if (rank == 0) printf("%s\n", all_bad ? "hello: FAIL" : "hello: ok");
  MPI_Finalize();
  return all_bad;
}
EOF

cat >"$work/hello.cpp" <<'EOF'
// C++ through mpi.h (which includes the C++ bindings), run as a singleton.
#include <mpi.h>
#include <cstdio>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::printf("singleton: size %d\n", size);
  MPI_Finalize();
  return size == 1 ? 0 : 1;
}
EOF

step "environment"
for v in FDK_MPI FDK_MPI_ROOT OPAL_PREFIX OMPI_MCA_btl OMPI_MCA_pml OMPI_MCA_btl_vader_single_copy_mechanism OMPI_MCA_hwloc_base_binding_policy \
         OMPI_MCA_btl_vader_backing_directory OMPI_MCA_oob_tcp_if_include PMIX_MCA_gds; do
  echo "$v=${!v:-}"
done
for t in mpirun mpicc mpicxx gcc g++ cmake; do
  p="$(command -v "$t" || true)"
  echo "$t: ${p:-MISSING}"
done
case "$(readlink -f "$(command -v mpirun)")" in "$FDK_MPI_ROOT"/*) ;; *) fail "mpirun is not from $FDK_MPI_ROOT" ;; esac
mpirun --version 2>&1 | head -1
echo "glibc $(getconf GNU_LIBC_VERSION 2>/dev/null); $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"); $(nproc) cores; /dev/shm: $(df -Ph /dev/shm 2>/dev/null | awk 'NR==2{print $4}') free"

step "1. compile with the wrappers (mpicc, mpicxx)"
mpicc -showme 2>&1
if mpicc -O2 -o "$work/hello" "$work/hello.c"; then echo "mpicc: ok"; else fail "mpicc"; fi
if mpicxx -O2 -o "$work/hello_cxx" "$work/hello.cpp"; then echo "mpicxx: ok"; else fail "mpicxx"; fi
[ -x "$work/hello" ] && ldd "$work/hello" | grep -E 'libmpi|libopen|libpmix|libhwloc|libevent|not found'

step "2. mpirun -n 2 --oversubscribe (single copy: ${OMPI_MCA_btl_vader_single_copy_mechanism:-})"
if [ -x "$work/hello" ] && timeout 120 mpirun -n 2 --oversubscribe "$work/hello"; then :; else fail "mpirun -n 2"; fi

step "3. the same with CMA single copy (information only)"
if [ -x "$work/hello" ] && OMPI_MCA_btl_vader_single_copy_mechanism=cma timeout 120 mpirun -n 2 --oversubscribe "$work/hello" >"$work/cma.log" 2>&1; then
  grep 'GB/s' "$work/cma.log"
  echo "cma works here: OMPI_MCA_btl_vader_single_copy_mechanism=cma may be set before sourcing mpi-env.sh"
else
  tail -5 "$work/cma.log"
  echo "cma does not work here: keep the default (none)"
fi

step "4. singleton (no mpirun)"
if [ -x "$work/hello_cxx" ] && timeout 60 "$work/hello_cxx"; then :; else fail "singleton"; fi

step "5. CMake: find_package(MPI) ${cmake_hint[*]}"
mkdir -p "$work/cmake-src"
cat >"$work/cmake-src/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(mpi_find C CXX)
find_package(MPI REQUIRED COMPONENTS C CXX)
message(STATUS "MPI_C_COMPILER=${MPI_C_COMPILER}")
message(STATUS "MPI_C_INCLUDE_DIRS=${MPI_C_INCLUDE_DIRS}")
message(STATUS "MPI_C_LIBRARIES=${MPI_C_LIBRARIES}")
message(STATUS "MPI_CXX_LIBRARIES=${MPI_CXX_LIBRARIES}")
message(STATUS "MPIEXEC_EXECUTABLE=${MPIEXEC_EXECUTABLE}")
add_executable(hello_c hello.c)
target_link_libraries(hello_c PRIVATE MPI::MPI_C)
add_executable(hello_cxx hello.cpp)
target_link_libraries(hello_cxx PRIVATE MPI::MPI_CXX)
EOF
cp "$work/hello.c" "$work/hello.cpp" "$work/cmake-src/"
if cmake -S "$work/cmake-src" -B "$work/cmake-build" "${cmake_hint[@]}" >"$work/cmake.log" 2>&1; then
  grep -E 'Found MPI|MPI_C_|MPI_CXX_|MPIEXEC_' "$work/cmake.log"
  if grep -E 'MPI_(C_INCLUDE_DIRS|C_LIBRARIES|CXX_LIBRARIES|C_COMPILER)=|MPIEXEC_EXECUTABLE=' "$work/cmake.log" |
     sed 's/^[^=]*=//' | tr ';' '\n' | grep -v "^$FDK_MPI_ROOT/" | grep .; then
    fail "cmake found MPI parts outside $FDK_MPI_ROOT"
  fi
  if cmake --build "$work/cmake-build" >"$work/cmake-build.log" 2>&1 &&
     timeout 120 mpirun -n 2 --oversubscribe "$work/cmake-build/hello_c" | grep -E 'hello: ok|GB/s'; then
    echo "cmake: found, built and ran"
  else
    tail -20 "$work/cmake-build.log"; fail "cmake-built program"
  fi
else
  tail -30 "$work/cmake.log"; fail "cmake find_package(MPI)"
fi
if [ "$FDK_MPI" = tree ]; then
  echo "CMake on this machine: keep this environment and pass -DMPI_HOME=\"$OPAL_PREFIX\""
  echo "  (or -DMPI_C_COMPILER=\"$OPAL_PREFIX/bin/mpicc\" -DMPI_CXX_COMPILER=\"$OPAL_PREFIX/bin/mpicxx\")"
else
  echo "CMake on this machine: finds the system MPI without hints"
fi

echo
if [ "${#failed[@]}" -eq 0 ]; then
  echo "mpi-selfcheck: PASS"
  exit 0
fi
echo "mpi-selfcheck: FAIL (${failed[*]})"
exit 1
