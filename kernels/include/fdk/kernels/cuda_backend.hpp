// The CUDA backend's entry points, as the C ABI layer sees them.
#pragma once
#include <memory>

#include "fdk/core/reconstruction.hpp"

namespace fdk::cuda {

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
