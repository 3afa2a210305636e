// The store of filtered projections in host memory: each view is cut into
// bands of `band_rows` detector rows, each band kept on its own, so a slab
// reads only the rows it needs. A band is byte-shuffled; when the scan
// would not fit its budget otherwise (set_coded), its byte planes are also
// coded apart (zstd, Huffman through zstd, or stored as they are when they
// are noise), which is what filtered data, noisy below its top mantissa
// bits, compresses fastest with.
// float32 is bit-exact; float16 stores each band scaled by a power of two
// (no overflow, exact scaling) and is bounded by kFloat16RelBound and
// kFloat16AbsBoundFactor (see fdk_store_info).
#pragma once
#include <fdk/fdk.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace fdk {

class ThreadPool;

// A band's bytes, read-only.
struct ByteView {
  const uint8_t* data = nullptr;
  size_t size = 0;
  bool empty() const { return size == 0; }
  uint8_t operator[](size_t i) const { return data[i]; }
};

// One view, compressed, not yet in the store (so a caller can check the
// memory budget before committing it). Its bands lie back to back in one
// block of memory: with a block per band (256 of them in a 4096-row view),
// a process that had freed no large block before its scan had glibc map
// each band afresh, and mmap's process-wide lock held the coding threads
// up (docs/DECISIONS.md, "One block per stored view").
class CompressedView {
 public:
  CompressedView() = default;
  CompressedView(const CompressedView& other);
  CompressedView& operator=(const CompressedView& other);
  CompressedView(CompressedView&&) noexcept = default;
  CompressedView& operator=(CompressedView&&) noexcept = default;

  size_t num_bands() const { return bands_.size(); }
  // Band b's bytes; empty where it was not coded (outside the rows given).
  ByteView band(size_t b) const { return {block_.get() + bands_[b].offset, bands_[b].size}; }
  // For tests of a damaged store: band b's bytes to overwrite, and its end
  // moved back.
  uint8_t* band_bytes(size_t b) { return block_.get() + bands_[b].offset; }
  void truncate_band(size_t b, size_t size);
  uint64_t bytes() const;

  uint32_t max_abs_bits = 0;  // the largest |value| before coding, as float bits
  fdk_precision precision = FDK_PRECISION_FLOAT32;  // how its bands are coded

 private:
  friend class ProjectionStore;
  struct Extent {
    size_t offset = 0, size = 0;
  };
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t[], Free> block_;
  size_t used_ = 0;  // bytes of block_ the bands take, back to back
  std::vector<Extent> bands_;
};

class ProjectionStore {
 public:
  static constexpr double kFloat16RelBound = 1.0 / 2048;      // 2^-11
  static constexpr double kFloat16AbsBoundFactor = 1.0 / 16777216;  // 2^-24

  ProjectionStore(int width, int height, int num_views, fdk_precision precision,
                  int band_rows = 16);

  int width() const { return width_; }
  int height() const { return height_; }
  int band_rows() const { return band_rows_; }
  int num_bands() const { return (height_ + band_rows_ - 1) / band_rows_; }
  fdk_precision precision() const { return precision_; }

  // Pure function of its input; safe on many threads at once. `data` holds
  // height rows of width floats, contiguous. Each calling thread keeps its
  // zstd contexts and band-sized scratch buffers for the next call (about
  // 550 KB for bands of 16 rows of 1024 pixels).
  CompressedView compress(const float* data) const;
  // The same, bands spread over `pool` (null: the calling thread).
  CompressedView compress(const float* data, ThreadPool* pool) const;
  // At `precision` rather than the store's (float16 where the store is
  // float32: a view reduced to fit the budget; read back the same way).
  // Only the bands that meet rows [rows[0], rows[1]) when given (a process
  // that holds one band of rows, libfdk_mpi): the others stay empty, and
  // reading them is an error.
  CompressedView compress(const float* data, ThreadPool* pool, fdk_precision precision) const;
  CompressedView compress(const float* data, ThreadPool* pool, fdk_precision precision,
                          std::array<int, 2> rows) const;
  // The rows a view typically holds (all by default): what the worst case
  // and raw_bytes count.
  void set_typical_rows(int rows);
  // Takes ownership. Thread-safe. The view must not be stored already.
  void commit(int view, CompressedView&& compressed);
  bool has(int view) const;

  // Decompresses rows [row_begin, row_end) of `view` into out (row r at
  // out + (r - row_begin) * width). Thread-safe; reads only the bands that
  // overlap the range; each calling thread keeps a zstd context and a band's
  // scratch. Throws fdk::Error if the view is absent.
  void read_rows(int view, int row_begin, int row_end, float* out) const;

  // The largest |value| of `view` as it was stored (before float16
  // rounding), over all its rows: what a reader of row windows scales by
  // when its result must not depend on the window. Throws fdk::Error if
  // the view is absent.
  float max_abs(int view) const;

  // The most one compressed view can take (bands stored raw when zstd does
  // not shrink them), at the store's precision or at `precision`.
  uint64_t worst_case_view_bytes() const;
  uint64_t worst_case_view_bytes(fdk_precision precision) const;
  // Whether views are coded (the default) or stored byte-shuffled as they
  // are: coding costs ~25 ms of a core per 16 MiB view for a ratio near 1.2
  // on noisy data, which only a scan that would not fit otherwise needs
  // (docs/DECISIONS.md, "Coding only when the budget needs it"). Set before
  // the first compress; reading handles both.
  void set_coded(bool coded) { coded_.store(coded); }
  bool coded() const { return coded_.load(); }
  // Views stored at a lower precision than the store's.
  int views_reduced() const { return views_reduced_.load(); }

  uint64_t stored_bytes() const { return stored_bytes_.load(); }
  uint64_t raw_bytes() const;  // views stored * width * height * 4
  int views_stored() const { return views_stored_.load(); }

 private:
  // Codes bands [band_begin, band_end) into `view`'s block, back to back
  // from byte `at` (room for their worst case), and returns their largest
  // |value| (float bits); `at` ends past the last.
  uint32_t compress_bands(const float* data, int band_begin, int band_end, CompressedView& view, size_t& at) const;
  // The most band b can take at `precision`: its raw bytes and a header.
  size_t worst_case_band_bytes(int b, fdk_precision precision) const;
  // Rows in band b (the last band may be short).
  int rows_in_band(int b) const { return std::min(band_rows_, height_ - b * band_rows_); }
  std::atomic<int> views_reduced_{0};
  std::atomic<bool> coded_{true};

  int width_, height_, band_rows_;
  int typical_bands_ = 0, typical_rows_ = 0;  // set_typical_rows
  fdk_precision precision_;
  std::vector<CompressedView> views_;
  std::vector<uint8_t> present_;
  std::vector<uint32_t> max_abs_bits_;
  mutable std::mutex mutex_;
  std::atomic<uint64_t> stored_bytes_{0};
  std::atomic<int> views_stored_{0};
};

}  // namespace fdk
