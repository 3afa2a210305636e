// The projection store's float16 rounding, bit by bit: a band's values are
// divided by 2^e (e from the band's largest |value|), rounded to binary16
// below 1 and multiplied back on reading. One code for the store's coder
// (band_codec.cpp) and for the GPU that rounds a filtered view the same way
// before it leaves the device (fdk_round_store_bands), so that a slab
// backprojected from views on the GPU has the bits of one read from the
// store. Integer operations and single float multiplications and additions
// only, so the same bits on any IEEE machine. The conversions give them with
// or without flush-to-zero modes (checked exhaustively); the powers of two
// need denormals kept, as nvcc keeps them without --use_fast_math.
#pragma once

#include <cstdint>
#ifndef __CUDA_ARCH__
#include <cstring>
#endif

#ifdef __CUDACC__
#define FDK_HOST_DEVICE __host__ __device__
#else
#define FDK_HOST_DEVICE
#endif

namespace fdk::float16_bits {

// Largest half below 1: rounding up to 1.0 could overflow the float range
// when e = 128, and the clamp stays inside the documented bound.
constexpr uint32_t kHalfBelowOne = 0x3BFF;

FDK_HOST_DEVICE inline uint32_t float_bits(float x) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(x);
#else
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
#endif
}

FDK_HOST_DEVICE inline float bits_float(uint32_t b) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(b);
#else
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
#endif
}

// A select by mask: a conditional expression after a float operation turns
// into a branch (the compiler will not run both sides), which stops the
// vectoriser.
FDK_HOST_DEVICE inline uint32_t select(bool c, uint32_t yes, uint32_t no) {
  const uint32_t mask = 0u - static_cast<uint32_t>(c);
  return (yes & mask) | (no & ~mask);
}

// binary32 -> binary16 bits for |y| < 1 (all the encoder feeds it), round to
// nearest even, clamped below 1. Branch-free so the loop vectorises (after
// F. Giesen's float_to_half_fast3_rtne): under the half normal range, adding
// 0.5 gives the float's last mantissa bit the weight of the half subnormal
// unit 2^-24, so the addition rounds; above it, an integer add rounds.
FDK_HOST_DEVICE inline uint32_t half_below_one(float y) {
  const uint32_t b = float_bits(y);
  const uint32_t a = b & 0x7FFFFFFFu;
  const uint32_t subnormal = float_bits(bits_float(a) + 0.5f) - 0x3F000000u;
  const uint32_t normal = (a + 0xC8000FFFu + ((a >> 13) & 1u)) >> 13;  // rebias 127 -> 15
  const uint32_t h = select(a < 0x38800000u, subnormal, normal);
  return ((b >> 16) & 0x8000u) | select(h > kHalfBelowOne, kHalfBelowOne, h);
}

// binary16 bits -> binary32, exact and branch-free: normal halves need the
// exponent rebiased (255 for inf/NaN), subnormal ones are 2^-14 * (1 + m/1024)
// minus 2^-14, both exact in float.
FDK_HOST_DEVICE inline float half_to_float(uint32_t h) {
  const uint32_t em = (h & 0x7FFFu) << 13;
  const uint32_t exponent = em & 0x0F800000u;
  const uint32_t normal = em + select(exponent == 0x0F800000u, 0x70000000u, 0x38000000u);
  const uint32_t subnormal = float_bits(bits_float(em + 0x38800000u) - bits_float(0x38800000u));
  return bits_float(((h & 0x8000u) << 16) | select(exponent == 0, subnormal, normal));
}

// frexp's exponent of a non-negative finite float, from its bits: no float
// arithmetic, so no flush-to-zero mode can turn a denormal into 0.
FDK_HOST_DEVICE inline int frexp_exponent(uint32_t abs_bits) {
  if (abs_bits >= 0x00800000u) return static_cast<int>(abs_bits >> 23) - 126;
  int e = -149;
  for (; abs_bits != 0; abs_bits >>= 1) ++e;
  return e;
}

// The band's e from its largest |value|'s bits (finite: the caller checks
// for 0x7F800000 and above): every |x| / 2^e < 1 and the largest >= 0.5.
FDK_HOST_DEVICE inline int band_exponent_of(uint32_t max_abs_bits) {
  return max_abs_bits == 0 ? 0 : frexp_exponent(max_abs_bits);
}

// Multiplies by 2^e in two float steps, 2^(e/2) then the rest, each a normal
// float for every e the store meets (|e| <= 148), built from its bits: the
// first product is exact, the second rounds once, as a double product cast
// to float would, and float arithmetic lets the loops vectorise. (For the
// encoder the first step can underflow only where the result is far below
// the half range, which makes it 0 all the same.)
struct Pow2 {
  float first, second;
  FDK_HOST_DEVICE explicit Pow2(int e)
      : first(bits_float(static_cast<uint32_t>(127 + e / 2) << 23)),
        second(bits_float(static_cast<uint32_t>(127 + (e - e / 2)) << 23)) {}
  FDK_HOST_DEVICE float times(float x) const { return x * first * second; }
};

// What the store gives back for x in a band of exponent e: coded, then
// read. `down` is Pow2(-e), `up` Pow2(e).
FDK_HOST_DEVICE inline float stored_value(float x, const Pow2& down, const Pow2& up) {
  return up.times(half_to_float(half_below_one(down.times(x))));
}

}  // namespace fdk::float16_bits

#undef FDK_HOST_DEVICE
