#include "fdk/core/pixel_check.hpp"

#include <cstdio>
#include <string>

#include "fdk/core/error.hpp"

namespace fdk {

void fail_bad_pixel(int view, float value, int column, int row) {
  const std::string where = " at column " + std::to_string(column) + ", row " + std::to_string(row);
  if (!std::isfinite(value))
    fail(FDK_ERROR_INVALID_ARGUMENT, "projection " + std::to_string(view) + " has a non-finite pixel" + where);
  char text[32];
  std::snprintf(text, sizeof text, "%g", static_cast<double>(value));
  fail(FDK_ERROR_INVALID_ARGUMENT, "projection " + std::to_string(view) + " has a pixel of " + text + where +
                                       ": line integrals must lie within [-1e20, 1e20]");
}

}  // namespace fdk
