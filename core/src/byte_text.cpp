#include "fdk/core/byte_text.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace fdk {

std::string byte_text(uint64_t bytes) {
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  double unit = 1024.0;
  int u = 0;
  while (u < 5 && static_cast<double>(bytes) >= unit * 1024.0) {
    unit *= 1024.0;
    ++u;
  }
  char text[48];
  std::snprintf(text, sizeof text, "%.4g", static_cast<double>(bytes) / unit);
  const bool exact = std::fabs(std::strtod(text, nullptr) * unit - static_cast<double>(bytes)) < 1.0;
  std::string out = std::string(text) + " " + kUnits[u];
  if (!exact) out += " (" + std::to_string(bytes) + " bytes)";
  return out;
}

}  // namespace fdk
