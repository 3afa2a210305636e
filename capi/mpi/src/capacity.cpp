#include "capacity.hpp"

#ifdef FDK_HAVE_CUDA
#include "fdk/kernels/cuda_backend.hpp"
#endif

namespace fdk::mpi {

MeasuredCapacity measured_capacity(const Settings& settings) {
#ifdef FDK_HAVE_CUDA
  constexpr double kPerGpu = 64;  // a GPU's share against one CPU thread's
  const auto backend = static_cast<fdk_backend>(settings.config.backend);
  if (backend == FDK_BACKEND_CUDA || (backend == FDK_BACKEND_AUTO && cuda::backend_available(settings))) {
    if (settings.config.num_devices > 0) return {kPerGpu * settings.config.num_devices};
    int usable = 0;
    for (const auto& d : cuda::describe_build_and_devices().devices)
      if (d.code != FDK_GPU_CODE_NONE) ++usable;
    return {kPerGpu * (usable > 0 ? usable : 1)};
  }
#endif
  return {static_cast<double>(settings.num_threads > 0 ? settings.num_threads : 1), settings.config.num_threads == 0};
}

}  // namespace fdk::mpi
