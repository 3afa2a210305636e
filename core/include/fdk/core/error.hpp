// The core's one exception type. It carries a public status code so the C ABI
// layer can turn every failure into (code, message) in one place.
#pragma once
#include <fdk/fdk.h>

#include <stdexcept>
#include <string>

namespace fdk {

class Error : public std::runtime_error {
 public:
  Error(fdk_status code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  fdk_status code() const noexcept { return code_; }

 private:
  fdk_status code_;
};

// fdk_status_string's names ("FDK_ERROR_BUDGET"), for every library that
// turns an Error into a message (libfdk, libfdk_mpi).
const char* status_name(fdk_status status) noexcept;

[[noreturn]] inline void fail(fdk_status code, const std::string& message) {
  throw Error(code, message);
}

}  // namespace fdk
