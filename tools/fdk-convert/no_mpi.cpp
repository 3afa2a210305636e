// join_ranks in a build without MPI (libfdk_mpi not built): several ranks
// would each reconstruct the whole volume into the same files, so they stop.
#include "distributed.hpp"

namespace fdk_convert {

std::unique_ptr<Ranks> join_ranks(const Launch& launch) {
  if (launch.size == 1 || launch.launcher.empty()) return nullptr;
  usage_error("started by " + launch.launcher +
              " as one of several ranks, but this fdk-convert was built without MPI (libfdk_mpi): "
              "run it as one process, or build with FDK_WITH_MPI");
}

}  // namespace fdk_convert
