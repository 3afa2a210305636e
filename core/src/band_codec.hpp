// One stored band (a few detector rows of one view) in bytes, and back:
// the byte planes of its samples, each coded apart where that pays
// (band_codec.cpp says how and why). ProjectionStore keeps the bands.
#pragma once
#include <fdk/fdk.h>

#include <cstddef>
#include <cstdint>

#include "fdk/core/projection_store.hpp"

namespace fdk::band_codec {

// A band's header, and one sample's stored bytes, at `precision`: no band
// takes more than header_bytes + n * sample_bytes.
size_t header_bytes(fdk_precision precision);
size_t sample_bytes(fdk_precision precision);

// What a band written at `out` took.
struct Coded {
  size_t size;
  uint32_t max_abs_bits;  // the band's largest |value| before coding, as float bits
};

// n samples (rows of `width`) at `out`, which has room for the most a band
// takes: coded, or stored as they are where coding would not shrink them.
Coded encode(const float* in, size_t n, size_t width, fdk_precision precision, uint8_t* out);
// The same without trying any coder (a store that fits its budget uncoded).
Coded store_uncoded(const float* in, size_t n, fdk_precision precision, uint8_t* out);
// Samples [i0, i1) of a band of n samples (rows of `width`) into `out`.
// Throws fdk::Error (FDK_ERROR_INTERNAL) on a damaged band.
void decode(ByteView band, size_t n, size_t width, fdk_precision precision, size_t i0, size_t i1, float* out);

}  // namespace fdk::band_codec
