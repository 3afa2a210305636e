// Integer arithmetic on sizes and offsets that cannot go wrong silently.
// Sizes come from the caller (int32 extents, uint64 budgets, size_t
// pitches): their products and sums can leave the type, and a wrapped size
// allocates too little or addresses far away. Signed overflow and a
// double outside an int's range converted to int are undefined behaviour:
// the compiler may assume they never happen. These helpers say when a
// result does not fit, or clamp before converting.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "fdk/core/error.hpp"

namespace fdk {

// True, with *out = a * b, when the product fits in T (unsigned); false,
// *out untouched, when it does not.
template <class T>
bool multiply_fits(T a, T b, T* out) {
  static_assert(std::is_unsigned<T>::value, "sizes are unsigned");
  if (a != 0 && b > std::numeric_limits<T>::max() / a) return false;
  *out = a * b;
  return true;
}

// True, with *out = a + b, when the sum fits in T (unsigned).
template <class T>
bool add_fits(T a, T b, T* out) {
  static_assert(std::is_unsigned<T>::value, "sizes are unsigned");
  if (b > std::numeric_limits<T>::max() - a) return false;
  *out = a + b;
  return true;
}

// a * b, or fdk::Error(FDK_ERROR_INVALID_ARGUMENT) saying that `what` does
// not fit in T.
template <class T>
T checked_multiply(T a, T b, const std::string& what) {
  T out;
  if (!multiply_fits(a, b, &out))
    fail(FDK_ERROR_INVALID_ARGUMENT, what + " (" + std::to_string(a) + " * " + std::to_string(b) +
                                         ") exceeds " + std::to_string(std::numeric_limits<T>::max()));
  return out;
}

// a + b, or fdk::Error(FDK_ERROR_INVALID_ARGUMENT) saying that `what` does
// not fit in T.
template <class T>
T checked_add(T a, T b, const std::string& what) {
  T out;
  if (!add_fits(a, b, &out))
    fail(FDK_ERROR_INVALID_ARGUMENT, what + " (" + std::to_string(a) + " + " + std::to_string(b) +
                                         ") exceeds " + std::to_string(std::numeric_limits<T>::max()));
  return out;
}

// True when `rows` rows of `row_bytes` bytes, `pitch` bytes apart from
// `base`, span at most PTRDIFF_MAX bytes ((rows - 1) * pitch + row_bytes,
// computed without wrapping) and end within the address space: only then
// is base + j * pitch a pointer into one object for every row j.
inline bool strided_span_fits(const void* base, size_t rows, size_t pitch, size_t row_bytes) {
  if (rows == 0) return true;
  size_t last_row = 0, span = 0;
  if (!multiply_fits<size_t>(rows - 1, pitch, &last_row) || !add_fits<size_t>(last_row, row_bytes, &span))
    return false;
  const uintptr_t start = reinterpret_cast<uintptr_t>(base);
  return span <= static_cast<size_t>(PTRDIFF_MAX) && span <= UINTPTR_MAX - start;
}

// x converted to int after clamping to [lo, hi] (NaN gives `nan_value`):
// geometry yields detector rows and plane indices as doubles that can be
// arbitrarily large (a voxel next to the source plane projects millions of
// rows away), and converting such a double to int directly is undefined
// (x86 gives INT_MIN, which turned a slab's row window empty).
inline int clamp_to_int(double x, int lo, int hi, int nan_value) {
  if (std::isnan(x)) return nan_value;
  if (x <= lo) return lo;
  if (x >= hi) return hi;
  return static_cast<int>(x);
}

}  // namespace fdk
