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

}  // namespace fdk::cuda
