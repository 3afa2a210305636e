// Which launcher started fdk-convert (see distributed.hpp); no MPI here, so
// a plain run never loads or initialises it.
#include "distributed.hpp"

#include <cstdlib>

namespace fdk_convert {
namespace {

bool read_int(const char* name, int* out) {
  const char* v = std::getenv(name);
  if (!v || !*v) return false;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end || n < 0 || n > (1 << 24)) return false;
  *out = static_cast<int>(n);
  return true;
}

}  // namespace

Launch detect_launch() {
  Launch l;
  int size = 0, rank = 0;
  if (read_int("OMPI_COMM_WORLD_SIZE", &size) && read_int("OMPI_COMM_WORLD_RANK", &rank)) {
    l.launcher = "mpirun (OpenMPI)";
  } else if (read_int("SLURM_STEP_NUM_TASKS", &size) && read_int("SLURM_PROCID", &rank)) {
    // srun sets the step's variables; a batch script alone (sbatch) does not.
    l.launcher = "srun (Slurm)";
  } else if (read_int("PMI_SIZE", &size) && read_int("PMI_RANK", &rank)) {
    l.launcher = "mpiexec (PMI)";
  } else if (read_int("PMIX_RANK", &rank)) {
    l.launcher = "a PMIx launcher";
    size = 0;  // not in the environment: MPI tells
  } else {
    return l;
  }
  l.rank = rank;
  l.size = size;
  return l;
}

}  // namespace fdk_convert
