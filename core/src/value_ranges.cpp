#include "fdk/core/value_ranges.hpp"

#include <cmath>
#include <cstdio>

#include "fdk/core/error.hpp"

namespace fdk {

std::string number_text(double value) {
  if (std::isnan(value)) return "NaN";  // not "-nan"
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

void require_within(double value, double lo, double hi, const std::string& what, const char* range) {
  if (!(value >= lo && value <= hi))
    fail(FDK_ERROR_INVALID_ARGUMENT, what + " is " + number_text(value) + ": it must lie within " + range);
}

void require_spacing(double value, const std::string& what) {
  require_within(value, ranges::kMinSpacing, ranges::kMaxSpacing, what, "[1e-6, 1e6]");
}

void require_coordinate(double value, const std::string& what) {
  require_within(value, -ranges::kMaxCoordinate, ranges::kMaxCoordinate, what, "[-1e9, 1e9]");
}

void require_distance(double value, const std::string& what) {
  require_within(value, ranges::kMinDistance, ranges::kMaxDistance, what, "[1e-6, 1e9]");
}

void require_angle(double degrees, const std::string& what) {
  if (!(degrees >= -ranges::kMaxAngleDeg && degrees <= ranges::kMaxAngleDeg))
    fail(FDK_ERROR_INVALID_ARGUMENT,
         what + " is " + number_text(degrees) + " degrees: it must lie within [-1e6, 1e6]");
}

void require_magnification(double sid, double sdd, const std::string& prefix) {
  require_within(sdd / sid, ranges::kMinMagnification, ranges::kMaxMagnification,
                 prefix + "SDD / SID (" + number_text(sdd) + " / " + number_text(sid) + ")", "[1e-3, 1e6]");
}

}  // namespace fdk
