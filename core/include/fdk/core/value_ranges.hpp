// The ranges the configuration's and the views' values must lie in, and the
// checks that refuse a value outside them with a message naming the field,
// the value and the range (FDK_ERROR_INVALID_ARGUMENT).
//
// Why these bounds: each is far beyond any scanner in any usual length unit
// (millimetres, micrometres or metres), and together they keep every
// intermediate of the geometry finite in double precision, and the products
// of lengths (matrix entries, squared distances in the weights) far from
// overflow: 1e300 or 1e-300 would pass a plain "finite and positive" test
// and then overflow or divide into Inf/NaN (or lose every step between
// views to rounding, for angles). fdk.h documents them field by field.
#pragma once
#include <string>

namespace fdk {
namespace ranges {

constexpr int kMaxExtent = 65536;        // voxels or pixels per axis (every index product fits in 64 bits)
constexpr double kMinSpacing = 1e-6;     // voxel and pixel spacings: [1e-6, 1e6]
constexpr double kMaxSpacing = 1e6;
constexpr double kMaxCoordinate = 1e9;   // |origins| and |offsets| <= 1e9
constexpr double kMinDistance = 1e-6;    // SID and SDD: [1e-6, 1e9]
constexpr double kMaxDistance = 1e9;
constexpr double kMinMagnification = 1e-3;  // SDD / SID: [1e-3, 1e6]
constexpr double kMaxMagnification = 1e6;
constexpr double kMaxAngleDeg = 1e6;     // |angles| <= 1e6 degrees (the step between views survives rounding)

}  // namespace ranges

// `value` within [lo, hi] (NaN never is), else fdk::Error(INVALID_ARGUMENT)
// "<what> is <value>: it must lie within <range>"; `range` is the bounds as
// the documentation writes them ("[1e-6, 1e6]").
void require_within(double value, double lo, double hi, const std::string& what, const char* range);

void require_spacing(double value, const std::string& what);     // [1e-6, 1e6]
void require_coordinate(double value, const std::string& what);  // [-1e9, 1e9]
void require_distance(double value, const std::string& what);    // [1e-6, 1e9]
void require_angle(double degrees, const std::string& what);     // [-1e6, 1e6]
// SDD / SID within [1e-3, 1e6] (both already within their own range).
void require_magnification(double sid, double sdd, const std::string& prefix);

// A double as messages write it ("1e+300", "nan", "0.5").
std::string number_text(double value);

}  // namespace fdk
