// The format of one stored band and its coders (band_codec.hpp).
#include "band_codec.hpp"

#include <algorithm>

#include <fdk/core/error.hpp>
#include <fdk/core/float16_bits.hpp>
#include <fdk/core/per_thread.hpp>

// For ZSTD_c_literalCompressionMode, an experimental parameter (number and
// values unchanged since zstd 1.4.0). It is set through the stable
// ZSTD_CCtx_setParameter, so a libzstd without it refuses it and the store
// falls back to plain fast mode (see make_encoders): nothing is linked that
// the stable ABI lacks.
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zstd_errors.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <new>
#include <string>
#include <type_traits>

// Band format. Byte 0 is the kind; for float16 an int16 exponent e
// (little-endian) follows, values having been divided by 2^e. The samples
// are byte-shuffled: plane p holds byte p (little-endian significance) of
// every sample's bits (binary32, or binary16 for float16).
//   kRaw     the planes as they are.
//   kPlanes  a flags byte, the sizes of all sections but the last (uint32,
//            little-endian), then the sections: float32 {planes 0-1,
//            plane 2, plane 3}, float16 {plane 0, plane 1}. A section whose
//            size equals its raw size is its bytes as they are, a smaller
//            one a zstd frame. Flag bit k: section k's frame holds vertical
//            differences (each byte minus the one a row above, mod 256; the
//            band's first row as it is).
// Filtered projections are smooth with noise in every mantissa byte but the
// top ones, so nearly all the gain is in the sign/exponent plane. Coding
// the sections apart lets noise bypass zstd and gives each plane the coder
// that suits it (see the *_choice functions); on realistic data that is 2-3x
// faster than zstd over the four planes together, and compresses better.
// What is stored as it is carries no checksum (as raw bands never did);
// every zstd frame has one.
namespace fdk {
namespace {

using band_codec::Coded;
using float16_bits::band_exponent_of;
using float16_bits::bits_float;
using float16_bits::float_bits;
using float16_bits::half_below_one;
using float16_bits::half_to_float;
using float16_bits::Pow2;
using band_codec::header_bytes;
using band_codec::sample_bytes;

constexpr uint8_t kPlanes = 0;
constexpr uint8_t kRaw = 1;
// zstd's fast mode: stronger levels buy little ratio on filtered data for
// half the speed (measured: 517 against 1115 MB/s per core).
constexpr int kLzLevel = -1;
// An acceleration so high that zstd matches next to nothing: with its
// literals forced through Huffman, an order-0 entropy coder (about 900 MB/s
// on a noisy exponent plane, where level -1 manages 230 and codes larger).
constexpr int kHuffmanLevel = -1000;
// ZSTD_ps_enable (ZSTD_lcm_huffman before zstd 1.5.1): Huffman-code
// literals, which zstd skips by default at negative levels.
constexpr int kLiteralsHuffman = 1;
// frexp of the smallest float denormal gives -148, of FLT_MAX 128.
constexpr int kMinExponent = -148;
constexpr int kMaxExponent = 128;
[[noreturn]] void corrupt(const std::string& what) {
  fail(FDK_ERROR_INTERNAL, "projection store: corrupt band (" + what + ")");
}

struct CctxFree {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct DctxFree {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};
using Cctx = std::unique_ptr<ZSTD_CCtx, CctxFree>;
using Dctx = std::unique_ptr<ZSTD_DCtx, DctxFree>;

Cctx make_cctx(int level) {
  Cctx c(ZSTD_createCCtx());
  if (!c) fail(FDK_ERROR_OUT_OF_MEMORY, "projection store: cannot create a zstd context");
  // The checksum turns a corrupted band into an error instead of wrong data.
  if (ZSTD_isError(ZSTD_CCtx_setParameter(c.get(), ZSTD_c_compressionLevel, level)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(c.get(), ZSTD_c_checksumFlag, 1)))
    fail(FDK_ERROR_INTERNAL, "projection store: zstd rejected its parameters");
  return c;
}

bool force_huffman_literals(ZSTD_CCtx* c) {
  return !ZSTD_isError(
      ZSTD_CCtx_setParameter(c, ZSTD_c_literalCompressionMode, kLiteralsHuffman));
}

// How a section is coded.
enum class Coder {
  kStore,      // as it is: zstd would spend time on noise to gain nothing
  kLz,         // zstd fast: finds runs and repeats, gives up quickly on noise
  kLzHuffman,  // the same with Huffman-coded literals
  kHuffman,    // Huffman only (kHuffmanLevel)
};

struct Choice {
  Coder coder;
  bool delta;  // code the vertical differences
};

// One context per coder and thread, kept: creating one per call costs a
// fifth of the compression time.
struct Encoders {
  Cctx lz, lz_huffman, huffman;
  bool has_huffman = false;  // this libzstd takes the literal mode

