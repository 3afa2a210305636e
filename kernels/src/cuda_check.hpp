// Driver API failures become fdk::Error(FDK_ERROR_DEVICE) naming the call
// and the CUDA error; nothing here resets the device or exits.
#pragma once
#include <string>

#include "driver/driver_api.hpp"
#include "fdk/core/error.hpp"

namespace fdk::cuda {

// "CUDA_ERROR_X (its description)" for a driver status.
inline std::string describe(CUresult status) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (const DriverApi* d = driver()) {
    d->cuGetErrorName(status, &name);
    d->cuGetErrorString(status, &text);
  }
  return std::string(name ? name : "CUDA error " + std::to_string(static_cast<int>(status))) + " (" +
         (text ? text : "no description") + ")";
}

inline void check(CUresult status, const char* what) {
  if (status == CUDA_SUCCESS) return;
  const fdk_status code = status == CUDA_ERROR_OUT_OF_MEMORY ? FDK_ERROR_OUT_OF_MEMORY : FDK_ERROR_DEVICE;
  fail(code, std::string(what) + ": " + describe(status));
}

}  // namespace fdk::cuda
