// The composition root: which backend a configuration gets.
#pragma once
#include "fdk/core/reconstruction.hpp"

namespace fdk::capi {

// CUDA when asked for, or when AUTO and this build has a usable CUDA
// backend; the CPU otherwise. Throws BACKEND_UNAVAILABLE when CUDA is asked
// for and cannot be had.
std::unique_ptr<Backend> choose_backend(const ScanModel& model, const Settings& settings);

}  // namespace fdk::capi
