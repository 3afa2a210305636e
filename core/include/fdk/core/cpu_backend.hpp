// The CPU backend: weighting and ramp filter with KissFFT, and a
// multithreaded voxel-driven backprojector working slab by slab.
#pragma once
#include <memory>

#include "fdk/core/backend.hpp"

namespace fdk {

std::unique_ptr<Backend> make_cpu_backend(const ScanModel& model, int num_threads);

}  // namespace fdk