  ZSTD_CCtx* context(Coder coder) const {
    if (!has_huffman) return lz.get();
    if (coder == Coder::kHuffman) return huffman.get();
    return coder == Coder::kLzHuffman ? lz_huffman.get() : lz.get();
  }
};

Encoders make_encoders() {
  Encoders e;
  e.lz = make_cctx(kLzLevel);
  e.lz_huffman = make_cctx(kLzLevel);
  e.huffman = make_cctx(kHuffmanLevel);
  e.has_huffman = force_huffman_literals(e.lz_huffman.get()) &&
                  force_huffman_literals(e.huffman.get());
  return e;
}

Dctx make_dctx() {
  Dctx d(ZSTD_createDCtx());
  if (!d) fail(FDK_ERROR_OUT_OF_MEMORY, "projection store: cannot create a zstd context");
  return d;
}

// Grows only: a thread keeps its buffers for the next band, so a band costs
// no allocation but its own.
uint8_t* scratch(std::vector<uint8_t>& buffer, size_t bytes) {
  if (buffer.size() < bytes) buffer.resize(bytes);
  return buffer.data();
}

// What a thread keeps between bands (per_thread: its own, for its life).
struct EncodeScratch {
  Encoders enc = make_encoders();
  std::vector<uint8_t> planes, deltas, packed;
};
struct DecodeScratch {
  Dctx dctx;  // made on first use
  std::vector<uint8_t> decoded;
};


// The sections of a kPlanes band, in the order they are stored.
struct SectionSpec {
  int first_plane, planes;
};
constexpr SectionSpec kSections32[] = {{0, 2}, {2, 1}, {3, 1}};
constexpr SectionSpec kSections16[] = {{0, 1}, {1, 1}};
constexpr size_t kMaxSections = 3;
constexpr size_t kSizeField = 4;
constexpr size_t kMaxHeader = 3 + 1 + (kMaxSections - 1) * kSizeField;

struct Layout {
  const SectionSpec* sections;
  size_t count;
};

Layout layout(fdk_precision p) {
  if (p == FDK_PRECISION_FLOAT16) return {kSections16, std::size(kSections16)};
  return {kSections32, std::size(kSections32)};
}

size_t planes_header_size(fdk_precision p) {
  return header_bytes(p) + 1 + (layout(p).count - 1) * kSizeField;
}

void put_u32(uint8_t* out, size_t v) {
  for (int k = 0; k < 4; ++k) out[k] = static_cast<uint8_t>(v >> (8 * k));
}

size_t get_u32(const uint8_t* in) {
  size_t v = 0;
  for (int k = 0; k < 4; ++k) v |= static_cast<size_t>(in[k]) << (8 * k);
  return v;
}

// ---- planes ------------------------------------------------------------------

// Separate, non-aliasing plane pointers let the compiler vectorise it.
void shuffle32(const float* in, size_t n, uint8_t* out) {
  uint8_t* __restrict p0 = out;
  uint8_t* __restrict p1 = out + n;
  uint8_t* __restrict p2 = out + 2 * n;
  uint8_t* __restrict p3 = out + 3 * n;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t b = float_bits(in[i]);
    p0[i] = static_cast<uint8_t>(b);
    p1[i] = static_cast<uint8_t>(b >> 8);
    p2[i] = static_cast<uint8_t>(b >> 16);
    p3[i] = static_cast<uint8_t>(b >> 24);
  }
}

// The largest |x| as float bits. Found on the bits (ordered like the
// magnitudes), which vectorises; inf and NaN come out above every finite.
uint32_t max_abs_bits(const float* in, size_t n) {
  uint32_t max_bits = 0;
  for (size_t i = 0; i < n; ++i) max_bits = std::max(max_bits, float_bits(in[i]) & 0x7FFFFFFFu);
  return max_bits;
}

// Returns e with every |x| / 2^e < 1 and the largest >= 0.5, from the
// band's max_abs_bits.
int band_exponent(uint32_t max_bits) {
  if (max_bits >= 0x7F800000u)
    fail(FDK_ERROR_INVALID_ARGUMENT, "projection store: float16 needs finite values");
  return band_exponent_of(max_bits);
}

void shuffle16(const float* in, size_t n, int e, uint8_t* out) {
  const Pow2 inv_scale(-e);
  uint8_t* __restrict p0 = out;
  uint8_t* __restrict p1 = out + n;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t h = half_below_one(inv_scale.times(in[i]));
    p0[i] = static_cast<uint8_t>(h);
    p1[i] = static_cast<uint8_t>(h >> 8);
  }
}

void unshuffle32(const uint8_t* const planes[4], size_t i0, size_t i1, float* out) {
  const uint8_t* p0 = planes[0];
  const uint8_t* p1 = planes[1];
  const uint8_t* p2 = planes[2];
  const uint8_t* p3 = planes[3];
  for (size_t i = i0; i < i1; ++i) {
    const uint32_t bits = static_cast<uint32_t>(p0[i]) | static_cast<uint32_t>(p1[i]) << 8 |
                          static_cast<uint32_t>(p2[i]) << 16 | static_cast<uint32_t>(p3[i]) << 24;
    out[i - i0] = bits_float(bits);
  }
}

// Exact: every decoded value is representable as a float.
void unshuffle16(const uint8_t* const planes[2], int e, size_t i0, size_t i1, float* out) {
  const Pow2 scale(e);
  const uint8_t* p0 = planes[0];
  const uint8_t* p1 = planes[1];
  for (size_t i = i0; i < i1; ++i) {
    const float h = half_to_float(static_cast<uint32_t>(p0[i]) | static_cast<uint32_t>(p1[i]) << 8);
    out[i - i0] = scale.times(h);
  }
}

// Each byte minus the one a row above (the first row as it is), and how many
// differences lie within +-2: the share that says whether the plane is
// smooth enough for the differences to pay.
size_t vertical_delta(const uint8_t* plane, size_t n, size_t width, uint8_t* out) {
  const size_t first = std::min(n, width);
  std::memcpy(out, plane, first);
  size_t near = 0;
  for (size_t i = first; i < n; ++i) {
    const uint8_t d = static_cast<uint8_t>(plane[i] - plane[i - width]);
    out[i] = d;
    near += static_cast<uint8_t>(d + 2) < 5;
  }
  return near;
}

void undo_vertical_delta(uint8_t* plane, size_t n, size_t width) {
  for (size_t i = width; i < n; ++i) plane[i] = static_cast<uint8_t>(plane[i] + plane[i - width]);
}

// How many bytes equal their left neighbour. Counted in blocks so the sum
// stays in narrow lanes the compiler can vectorise.
size_t count_repeats(const uint8_t* p, size_t n) {
  size_t total = 0;
  for (size_t b = 1; b < n; b += 4096) {
    const size_t e = std::min(n, b + 4096);
    uint32_t block = 0;
    for (size_t i = b; i < e; ++i) block += p[i] == p[i - 1];
    total += block;
  }
  return total;
}

// ---- choosing coders ------------------------------------------------------------
// Cheap statistics stand in for trying coders. The thresholds come from
// ramp-filtered smooth images with 1e-6 to 1e-2 relative noise (tools/store-bench).

// Planes of noise, which real data leaves in every byte under the top one
// (by chance one byte in 256 repeats its neighbour): zstd only pays where
// exact zeros, constant or quantised regions make bytes repeat.
Coder repeat_coder(const uint8_t* plane, size_t n) {
  return count_repeats(plane, n) * 16 >= n ? Coder::kLz : Coder::kStore;
}

// Where the signal is smooth to below a mantissa byte's resolution, the
// byte a row above predicts it: Huffman codes the differences to 0.34 of
// the raw size at 1e-6 relative noise, where zstd gets 0.63 at a third of
// the speed. At realistic noise few differences are small (2% by chance).
// Decoding Huffman is slower than copying raw bytes, so the differences are
// used only where they save much (a quarter of them small: 0.53 of raw and
// below); at 1e-4 relative noise (16% small) they would save 14% of the
// plane but make a view 20% slower to compress and 25% slower to read.
Choice mantissa_choice(const uint8_t* plane, size_t near, size_t n) {
  if (near * 4 >= n) return {Coder::kHuffman, true};
  return {repeat_coder(plane, n), false};
}

// The sign/exponent byte. Where most samples repeat their neighbour (smooth
// data, little noise) zstd's matches beat the 1 bit per byte Huffman cannot
// go below; where runs are short (noise flips signs and exponents) zstd
// finds only short matches at a quarter of the speed, and Huffman alone codes
// smaller. They cross at about 60% repeats.
Choice top_choice(const uint8_t* plane, size_t n) {
  if (count_repeats(plane, n) * 5 >= n * 3) return {Coder::kLzHuffman, false};
  return {Coder::kHuffman, false};
}

// The float16 top byte holds two mantissa bits besides sign and exponent,
// so between long runs and noise there is a range (1e-4 relative noise)
// where it is smooth but not flat, and its vertical differences code best
// (0.33 of raw, against 0.38 for zstd and 0.59 for plain Huffman). The
// float32 top byte gains nothing from them: its sign flips cost more.
Choice top16_choice(const uint8_t* plane, size_t near, size_t n) {
  const Choice top = top_choice(plane, n);
  if (top.coder == Coder::kHuffman && near * 5 >= n * 3) return {Coder::kHuffman, true};
  return top;
}

// ---- bands -----------------------------------------------------------------------

// A band of n samples taken apart: its planes, the vertical differences of
// the planes that may use them, and each section's choice.
struct Split {
  uint8_t header[kMaxHeader] = {kPlanes};
  size_t hdr = 1;
  Choice choices[kMaxSections] = {};
  uint32_t max_abs_bits = 0;  // the band's largest |value| before coding
};

Split split_band(const float* in, size_t n, size_t width, fdk_precision precision,
                 uint8_t* planes, uint8_t* deltas) {
  Split s;
  if (precision == FDK_PRECISION_FLOAT16) {
    s.max_abs_bits = max_abs_bits(in, n);
    const int e = band_exponent(s.max_abs_bits);
    const uint16_t ue = static_cast<uint16_t>(static_cast<int16_t>(e));
    s.header[1] = static_cast<uint8_t>(ue);
    s.header[2] = static_cast<uint8_t>(ue >> 8);
    s.hdr = 3;
    shuffle16(in, n, e, planes);
    const size_t near0 = vertical_delta(planes, n, width, deltas);
    const size_t near1 = vertical_delta(planes + n, n, width, deltas + n);
    s.choices[0] = mantissa_choice(planes, near0, n);
    s.choices[1] = top16_choice(planes + n, near1, n);
  } else {
    // A pass of its own: inside the shuffle's loop it cost the coding 18%
    // (that loop no longer vectorised); alone it measured no slower (16 MiB
    // views on one core of the development machine).
    s.max_abs_bits = max_abs_bits(in, n);
    shuffle32(in, n, planes);
    const size_t near2 = vertical_delta(planes + 2 * n, n, width, deltas + 2 * n);
    s.choices[0] = {repeat_coder(planes + n, n), false};
    s.choices[1] = mantissa_choice(planes + 2 * n, near2, n);
    s.choices[2] = top_choice(planes + 3 * n, n);
  }
  return s;
}

struct Bytes {
  const uint8_t* data;
  size_t size;
  bool delta;
};

// Codes `len` bytes into dst (room for len - 1): a zstd frame when it comes
// out smaller, else the plain bytes, so the stored size tells the two apart.
Bytes encode_section(const Encoders& enc, Choice choice, const uint8_t* plain,
                     const uint8_t* delta, size_t len, uint8_t* dst) {
  if (choice.coder == Coder::kStore) return {plain, len, false};
  const uint8_t* src = choice.delta ? delta : plain;
  const size_t z = ZSTD_compress2(enc.context(choice.coder), dst, len - 1, src, len);
  if (!ZSTD_isError(z)) return {dst, z, choice.delta};
  if (ZSTD_getErrorCode(z) == ZSTD_error_dstSize_tooSmall) return {plain, len, false};
  fail(FDK_ERROR_INTERNAL, std::string("projection store: zstd: ") + ZSTD_getErrorName(z));
}

// The header and the parts, back to back at `out`; returns their size.
size_t put_band(const uint8_t* header, size_t hdr, const Bytes* parts, size_t count, uint8_t* out) {
  std::memcpy(out, header, hdr);
  size_t at = hdr;
  for (size_t k = 0; k < count; ++k) {
    std::memcpy(out + at, parts[k].data, parts[k].size);
    at += parts[k].size;
  }
  return at;
}

}  // namespace

