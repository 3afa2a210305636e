#include "fdk/core/projection_store.hpp"

#include <algorithm>
#include "fdk/core/thread_pool.hpp"

#include <fdk/core/error.hpp>

#include <zstd.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <type_traits>

// Band format: one kind byte (zstd or raw); for float16 an int16 exponent e
// (little-endian) follows, values having been divided by 2^e; then the
// byte-shuffled samples, compressed or not. Shuffling puts the slowly varying
// high bytes together, which is what lets zstd find runs in float data.
namespace fdk {
namespace {

constexpr uint8_t kZstd = 0;
constexpr uint8_t kRaw = 1;
// zstd's fast mode: filtered projections are mostly noise in their low
// mantissa bytes, so stronger levels buy little ratio (1.28 at level 1,
// 1.28 at -1 on filtered data) for half the speed (measured: 517 against
// 1115 MB/s per core, with a reused context).
constexpr int kLevel = -1;
// frexp of the smallest float denormal gives -148, of FLT_MAX 128.
constexpr int kMinExponent = -148;
constexpr int kMaxExponent = 128;
// Largest half below 1: rounding up to 1.0 could overflow the float range
// when e = 128, and the clamp stays inside the documented bound.
constexpr uint16_t kHalfBelowOne = 0x3BFF;

[[noreturn]] void corrupt(const std::string& what) {
  fail(FDK_ERROR_INTERNAL, "projection store: corrupt band (" + what + ")");
}

uint32_t float_bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

float bits_float(uint32_t b) {
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

// IEEE binary32 -> binary16, round to nearest even, without relying on a
// compiler half type.
uint16_t float_to_half(float x) {
  const uint32_t b = float_bits(x);
  const uint16_t sign = static_cast<uint16_t>((b >> 16) & 0x8000u);
  const uint32_t a = b & 0x7FFFFFFFu;
  if (a >= 0x7F800000u) return static_cast<uint16_t>(sign | 0x7C00u | (a > 0x7F800000u ? 0x200u : 0u));
  if (a >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds past 65504
  if (a < 0x38800000u) {  // half subnormal range, unit 2^-24
    if (a < 0x33000000u) return sign;  // below half the smallest subnormal
    const uint32_t mant = (a & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126u - (a >> 23);
    uint32_t q = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (q & 1u))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t h = (a >> 13) - (112u << 10);  // rebias 127 -> 15
  const uint32_t rem = a & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // a carry bumps the exponent
  return static_cast<uint16_t>(sign | h);
}

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1Fu;
  const uint32_t m = h & 0x3FFu;
  if (e == 0) {
    const float v = std::ldexp(static_cast<float>(m), -24);
    return sign ? -v : v;
  }
  if (e == 31) return bits_float(sign | 0x7F800000u | (m << 13));
  return bits_float(sign | ((e + 112u) << 23) | (m << 13));
}

struct CctxFree {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct DctxFree {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

std::unique_ptr<ZSTD_CCtx, CctxFree> make_cctx() {
  std::unique_ptr<ZSTD_CCtx, CctxFree> c(ZSTD_createCCtx());
  if (!c) fail(FDK_ERROR_OUT_OF_MEMORY, "projection store: cannot create a zstd context");
  // The checksum turns a corrupted band into an error instead of wrong data.
  if (ZSTD_isError(ZSTD_CCtx_setParameter(c.get(), ZSTD_c_compressionLevel, kLevel)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(c.get(), ZSTD_c_checksumFlag, 1)))
    fail(FDK_ERROR_INTERNAL, "projection store: zstd rejected its parameters");
  return c;
}

std::unique_ptr<ZSTD_DCtx, DctxFree> make_dctx() {
  std::unique_ptr<ZSTD_DCtx, DctxFree> d(ZSTD_createDCtx());
  if (!d) fail(FDK_ERROR_OUT_OF_MEMORY, "projection store: cannot create a zstd context");
  return d;
}

size_t header_size(fdk_precision p) { return p == FDK_PRECISION_FLOAT16 ? 3 : 1; }
size_t sample_size(fdk_precision p) { return p == FDK_PRECISION_FLOAT16 ? 2 : 4; }

// Plane p holds byte p (little-endian significance) of every sample.
void shuffle32(const float* in, size_t n, uint8_t* out) {
  for (size_t i = 0; i < n; ++i) {
    const uint32_t b = float_bits(in[i]);
    out[i] = static_cast<uint8_t>(b);
    out[n + i] = static_cast<uint8_t>(b >> 8);
    out[2 * n + i] = static_cast<uint8_t>(b >> 16);
    out[3 * n + i] = static_cast<uint8_t>(b >> 24);
  }
}

// Returns e with every |x| / 2^e < 1 and the largest >= 0.5.
int band_exponent(const float* in, size_t n) {
  float maxabs = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(in[i]))
      fail(FDK_ERROR_INVALID_ARGUMENT, "projection store: float16 needs finite values");
    const float a = std::fabs(in[i]);
    if (a > maxabs) maxabs = a;
  }
  if (maxabs == 0) return 0;
  int e = 0;
  std::frexp(maxabs, &e);
  return e;
}

// In double, dividing by 2^e is exact over the whole float range.
void shuffle16(const float* in, size_t n, int e, uint8_t* out) {
  const double inv_scale = std::ldexp(1.0, -e);
  for (size_t i = 0; i < n; ++i) {
    const float y = static_cast<float>(in[i] * inv_scale);
    uint16_t h = float_to_half(y);
    if ((h & 0x7FFFu) > kHalfBelowOne) h = static_cast<uint16_t>((h & 0x8000u) | kHalfBelowOne);
    out[i] = static_cast<uint8_t>(h);
    out[n + i] = static_cast<uint8_t>(h >> 8);
  }
}

}  // namespace

uint64_t CompressedView::bytes() const {
  uint64_t total = 0;
  for (const auto& band : bands) total += band.size();
  return total;
}

ProjectionStore::ProjectionStore(int width, int height, int num_views,
                                 fdk_precision precision, int band_rows)
    : width_(width), height_(height), band_rows_(band_rows), precision_(precision) {
  if (width < 1 || height < 1)
    fail(FDK_ERROR_INVALID_ARGUMENT, "projection store: width and height must be >= 1");
  if (num_views < 1) fail(FDK_ERROR_INVALID_ARGUMENT, "projection store: num_views must be >= 1");
  if (band_rows < 1) fail(FDK_ERROR_INVALID_ARGUMENT, "projection store: band_rows must be >= 1");
  // Read as an integer: a C caller can store any int in the enum.
  std::underlying_type_t<fdk_precision> raw;
  std::memcpy(&raw, &precision, sizeof raw);
  const long long p = static_cast<long long>(raw);
  if (p != FDK_PRECISION_FLOAT32 && p != FDK_PRECISION_FLOAT16)
    fail(FDK_ERROR_INVALID_ARGUMENT, "projection store: unknown precision");
  try {
    views_.resize(static_cast<size_t>(num_views));
    present_.assign(static_cast<size_t>(num_views), 0);
  } catch (const std::bad_alloc&) {
    fail(FDK_ERROR_OUT_OF_MEMORY, "projection store: out of memory");
  }
}

CompressedView ProjectionStore::compress(const float* data) const { return compress(data, nullptr); }

CompressedView ProjectionStore::compress(const float* data, ThreadPool* pool) const {
  if (!data) fail(FDK_ERROR_INVALID_ARGUMENT, "projection store: null projection");
  CompressedView view;
  try {
    view.bands.resize(static_cast<size_t>(num_bands()));
  } catch (const std::bad_alloc&) {
    fail(FDK_ERROR_OUT_OF_MEMORY, "projection store: out of memory");
  }
  const int bands = num_bands();
  const int tasks = pool ? std::min(bands, 2 * pool->size()) : 1;
  const auto run = [&](int task, int) {
    compress_bands(data, bands * task / tasks, bands * (task + 1) / tasks, view);
  };
  if (pool)
    pool->parallel_for(tasks, run);
  else
    run(0, 0);
  return view;
}

void ProjectionStore::compress_bands(const float* data, int band_begin, int band_end,
                                     CompressedView& view) const {
  const size_t hdr = header_size(precision_);
  const size_t ss = sample_size(precision_);
  try {
    // One context per thread, kept: creating one per call costs a fifth of
    // the compression time.
    thread_local std::unique_ptr<ZSTD_CCtx, CctxFree> cctx;
    if (!cctx) cctx = make_cctx();
    const size_t max_samples = static_cast<size_t>(band_rows_ < height_ ? band_rows_ : height_) *
                               static_cast<size_t>(width_);
    std::vector<uint8_t> shuffled(max_samples * ss);
    std::vector<uint8_t> packed(ZSTD_compressBound(shuffled.size()));

    for (int b = band_begin; b < band_end; ++b) {
      const int row0 = b * band_rows_;
      const int rows = (row0 + band_rows_ <= height_) ? band_rows_ : height_ - row0;
      const size_t n = static_cast<size_t>(rows) * static_cast<size_t>(width_);
      const float* in = data + static_cast<size_t>(row0) * static_cast<size_t>(width_);
      const size_t raw = n * ss;

      uint8_t header[3] = {kZstd, 0, 0};
      if (precision_ == FDK_PRECISION_FLOAT16) {
        const int e = band_exponent(in, n);
        const uint16_t ue = static_cast<uint16_t>(static_cast<int16_t>(e));
        header[1] = static_cast<uint8_t>(ue);
        header[2] = static_cast<uint8_t>(ue >> 8);
        shuffle16(in, n, e, shuffled.data());
      } else {
        shuffle32(in, n, shuffled.data());
      }

      const size_t z = ZSTD_compress2(cctx.get(), packed.data(), packed.size(),
                                      shuffled.data(), raw);
      if (ZSTD_isError(z))
        fail(FDK_ERROR_INTERNAL, std::string("projection store: zstd: ") + ZSTD_getErrorName(z));
      const bool keep_raw = z >= raw;
      const uint8_t* payload = keep_raw ? shuffled.data() : packed.data();
      const size_t size = keep_raw ? raw : z;
      header[0] = keep_raw ? kRaw : kZstd;

      // Sized exactly: the band lives as long as the scan, so spare capacity
      // would be memory the budget does not see.
      std::vector<uint8_t>& band = view.bands[static_cast<size_t>(b)];
      band.reserve(hdr + size);
      band.assign(header, header + hdr);
      band.insert(band.end(), payload, payload + size);
    }
  } catch (const std::bad_alloc&) {
    fail(FDK_ERROR_OUT_OF_MEMORY, "projection store: out of memory");
  }
}

void ProjectionStore::commit(int view, CompressedView&& compressed) {
  if (view < 0 || static_cast<size_t>(view) >= views_.size())
    fail(FDK_ERROR_OUT_OF_RANGE, "projection store: view index " + std::to_string(view) +
                                     " outside [0, " + std::to_string(views_.size()) + ")");
  if (compressed.bands.size() != static_cast<size_t>(num_bands()))
    fail(FDK_ERROR_INVALID_ARGUMENT, "projection store: view has the wrong number of bands");
  const uint64_t bytes = compressed.bytes();
  std::lock_guard<std::mutex> lock(mutex_);
  if (present_[static_cast<size_t>(view)])
    fail(FDK_ERROR_DUPLICATE, "projection store: view " + std::to_string(view) +
                                  " is already stored");
  views_[static_cast<size_t>(view)] = std::move(compressed);
  present_[static_cast<size_t>(view)] = 1;
  stored_bytes_ += bytes;
  ++views_stored_;
}

uint64_t ProjectionStore::worst_case_view_bytes() const {
  return static_cast<uint64_t>(num_bands()) * header_size(precision_) +
         static_cast<uint64_t>(width_) * static_cast<uint64_t>(height_) * sample_size(precision_);
}

bool ProjectionStore::has(int view) const {
  if (view < 0 || static_cast<size_t>(view) >= views_.size()) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  return present_[static_cast<size_t>(view)] != 0;
}

uint64_t ProjectionStore::raw_bytes() const {
  return static_cast<uint64_t>(views_stored_.load()) * static_cast<uint64_t>(width_) *
         static_cast<uint64_t>(height_) * 4u;
}

void ProjectionStore::read_rows(int view, int row_begin, int row_end, float* out) const {
  if (view < 0 || static_cast<size_t>(view) >= views_.size())
    fail(FDK_ERROR_OUT_OF_RANGE, "projection store: view index " + std::to_string(view) +
                                     " outside [0, " + std::to_string(views_.size()) + ")");
  if (row_begin < 0 || row_end > height_ || row_begin > row_end)
    fail(FDK_ERROR_OUT_OF_RANGE, "projection store: rows [" + std::to_string(row_begin) + ", " +
                                     std::to_string(row_end) + ") outside [0, " +
                                     std::to_string(height_) + ")");
  if (!out && row_end > row_begin)
    fail(FDK_ERROR_INVALID_ARGUMENT, "projection store: null output");
  const CompressedView* stored = nullptr;
  {
    // A committed view is never modified again, so once its presence is
    // seen under the lock it can be read without it.
    std::lock_guard<std::mutex> lock(mutex_);
    if (!present_[static_cast<size_t>(view)])
      fail(FDK_ERROR_INVALID_STATE, "projection store: view " + std::to_string(view) +
                                        " has not been stored");
    stored = &views_[static_cast<size_t>(view)];
  }
  if (row_end == row_begin) return;

  const size_t hdr = header_size(precision_);
  const size_t ss = sample_size(precision_);
  const size_t w = static_cast<size_t>(width_);
  try {
    std::unique_ptr<ZSTD_DCtx, DctxFree> dctx;
    std::vector<uint8_t> scratch;
    for (int b = row_begin / band_rows_; b * band_rows_ < row_end; ++b) {
      const int band_row0 = b * band_rows_;
      const int band_rows = (band_row0 + band_rows_ <= height_) ? band_rows_ : height_ - band_row0;
      const size_t n = static_cast<size_t>(band_rows) * w;
      const size_t raw = n * ss;
      const std::vector<uint8_t>& band = stored->bands[static_cast<size_t>(b)];
      if (band.size() < hdr) corrupt("truncated header");

      const uint8_t* planes = band.data() + hdr;
      const size_t payload = band.size() - hdr;
      if (band[0] == kRaw) {
        if (payload != raw) corrupt("raw size");
      } else if (band[0] == kZstd) {
        if (!dctx) dctx = make_dctx();
        scratch.resize(raw);
        const size_t got = ZSTD_decompressDCtx(dctx.get(), scratch.data(), raw, planes, payload);
        if (ZSTD_isError(got)) corrupt(ZSTD_getErrorName(got));
        if (got != raw) corrupt("decompressed size");
        planes = scratch.data();
      } else {
        corrupt("unknown kind");
      }

      // Only the rows of this band inside [row_begin, row_end) are unpacked.
      const int r0 = row_begin > band_row0 ? row_begin : band_row0;
      const int r1 = row_end < band_row0 + band_rows ? row_end : band_row0 + band_rows;
      const size_t i0 = static_cast<size_t>(r0 - band_row0) * w;
      const size_t i1 = static_cast<size_t>(r1 - band_row0) * w;
      float* dst = out + static_cast<size_t>(r0 - row_begin) * w;
      if (precision_ == FDK_PRECISION_FLOAT16) {
        const int e = static_cast<int16_t>(static_cast<uint16_t>(band[1] | (band[2] << 8)));
        if (e < kMinExponent || e > kMaxExponent) corrupt("exponent");
        // Exact: every decoded value is representable as a float.
        const double scale = std::ldexp(1.0, e);
        for (size_t i = i0; i < i1; ++i) {
          const uint16_t h = static_cast<uint16_t>(planes[i] | (planes[n + i] << 8));
          *dst++ = static_cast<float>(half_to_float(h) * scale);
        }
      } else {
        for (size_t i = i0; i < i1; ++i) {
          const uint32_t bits = static_cast<uint32_t>(planes[i]) |
                                static_cast<uint32_t>(planes[n + i]) << 8 |
                                static_cast<uint32_t>(planes[2 * n + i]) << 16 |
                                static_cast<uint32_t>(planes[3 * n + i]) << 24;
          *dst++ = bits_float(bits);
        }
      }
    }
  } catch (const std::bad_alloc&) {
    fail(FDK_ERROR_OUT_OF_MEMORY, "projection store: out of memory");
  }
}

}  // namespace fdk
