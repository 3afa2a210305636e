#include "fdk/core/error.hpp"

namespace fdk {

const char* status_name(fdk_status status) noexcept {
  switch (status) {
    case FDK_OK: return "FDK_OK";
    case FDK_ERROR_INVALID_ARGUMENT: return "FDK_ERROR_INVALID_ARGUMENT";
    case FDK_ERROR_OUT_OF_RANGE: return "FDK_ERROR_OUT_OF_RANGE";
    case FDK_ERROR_INVALID_STATE: return "FDK_ERROR_INVALID_STATE";
    case FDK_ERROR_DUPLICATE: return "FDK_ERROR_DUPLICATE";
    case FDK_ERROR_BUDGET: return "FDK_ERROR_BUDGET";
    case FDK_ERROR_OUT_OF_MEMORY: return "FDK_ERROR_OUT_OF_MEMORY";
    case FDK_ERROR_BACKEND_UNAVAILABLE: return "FDK_ERROR_BACKEND_UNAVAILABLE";
    case FDK_ERROR_DEVICE: return "FDK_ERROR_DEVICE";
    case FDK_ERROR_CANCELLED: return "FDK_ERROR_CANCELLED";
    case FDK_ERROR_UNSUPPORTED: return "FDK_ERROR_UNSUPPORTED";
    case FDK_ERROR_STRUCT_SIZE: return "FDK_ERROR_STRUCT_SIZE";
    case FDK_ERROR_INTERNAL: return "FDK_ERROR_INTERNAL";
  }
  return "FDK_ERROR_UNKNOWN_STATUS";
}

}  // namespace fdk
