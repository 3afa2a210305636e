// What a pushed pixel may hold, checked where a view enters (fdk_push_projection,
// and libfdk_mpi's sender before any band leaves the rank).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

namespace fdk {

// The largest pixel magnitude accepted. A line integral is a few tens at
// most in any length unit; values near FLT_MAX (still finite) overflowed in
// the filter's sums and came out as a NaN volume with FDK_OK.
constexpr float kMaxPixelMagnitude = 1e20f;

inline bool acceptable(float x) { return std::abs(x) <= kMaxPixelMagnitude; }  // false for NaN and Inf too

// True when every value is acceptable: on the magnitude's bits (NaN and
// infinities compare above every finite float), integer arithmetic the
// compiler vectorises (a loop of std::isfinite it did not, and the check
// took longer than the copy).
inline bool all_acceptable(const float* p, int n) {
  uint32_t limit;
  std::memcpy(&limit, &kMaxPixelMagnitude, sizeof limit);
  uint32_t bad = 0;
  for (int i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, p + i, sizeof bits);
    bad |= static_cast<uint32_t>((bits & 0x7fffffffu) > limit);
  }
  return bad == 0;
}

// Throws fdk::Error(INVALID_ARGUMENT) naming the view, the pixel and its value.
[[noreturn]] void fail_bad_pixel(int view, float value, int column, int row);

}  // namespace fdk
