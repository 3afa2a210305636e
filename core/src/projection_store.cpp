// The store of filtered views: what it keeps per view and how it is read
// back. The format of a band and its coders are band_codec.cpp's.
#include "fdk/core/projection_store.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <type_traits>

#include <fdk/core/error.hpp>
#include <fdk/core/thread_pool.hpp>

#include "band_codec.hpp"

namespace fdk {

void CompressedView::Free::operator()(uint8_t* p) const { std::free(p); }

CompressedView::CompressedView(const CompressedView& other)
    : max_abs_bits(other.max_abs_bits), precision(other.precision), used_(other.used_), bands_(other.bands_) {
  if (used_ == 0) return;
  block_.reset(static_cast<uint8_t*>(std::malloc(used_)));
  if (!block_) throw std::bad_alloc();
  std::memcpy(block_.get(), other.block_.get(), used_);
}

CompressedView& CompressedView::operator=(const CompressedView& other) {
  if (this != &other) *this = CompressedView(other);
  return *this;
}

void CompressedView::truncate_band(size_t b, size_t size) {
  bands_[b].size = std::min(bands_[b].size, size);
}

uint64_t CompressedView::bytes() const { return used_; }

ProjectionStore::ProjectionStore(int width, int height, int num_views,
                                 fdk_precision precision, int band_rows)
    : width_(width), height_(height), band_rows_(band_rows), precision_(precision) {
  if (width < 1 || height < 1)
    fail(FDK_ERROR_INVALID_ARGUMENT, "projection store: width and height must be >= 1");
  if (num_views < 1) fail(FDK_ERROR_INVALID_ARGUMENT, "projection store: num_views must be >= 1");
  if (band_rows < 1) fail(FDK_ERROR_INVALID_ARGUMENT, "projection store: band_rows must be >= 1");
  typical_rows_ = height_;
  typical_bands_ = num_bands();
  // Read as an integer: a C caller can store any int in the enum.
  std::underlying_type_t<fdk_precision> raw;
  std::memcpy(&raw, &precision, sizeof raw);
  const long long p = static_cast<long long>(raw);
  if (p != FDK_PRECISION_FLOAT32 && p != FDK_PRECISION_FLOAT16)
    fail(FDK_ERROR_INVALID_ARGUMENT, "projection store: unknown precision");
  try {
    views_.resize(static_cast<size_t>(num_views));
    present_.assign(static_cast<size_t>(num_views), 0);
    max_abs_bits_.assign(static_cast<size_t>(num_views), 0);
  } catch (const std::bad_alloc&) {
    fail(FDK_ERROR_OUT_OF_MEMORY, "projection store: out of memory");
  }
}

CompressedView ProjectionStore::compress(const float* data) const { return compress(data, nullptr); }

CompressedView ProjectionStore::compress(const float* data, ThreadPool* pool) const {
  return compress(data, pool, precision_);
}

CompressedView ProjectionStore::compress(const float* data, ThreadPool* pool, fdk_precision precision) const {
  return compress(data, pool, precision, {0, height_});
}

void ProjectionStore::set_typical_rows(int rows) {
  typical_rows_ = std::clamp(rows, 0, height_);
  typical_bands_ = std::min(num_bands(), (typical_rows_ + band_rows_ - 1) / band_rows_ + 1);
}

CompressedView ProjectionStore::compress(const float* data, ThreadPool* pool, fdk_precision precision,
                                         std::array<int, 2> rows) const {
  if (precision != FDK_PRECISION_FLOAT32 && precision != FDK_PRECISION_FLOAT16)
    fail(FDK_ERROR_INVALID_ARGUMENT, "projection store: unknown precision");
  if (!data) fail(FDK_ERROR_INVALID_ARGUMENT, "projection store: null projection");
  CompressedView view;
  view.precision = precision;
  const int first = std::clamp(rows[0], 0, height_) / band_rows_;
  const int end = std::max(first, (std::clamp(rows[1], 0, height_) + band_rows_ - 1) / band_rows_);
  const int bands = end - first;
  const int tasks = pool ? std::max(1, std::min(bands, 2 * pool->size())) : 1;
  // Task t codes bands [task_band[t], task_band[t + 1]) from the worst case
  // of the bands before them (region[t]); the regions are then closed up
  // and the block shrunk to what they took. Pages past that were never
  // touched, so the worst case costs address space, not memory.
  std::vector<int> task_band;
  std::vector<size_t> region, region_end;
  std::vector<uint32_t> task_max;
  size_t worst = 0;
  try {
    view.bands_.resize(static_cast<size_t>(num_bands()));
    for (int t = 0; t <= tasks; ++t) task_band.push_back(first + bands * t / tasks);
    region.assign(static_cast<size_t>(tasks), 0);
    task_max.assign(static_cast<size_t>(tasks), 0);
    for (size_t t = 0; t < region.size(); ++t) {
      region[t] = worst;
      for (int b = task_band[t]; b < task_band[t + 1]; ++b) worst += worst_case_band_bytes(b, precision);
    }
    region_end = region;
  } catch (const std::bad_alloc&) {
    fail(FDK_ERROR_OUT_OF_MEMORY, "projection store: out of memory");
  }
  if (bands == 0) return view;
  view.block_.reset(static_cast<uint8_t*>(std::malloc(worst)));
  if (!view.block_) fail(FDK_ERROR_OUT_OF_MEMORY, "projection store: out of memory");
  const auto run = [&](int task, int) {
    const size_t t = static_cast<size_t>(task);
    task_max[t] = compress_bands(data, task_band[t], task_band[t + 1], view, region_end[t]);
  };
  if (pool)
    pool->parallel_for(tasks, run);
  else
    run(0, 0);
  size_t used = region_end[0];
  for (size_t t = 1; t < region_end.size(); ++t) {
    const size_t size = region_end[t] - region[t];
    std::memmove(view.block_.get() + used, view.block_.get() + region[t], size);
    for (int b = task_band[t]; b < task_band[t + 1]; ++b) view.bands_[static_cast<size_t>(b)].offset -= region[t] - used;
    used += size;
  }
  view.used_ = used;
  // The extents are offsets, so the block may move as it shrinks; should a
  // C library refuse to shrink it, it stays as large as it was.
  if (used < worst) {
    if (uint8_t* smaller = static_cast<uint8_t*>(std::realloc(view.block_.get(), std::max<size_t>(used, 1)))) {
      (void)view.block_.release();
      view.block_.reset(smaller);
    }
  }
  view.max_abs_bits = *std::max_element(task_max.begin(), task_max.end());
  return view;
}

size_t ProjectionStore::worst_case_band_bytes(int b, fdk_precision precision) const {
  return band_codec::header_bytes(precision) +
         static_cast<size_t>(rows_in_band(b)) * static_cast<size_t>(width_) * band_codec::sample_bytes(precision);
}

uint32_t ProjectionStore::compress_bands(const float* data, int band_begin, int band_end, CompressedView& view,
                                         size_t& at) const {
  uint32_t max_bits = 0;
  try {
    for (int b = band_begin; b < band_end; ++b) {
      const int row0 = b * band_rows_;
      const size_t n = static_cast<size_t>(rows_in_band(b)) * static_cast<size_t>(width_);
      const float* in = data + static_cast<size_t>(row0) * static_cast<size_t>(width_);
      uint8_t* out = view.block_.get() + at;
      const band_codec::Coded c = coded_.load(std::memory_order_relaxed)
                                      ? band_codec::encode(in, n, static_cast<size_t>(width_), view.precision, out)
                                      : band_codec::store_uncoded(in, n, view.precision, out);
      view.bands_[static_cast<size_t>(b)] = {at, c.size};
      at += c.size;
      max_bits = std::max(max_bits, c.max_abs_bits);
    }
  } catch (const std::bad_alloc&) {
    fail(FDK_ERROR_OUT_OF_MEMORY, "projection store: out of memory");
  }
  return max_bits;
}

void ProjectionStore::commit(int view, CompressedView&& compressed) {
  if (view < 0 || static_cast<size_t>(view) >= views_.size())
    fail(FDK_ERROR_OUT_OF_RANGE, "projection store: view index " + std::to_string(view) +
                                     " outside [0, " + std::to_string(views_.size()) + ")");
  if (compressed.num_bands() != static_cast<size_t>(num_bands()))
    fail(FDK_ERROR_INVALID_ARGUMENT, "projection store: view has the wrong number of bands");
  const uint64_t bytes = compressed.bytes();
  std::lock_guard<std::mutex> lock(mutex_);
  if (present_[static_cast<size_t>(view)])
    fail(FDK_ERROR_DUPLICATE, "projection store: view " + std::to_string(view) +
                                  " is already stored");
  max_abs_bits_[static_cast<size_t>(view)] = compressed.max_abs_bits;
  if (compressed.precision != precision_) ++views_reduced_;
  views_[static_cast<size_t>(view)] = std::move(compressed);
  present_[static_cast<size_t>(view)] = 1;
  stored_bytes_ += bytes;
  ++views_stored_;
}

// A band is kept coded only when that is smaller than the raw band.
uint64_t ProjectionStore::worst_case_view_bytes() const { return worst_case_view_bytes(precision_); }

uint64_t ProjectionStore::worst_case_view_bytes(fdk_precision precision) const {
  // A band of typical rows may straddle one more band than it fills.
  const uint64_t rows = std::min<uint64_t>(static_cast<uint64_t>(height_),
                                           static_cast<uint64_t>(typical_rows_) + static_cast<uint64_t>(band_rows_));
  return static_cast<uint64_t>(typical_bands_) * band_codec::header_bytes(precision) +
         static_cast<uint64_t>(width_) * rows * band_codec::sample_bytes(precision);
}

bool ProjectionStore::has(int view) const {
  if (view < 0 || static_cast<size_t>(view) >= views_.size()) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  return present_[static_cast<size_t>(view)] != 0;
}

uint64_t ProjectionStore::raw_bytes() const {
  return static_cast<uint64_t>(views_stored_.load()) * static_cast<uint64_t>(width_) *
         static_cast<uint64_t>(typical_rows_) * 4u;
}

float ProjectionStore::max_abs(int view) const {
  if (view < 0 || static_cast<size_t>(view) >= views_.size())
    fail(FDK_ERROR_OUT_OF_RANGE, "projection store: view index " + std::to_string(view) + " outside [0, " +
                                     std::to_string(views_.size()) + ")");
  std::lock_guard<std::mutex> lock(mutex_);
  if (!present_[static_cast<size_t>(view)])
    fail(FDK_ERROR_INVALID_STATE, "projection store: view " + std::to_string(view) + " has not been stored");
  float m;
  std::memcpy(&m, &max_abs_bits_[static_cast<size_t>(view)], sizeof m);
  return m;
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

  const size_t w = static_cast<size_t>(width_);
  try {
    for (int b = row_begin / band_rows_; b * band_rows_ < row_end; ++b) {
      const int band_row0 = b * band_rows_;
      const int band_rows = rows_in_band(b);
      const size_t n = static_cast<size_t>(band_rows) * w;
      const ByteView band = stored->band(static_cast<size_t>(b));
      if (band.empty())
        fail(FDK_ERROR_INTERNAL, "projection store: rows [" + std::to_string(band_row0) + ", " +
                                     std::to_string(band_row0 + band_rows) + ") of view " + std::to_string(view) +
                                     " were not given to this process (outside its band of rows)");
      // Only the rows of this band inside [row_begin, row_end) are unpacked.
      const int r0 = row_begin > band_row0 ? row_begin : band_row0;
      const int r1 = row_end < band_row0 + band_rows ? row_end : band_row0 + band_rows;
      band_codec::decode(band, n, w, stored->precision, static_cast<size_t>(r0 - band_row0) * w,
                         static_cast<size_t>(r1 - band_row0) * w, out + static_cast<size_t>(r0 - row_begin) * w);
    }
  } catch (const std::bad_alloc&) {
    fail(FDK_ERROR_OUT_OF_MEMORY, "projection store: out of memory");
  }
}

}  // namespace fdk
