// The CUDA backend. This version provides the device probe only: the
// filtering and backprojection kernels plug in here (see issue "CUDA backend
// on one GPU"), until then AUTO falls back to the CPU and an explicit CUDA
// request is refused with a clear status.
#include <cuda_runtime.h>

#include <string>

#include "fdk/core/error.hpp"
#include "fdk/kernels/cuda_backend.hpp"

namespace fdk::cuda {
namespace {

int device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error so the host's state is untouched
    return 0;
  }
  return count;
}

}  // namespace

bool backend_available(const Settings&) noexcept {
  return false;  // no kernels in this version
}

std::unique_ptr<Backend> make_cuda_backend(const ScanModel&, const Settings& settings) {
  const int count = device_count();
  if (count == 0)
    fail(FDK_ERROR_BACKEND_UNAVAILABLE, "no usable CUDA device (cudaGetDeviceCount found none)");
  for (int d = 0; d < settings.config.num_devices; ++d)
    if (settings.config.devices[d] >= count)
      fail(FDK_ERROR_BACKEND_UNAVAILABLE, "CUDA device " + std::to_string(settings.config.devices[d]) +
                                              " does not exist (" + std::to_string(count) + " found)");
  fail(FDK_ERROR_BACKEND_UNAVAILABLE,
       "the CUDA reconstruction kernels are not part of this version of fdk; use the CPU backend");
}

}  // namespace fdk::cuda