// One band of n samples (rows of `width`) at `out`: kPlanes, or kRaw when
// that is no larger, so no band exceeds header_bytes plus its raw size (the
// room `out` has).
Coded band_codec::encode(const float* in, size_t n, size_t width, fdk_precision precision, uint8_t* out) {
  EncodeScratch& mine = per_thread<EncodeScratch>();
  const Encoders& enc = mine.enc;
  const size_t raw = n * sample_bytes(precision);
  uint8_t* planes = scratch(mine.planes, raw);
  uint8_t* deltas = scratch(mine.deltas, raw);
  uint8_t* packed = scratch(mine.packed, raw);

  Split s = split_band(in, n, width, precision, planes, deltas);
  const Layout lay = layout(precision);
  Bytes parts[kMaxSections];
  size_t stored = planes_header_size(precision);
  uint8_t flags = 0;
  for (size_t k = 0; k < lay.count; ++k) {
    const size_t offset = static_cast<size_t>(lay.sections[k].first_plane) * n;
    const size_t len = static_cast<size_t>(lay.sections[k].planes) * n;
    parts[k] = encode_section(enc, s.choices[k], planes + offset, deltas + offset, len,
                              packed + offset);
    stored += parts[k].size;
    if (parts[k].delta) flags = static_cast<uint8_t>(flags | (1u << k));
  }
  if (stored >= s.hdr + raw) {
    s.header[0] = kRaw;
    const Bytes whole{planes, raw, false};
    return {put_band(s.header, s.hdr, &whole, 1, out), s.max_abs_bits};
  }
  s.header[s.hdr] = flags;
  for (size_t k = 0; k + 1 < lay.count; ++k)
    put_u32(s.header + s.hdr + 1 + k * kSizeField, parts[k].size);
  return {put_band(s.header, planes_header_size(precision), parts, lay.count, out), s.max_abs_bits};
}

