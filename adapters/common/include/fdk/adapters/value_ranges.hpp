// fdk/adapters/value_ranges.hpp — the library's documented value ranges
// (fdk.h: fdk_view, fdk_volume, fdk_detector), for the readers.
//
// Why here and not only in the library: a value the library refuses is
// reported by it as a bad field of a C struct ("scan.uniform: SID is
// 1e+308"), which cannot say which file, line or key the value came from.
// The readers know that, so they check the same ranges where they read the
// value and name the file and key (Error(kInput)) or the flag
// (Error(kInvalidArgument)). The numbers must stay those of fdk.h (the
// library's own copy is core/include/fdk/core/value_ranges.hpp; the
// adapters link only the public C interface, so it is not visible here).
#ifndef FDK_ADAPTERS_VALUE_RANGES_HPP
#define FDK_ADAPTERS_VALUE_RANGES_HPP

#include <cmath>

namespace fdk {
namespace adapters {
namespace ranges {

constexpr int kMaxExtent = 65536;          // voxels or pixels per axis
constexpr int kMinDetectorExtent = 2;      // detector pixels per axis
constexpr double kMinSpacing = 1e-6;       // voxel and pixel spacings (mm)
constexpr double kMaxSpacing = 1e6;
constexpr double kMaxCoordinate = 1e9;     // |origins| and |offsets| (mm)
constexpr double kMinDistance = 1e-6;      // SID and SDD (mm)
constexpr double kMaxDistance = 1e9;
constexpr double kMinMagnification = 1e-3;  // SDD / SID
constexpr double kMaxMagnification = 1e6;
constexpr double kMaxAngleDeg = 1e6;       // |angles| (degrees)

// As the documentation and the library's messages write them.
constexpr const char* kSpacingText = "[1e-6, 1e6]";
constexpr const char* kCoordinateText = "[-1e9, 1e9]";
constexpr const char* kDistanceText = "[1e-6, 1e9]";
constexpr const char* kMagnificationText = "[1e-3, 1e6]";
constexpr const char* kAngleText = "[-1e6, 1e6]";

// NaN is never within.
inline bool spacing_ok(double v) { return v >= kMinSpacing && v <= kMaxSpacing; }
inline bool coordinate_ok(double v) { return std::fabs(v) <= kMaxCoordinate; }
inline bool distance_ok(double v) { return v >= kMinDistance && v <= kMaxDistance; }
inline bool angle_ok(double v) { return std::fabs(v) <= kMaxAngleDeg; }
inline bool magnification_ok(double sid, double sdd) {
  const double m = sdd / sid;
  return m >= kMinMagnification && m <= kMaxMagnification;
}

}  // namespace ranges
}  // namespace adapters
}  // namespace fdk

#endif  // FDK_ADAPTERS_VALUE_RANGES_HPP
