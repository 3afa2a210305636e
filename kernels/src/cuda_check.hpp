// CUDA failures become fdk::Error(FDK_ERROR_DEVICE) naming the call and the
// CUDA error; nothing here resets the device or exits.
#pragma once
#include <cuda_runtime.h>
#include <cufft.h>

#include <string>

#include "fdk/core/error.hpp"

namespace fdk::cuda {

inline void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  const fdk_status code = status == cudaErrorMemoryAllocation ? FDK_ERROR_OUT_OF_MEMORY : FDK_ERROR_DEVICE;
  fail(code, std::string(what) + ": " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
}

inline void check(cufftResult status, const char* what) {
  if (status == CUFFT_SUCCESS) return;
  fail(status == CUFFT_ALLOC_FAILED ? FDK_ERROR_OUT_OF_MEMORY : FDK_ERROR_DEVICE,
       std::string(what) + ": cuFFT error " + std::to_string(static_cast<int>(status)));
}

// After a kernel launch: launch-configuration errors surface here.
inline void check_launch(const char* kernel) { check(cudaGetLastError(), kernel); }

}  // namespace fdk::cuda
