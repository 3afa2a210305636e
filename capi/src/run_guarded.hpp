// The one place where C++ failures become a status code and a message, for
// every C entry point (libfdk's and libfdk_mpi's).
#pragma once
#include <fdk/fdk.h>

#include <exception>
#include <new>
#include <string>
#include <utility>

#include "fdk/core/error.hpp"

namespace fdk::capi {

// Runs `body`; maps every exception to its status and hands
// "STATUS_NAME: message" to `record`. Never throws.
template <class Body, class Record>
fdk_status run_guarded(Body&& body, Record&& record) noexcept {
  fdk_status status = FDK_OK;
  std::string message;
  try {
    body();
    return FDK_OK;
  } catch (const fdk::Error& e) {
    status = e.code();
    message = e.what();
  } catch (const std::bad_alloc&) {
    status = FDK_ERROR_OUT_OF_MEMORY;
    message = "out of host memory";
  } catch (const std::exception& e) {
    status = FDK_ERROR_INTERNAL;
    message = std::string("internal error: ") + e.what();
  } catch (...) {
    status = FDK_ERROR_INTERNAL;
    message = "internal error: unknown exception";
  }
  try {
    record(std::string(fdk::status_name(status)) + ": " + message);
  } catch (...) {
    // Out of memory while formatting the message: the status still says it.
  }
  return status;
}

}  // namespace fdk::capi
