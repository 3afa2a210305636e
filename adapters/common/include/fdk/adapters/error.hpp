// fdk/adapters/error.hpp — the one exception type of the adapters.
//
// Adapter code never prints, exits or aborts: every failure is an
// fdk::adapters::Error whose message names the file and the problem, and
// whose kind lets a tool choose its exit code.
#ifndef FDK_ADAPTERS_ERROR_HPP
#define FDK_ADAPTERS_ERROR_HPP

#include <stdexcept>
#include <string>

namespace fdk {
namespace adapters {

enum class ErrorKind {
  kInvalidArgument,  // a bad option or parameter value
  kInput,            // an input file missing, unreadable, corrupt or inconsistent
  kOutput,           // an output file or folder that cannot be written
  kUnsupported,      // valid input this build or format cannot handle
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

[[noreturn]] inline void fail(ErrorKind kind, const std::string& message) {
  throw Error(kind, message);
}

}  // namespace adapters
}  // namespace fdk

#endif  // FDK_ADAPTERS_ERROR_HPP