// One band of n samples at `out` as kRaw without trying any coder: the
// store of a scan that fits its budget uncoded (set_coded). The format is
// the coded store's, so reading does not know the difference. Shuffled
// straight into the view's block, which nothing wrote before.
Coded band_codec::store_uncoded(const float* in, size_t n, fdk_precision precision, uint8_t* out) {
  uint8_t header[kMaxHeader] = {kRaw};
  size_t hdr = 1;
  const uint32_t max_bits = max_abs_bits(in, n);
  if (precision == FDK_PRECISION_FLOAT16) {
    const int e = band_exponent(max_bits);
    const uint16_t ue = static_cast<uint16_t>(static_cast<int16_t>(e));
    header[1] = static_cast<uint8_t>(ue);
    header[2] = static_cast<uint8_t>(ue >> 8);
    hdr = 3;
    shuffle16(in, n, e, out + hdr);
  } else {
    shuffle32(in, n, out + hdr);
  }
  std::memcpy(out, header, hdr);
  return {hdr + n * sample_bytes(precision), max_bits};
}

namespace {

// Points planes[p] at plane p of a band of n samples: into the band for raw
// bytes, into `out` (room for all planes) for what zstd decodes.
void decode_planes(ByteView band, size_t n, size_t width,
                   fdk_precision precision, ZSTD_DCtx* dctx, uint8_t* out,
                   const uint8_t* planes[4]) {
  const size_t hdr = header_bytes(precision);
  if (band.size < hdr) corrupt("truncated header");
  if (band[0] == kRaw) {
    if (band.size - hdr != n * sample_bytes(precision)) corrupt("raw size");
    for (size_t p = 0; p < sample_bytes(precision); ++p) planes[p] = band.data + hdr + p * n;
    return;
  }
  if (band[0] != kPlanes) corrupt("unknown kind");
  const size_t phdr = planes_header_size(precision);
  if (band.size < phdr) corrupt("truncated header");
  const Layout lay = layout(precision);
  const unsigned flags = band[hdr];
  if (flags >> lay.count) corrupt("flags");
  const uint8_t* at = band.data + phdr;
  size_t left = band.size - phdr;
  for (size_t k = 0; k < lay.count; ++k) {
    const SectionSpec& spec = lay.sections[k];
    const size_t len = static_cast<size_t>(spec.planes) * n;
    const size_t size = k + 1 < lay.count ? get_u32(band.data + hdr + 1 + k * kSizeField) : left;
    const bool delta = (flags >> k) & 1u;
    if (size > len || size > left || (delta && size == len)) corrupt("section size");
    const uint8_t* section = at;
    if (size < len) {
      uint8_t* dst = out + static_cast<size_t>(spec.first_plane) * n;
      const size_t got = ZSTD_decompressDCtx(dctx, dst, len, at, size);
      if (ZSTD_isError(got)) corrupt(ZSTD_getErrorName(got));
      if (got != len) corrupt("decompressed size");
      if (delta) undo_vertical_delta(dst, len, width);
      section = dst;
    }
    for (int j = 0; j < spec.planes; ++j)
      planes[spec.first_plane + j] = section + static_cast<size_t>(j) * n;
    at += size;
    left -= size;
  }
  if (left != 0) corrupt("section size");
}

}  // namespace

namespace band_codec {

size_t header_bytes(fdk_precision precision) { return precision == FDK_PRECISION_FLOAT16 ? 3 : 1; }
size_t sample_bytes(fdk_precision precision) { return precision == FDK_PRECISION_FLOAT16 ? 2 : 4; }

void decode(ByteView band, size_t n, size_t width, fdk_precision precision, size_t i0, size_t i1, float* out) {
  // Kept per thread like the encoders: readers call this per view and slab.
  DecodeScratch& mine = per_thread<DecodeScratch>();
  if (!mine.dctx) mine.dctx = make_dctx();
  uint8_t* decoded = scratch(mine.decoded, n * sample_bytes(precision));
  const uint8_t* planes[4] = {};
  decode_planes(band, n, width, precision, mine.dctx.get(), decoded, planes);
  if (precision == FDK_PRECISION_FLOAT16) {
    const int e = static_cast<int16_t>(static_cast<uint16_t>(band[1] | (band[2] << 8)));
    if (e < kMinExponent || e > kMaxExponent) corrupt("exponent");
    unshuffle16(planes, e, i0, i1, out);
  } else {
    unshuffle32(planes, i0, i1, out);
  }
}

}  // namespace band_codec
}  // namespace fdk
