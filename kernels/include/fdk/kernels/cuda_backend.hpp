// The CUDA backend's entry points, as the C ABI layer sees them.
#pragma once
#include <fdk/fdk.h>

#include <memory>
#include <string>
#include <vector>

#include "fdk/core/reconstruction.hpp"

namespace fdk::cuda {

// The GPU code this binary carries and what each visible device runs of it
// (fdk_get_backend_info). `usable`: AUTO would take CUDA (a recent enough
// NVIDIA driver loads and at least one device has code); `why` says what is
// missing otherwise.
struct DeviceCode {
  int compute_capability = 0;
  fdk_gpu_code code = FDK_GPU_CODE_NONE;
  int arch = 0;
};
struct BuildAndDevices {
  std::vector<int> sass;
  int ptx = 0;
  std::vector<DeviceCode> devices;
  bool usable = false;
  std::string why;
  int driver_version = 0;   // the driver's CUDA version (13000: 13.0), 0: none loaded
  int driver_required = 0;  // the oldest the carried code loads on
};
BuildAndDevices describe_build_and_devices();

// True when the configuration's devices (or any device, for an empty list)
// exist and the backend can run on them.
bool backend_available(const Settings& settings) noexcept;

// Throws fdk::Error: BACKEND_UNAVAILABLE without a usable device.
std::unique_ptr<Backend> make_cuda_backend(const ScanModel& model, const Settings& settings);

// Page-locked host memory every device can reach by DMA (fdk_alloc_host);
// null when no device is usable or the system refuses. Freed with
// free_page_locked.
void* alloc_page_locked(size_t bytes) noexcept;
void free_page_locked(void* p) noexcept;

}  // namespace fdk::cuda
