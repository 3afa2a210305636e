#include "backend_choice.hpp"

#include "fdk/core/cpu_backend.hpp"
#include "fdk/core/error.hpp"
#ifdef FDK_HAVE_CUDA
#include "fdk/kernels/cuda_backend.hpp"
#endif

namespace fdk::capi {

std::unique_ptr<Backend> choose_backend(const ScanModel& model, const Settings& settings) {
  const auto requested = static_cast<fdk_backend>(settings.config.backend);
  if (requested == FDK_BACKEND_CUDA) {
#ifdef FDK_HAVE_CUDA
    return cuda::make_cuda_backend(model, settings);
#else
    fail(FDK_ERROR_BACKEND_UNAVAILABLE, "this build of fdk has no CUDA backend (it was built without nvcc): use a build with the CUDA backend");
#endif
  }
#ifdef FDK_HAVE_CUDA
  if (requested == FDK_BACKEND_AUTO && cuda::backend_available(settings)) return cuda::make_cuda_backend(model, settings);
#endif
  return make_cpu_backend(model, settings.num_threads);
}

}  // namespace fdk::capi
