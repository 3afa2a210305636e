// TIFF writing through libtiff: one file (TiffWriter) and the volume
// writers of slice stacks (see fdk/adapters/tiff_io.hpp).
#include "fdk/adapters/tiff_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>
#include <unordered_set>

#include <tiffio.h>

#include "fdk/adapters/error.hpp"
#include "libtiff_session.hpp"

namespace fdk {
namespace adapters {

using namespace tiff_detail;

// ---- writer ------------------------------------------------------------------------

struct TiffWriter::Impl {
  TiffWriteOptions options;
  std::unique_ptr<OutputFile> file;
  TIFF* tif = nullptr;
  MessageSink sink;
  std::string io_error;  // an OutputFile exception caught in a libtiff callback
  bool done = false;
  std::vector<unsigned char> chunk;

  static tmsize_t read_proc(thandle_t h, void* buf, tmsize_t size) {
    auto* s = static_cast<Impl*>(h);
    return size < 0 ? -1 : static_cast<tmsize_t>(s->file->read(buf, static_cast<size_t>(size)));
  }
  static tmsize_t write_proc(thandle_t h, void* buf, tmsize_t size) {
    auto* s = static_cast<Impl*>(h);
    if (size < 0) return -1;
    try {
      s->file->write(buf, static_cast<size_t>(size));
    } catch (const std::exception& e) {
      if (s->io_error.empty()) s->io_error = e.what();
      return -1;
    }
    return size;
  }
  static toff_t seek_proc(thandle_t h, toff_t off, int whence) {
    auto* s = static_cast<Impl*>(h);
    uint64_t base = 0;
    if (whence == SEEK_CUR) base = s->file->tell();
    else if (whence == SEEK_END) base = s->file->size();
    try {
      s->file->seek(base + off);
    } catch (const std::exception& e) {
      if (s->io_error.empty()) s->io_error = e.what();
      return static_cast<toff_t>(-1);
    }
    return base + off;
  }
  static int close_proc(thandle_t) { return 0; }
  static toff_t size_proc(thandle_t h) { return static_cast<Impl*>(h)->file->size(); }

  [[noreturn]] void fail_write(const std::string& what) {
    std::string reason = !io_error.empty() ? io_error : take_message(sink);
    const std::string path = file ? file->final_path() : std::string("?");
    discard();
    if (reason.find(path) != std::string::npos) fail(ErrorKind::kOutput, reason);
    fail(ErrorKind::kOutput, "writing '" + path + "' failed (" + what + "): " + reason);
  }

  void discard() noexcept {
    if (tif) {
      TIFFClose(tif);  // may try to write; errors are ignored here
      tif = nullptr;
    }
    if (file) file->discard();
    done = true;
  }
};

TiffWriter::TiffWriter(const std::string& path, const TiffWriteOptions& options)
    : impl_(new Impl) {
  impl_->options = options;
  if (options.tiled && (options.tile_size < 16 || options.tile_size % 16 != 0)) {
    fail(ErrorKind::kInvalidArgument, "TIFF tile size must be a positive multiple of 16");
  }
  impl_->file = std::make_unique<OutputFile>(path, options.fault);
  std::string mode = "w";
  mode += options.big_endian ? "b" : "l";
  if (options.bigtiff) mode += "8";
  impl_->tif = client_open(path.c_str(), mode.c_str(), impl_.get(), Impl::read_proc,
                           Impl::write_proc, Impl::seek_proc, Impl::close_proc, Impl::size_proc,
                           map_nothing, unmap_nothing, &impl_->sink);
  if (!impl_->tif) impl_->fail_write("opening");
}

TiffWriter::~TiffWriter() {
  if (!impl_->done) impl_->discard();
}

const std::string& TiffWriter::path() const { return impl_->file->final_path(); }

void TiffWriter::add_page(int width, int height, SampleType type, const void* samples,
                          int page_number, int page_total) {
  Impl& s = *impl_;
  if (s.done || !s.tif) fail(ErrorKind::kInvalidArgument, "TIFF writer already closed");
  if (width < 1 || height < 1 || !samples) {
    fail(ErrorKind::kInvalidArgument, "'" + path() + "': empty page");
  }
  TIFF* t = s.tif;
  const TiffWriteOptions& o = s.options;
  const size_t bps = bytes_of(type);
  const bool is_float = type == SampleType::kFloat32;
  uint16_t compression = COMPRESSION_NONE;
  if (o.compression == TiffWriteOptions::Compression::kLzw) compression = COMPRESSION_LZW;
  if (o.compression == TiffWriteOptions::Compression::kDeflate) compression = COMPRESSION_ADOBE_DEFLATE;
  bool ok = TIFFSetField(t, TIFFTAG_IMAGEWIDTH, static_cast<uint32_t>(width)) &&
            TIFFSetField(t, TIFFTAG_IMAGELENGTH, static_cast<uint32_t>(height)) &&
            TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, static_cast<uint16_t>(8 * bps)) &&
            TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, static_cast<uint16_t>(1)) &&
            TIFFSetField(t, TIFFTAG_SAMPLEFORMAT,
                         static_cast<uint16_t>(is_float ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT)) &&
            TIFFSetField(t, TIFFTAG_PHOTOMETRIC, static_cast<uint16_t>(PHOTOMETRIC_MINISBLACK)) &&
            TIFFSetField(t, TIFFTAG_PLANARCONFIG, static_cast<uint16_t>(PLANARCONFIG_CONTIG)) &&
            TIFFSetField(t, TIFFTAG_COMPRESSION, compression) &&
            TIFFSetField(t, TIFFTAG_SOFTWARE, "fdk");
  if (ok && compression != COMPRESSION_NONE) {
    ok = TIFFSetField(t, TIFFTAG_PREDICTOR,
                      static_cast<uint16_t>(is_float ? PREDICTOR_FLOATINGPOINT : PREDICTOR_HORIZONTAL));
  }
  if (ok && o.pixel_size_x_mm > 0 && o.pixel_size_y_mm > 0) {
    const double per = o.resolution_per_unit ? 1.0 : 10.0;
    ok = TIFFSetField(t, TIFFTAG_RESOLUTIONUNIT,
                      static_cast<uint16_t>(o.resolution_per_unit ? RESUNIT_NONE
                                                                  : RESUNIT_CENTIMETER)) &&
         TIFFSetField(t, TIFFTAG_XRESOLUTION, static_cast<float>(per / o.pixel_size_x_mm)) &&
         TIFFSetField(t, TIFFTAG_YRESOLUTION, static_cast<float>(per / o.pixel_size_y_mm));
  }
  if (ok && !o.description.empty()) {
    ok = TIFFSetField(t, TIFFTAG_IMAGEDESCRIPTION, o.description.c_str());
  }
  if (ok && page_total > 0) {
    ok = TIFFSetField(t, TIFFTAG_SUBFILETYPE, static_cast<uint32_t>(FILETYPE_PAGE)) &&
         TIFFSetField(t, TIFFTAG_PAGENUMBER, static_cast<uint16_t>(std::min(page_number, 65535)),
                      static_cast<uint16_t>(std::min(page_total, 65535)));
  }
  const auto* src = static_cast<const unsigned char*>(samples);
  const size_t row_bytes = static_cast<size_t>(width) * bps;
  if (ok && o.tiled) {
    const uint32_t ts = static_cast<uint32_t>(o.tile_size);
    ok = TIFFSetField(t, TIFFTAG_TILEWIDTH, ts) && TIFFSetField(t, TIFFTAG_TILELENGTH, ts);
    if (!ok) s.fail_write("tags");
    s.chunk.resize(static_cast<size_t>(ts) * ts * bps);
    for (uint32_t y0 = 0; y0 < static_cast<uint32_t>(height); y0 += ts) {
      for (uint32_t x0 = 0; x0 < static_cast<uint32_t>(width); x0 += ts) {
        std::fill(s.chunk.begin(), s.chunk.end(), 0);
        const size_t cols = std::min<size_t>(ts, static_cast<size_t>(width) - x0);
        const size_t rows = std::min<size_t>(ts, static_cast<size_t>(height) - y0);
        for (size_t r = 0; r < rows; ++r) {
          std::memcpy(s.chunk.data() + r * ts * bps, src + (y0 + r) * row_bytes + x0 * bps,
                      cols * bps);
        }
        if (TIFFWriteEncodedTile(t, TIFFComputeTile(t, x0, y0, 0, 0), s.chunk.data(),
                                 static_cast<tmsize_t>(s.chunk.size())) < 0) {
          s.fail_write("tile data");
        }
      }
    }
  } else if (ok) {
    uint32_t rps = o.rows_per_strip > 0 ? static_cast<uint32_t>(o.rows_per_strip)
                                        : static_cast<uint32_t>(std::max<size_t>(1, 65536 / row_bytes));
    rps = std::min(rps, static_cast<uint32_t>(height));
    if (!TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, rps)) s.fail_write("tags");
    for (uint32_t y0 = 0, strip = 0; y0 < static_cast<uint32_t>(height); y0 += rps, ++strip) {
      const size_t rows = std::min<size_t>(rps, static_cast<size_t>(height) - y0);
      // libtiff may modify the buffer (predictor, byte swapping): copy.
      s.chunk.assign(src + y0 * row_bytes, src + (y0 + rows) * row_bytes);
      if (TIFFWriteEncodedStrip(t, strip, s.chunk.data(), static_cast<tmsize_t>(s.chunk.size())) < 0) {
        s.fail_write("strip data");
      }
    }
  }
  if (!ok) s.fail_write("tags");
  if (!TIFFWriteDirectory(t)) s.fail_write("directory");
}

void TiffWriter::commit(bool defer_rename) {
  Impl& s = *impl_;
  if (s.done || !s.tif) fail(ErrorKind::kInvalidArgument, "TIFF writer already closed");
  if (!TIFFFlush(s.tif) || !s.io_error.empty()) s.fail_write("flush");
  TIFFClose(s.tif);
  s.tif = nullptr;
  if (!s.io_error.empty()) s.fail_write("close");
  try {
    s.file->commit(defer_rename);
  } catch (...) {
    s.discard();
    throw;
  }
  s.done = true;
}

void TiffWriter::rename_to_final() { impl_->file->rename_to_final(); }

void TiffWriter::discard() noexcept { impl_->discard(); }

void write_tiff_float(const std::string& path, int width, int height,
                      const std::vector<const float*>& pages, const TiffWriteOptions& options) {
  TiffWriter w(path, options);
  for (size_t p = 0; p < pages.size(); ++p) {
    w.add_page(width, height, SampleType::kFloat32, pages[p],
               pages.size() > 1 ? static_cast<int>(p) : 0,
               pages.size() > 1 ? static_cast<int>(pages.size()) : 0);
  }
  w.commit();
}

// ---- volume writers -------------------------------------------------------------------

std::string slice_file_name(const std::string& prefix, int y, int planes) {
  int digits = 1;
  for (int n = std::max(planes - 1, 1); n >= 10; n /= 10) ++digits;
  digits = std::max(digits, 4);
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "_%0*d.tif", digits, y);
  return prefix + buffer;
}

namespace {

// The smallest and largest finite values (ImageJ's own default display
// range for a float image); 0, 0 when there are none.
void finite_range(const float* p, size_t n, double* lo, double* hi) {
  float a = INFINITY, b = -INFINITY;
  for (size_t i = 0; i < n; ++i) {
    if (std::isfinite(p[i])) {
      a = std::min(a, p[i]);
      b = std::max(b, p[i]);
    }
  }
  *lo = a <= b ? a : 0.0;
  *hi = a <= b ? b : 0.0;
}

class TiffVolumeWriterBase : public VolumeWriter {
 protected:
  TiffVolumeWriterBase(const fdk_volume& v, const VolumeWriterOptions& o,
                       TiffWriteOptions::Compression c)
      : volume_(v), options_(o) {
    tiff_.compression = c;
    tiff_.pixel_size_x_mm = v.spacing[0];
    tiff_.pixel_size_y_mm = v.spacing[2];
    tiff_.resolution_per_unit = true;
    tiff_.fault = o.fault;
  }
  // The display range when the options fix it (uint16, or a window).
  bool fixed_display_range(double* lo, double* hi) const {
    if (options_.type == VoxelType::kUInt16) {
      *lo = 0;
      *hi = 65535;
      return true;
    }
    *lo = options_.window_lo;
    *hi = options_.window_hi;
    return options_.display_window;
  }
  void check_order(int y_begin, int y_end, const std::string& name) {
    if (y_begin != next_y_ || y_end <= y_begin || y_end > volume_.size[1]) {
      fail(ErrorKind::kInvalidArgument,
           "'" + name + "': planes [" + std::to_string(y_begin) + ", " + std::to_string(y_end) +
               ") out of order (next is " + std::to_string(next_y_) + ")");
    }
  }
  const void* plane_samples(const float* plane, SampleType* type) {
    const size_t n = static_cast<size_t>(volume_.size[0]) * static_cast<size_t>(volume_.size[2]);
    if (options_.type == VoxelType::kFloat32) {
      *type = SampleType::kFloat32;
      return plane;
    }
    converted_.resize(n);
    to_uint16(plane, n, options_.window_lo, options_.window_hi, converted_.data());
    *type = SampleType::kUInt16;
    return converted_.data();
  }
  size_t plane_size() const {
    return static_cast<size_t>(volume_.size[0]) * static_cast<size_t>(volume_.size[2]);
  }

  fdk_volume volume_;
  VolumeWriterOptions options_;
  TiffWriteOptions tiff_;
  int next_y_ = 0;
  std::vector<uint16_t> converted_;
};

class SliceStackWriter final : public TiffVolumeWriterBase {
 public:
  SliceStackWriter(const std::string& folder, const std::string& prefix, const fdk_volume& v,
                   const VolumeWriterOptions& o, TiffWriteOptions::Compression c, int y_begin,
                   int y_end)
      : TiffVolumeWriterBase(v, o, c), folder_(folder), prefix_(prefix), y_begin_(y_begin),
        y_end_(y_end) {
    next_y_ = y_begin;
  }
  ~SliceStackWriter() override { discard(); }

  void write_planes(int y_begin, int y_end, const float* data) override {
    check_order(y_begin, y_end, join_path(folder_, prefix_));
    if (y_end > y_end_) {
      fail(ErrorKind::kInvalidArgument, "'" + join_path(folder_, prefix_) + "': planes beyond " +
                                            std::to_string(y_end_) + " belong to another writer");
    }
    for (int y = y_begin; y < y_end; ++y) {
      const std::string path = join_path(folder_, slice_file_name(prefix_, y, volume_.size[1]));
      const float* plane = data + static_cast<size_t>(y - y_begin) * plane_size();
      double lo, hi;
      if (!fixed_display_range(&lo, &hi)) finite_range(plane, plane_size(), &lo, &hi);
      TiffWriteOptions t = tiff_;
      t.description = imagej_description(volume_, options_, y, 1, lo, hi);
      auto w = std::make_unique<TiffWriter>(path, t);
      SampleType type;
      const void* samples = plane_samples(plane, &type);
      w->add_page(volume_.size[0], volume_.size[2], type, samples);
      w->commit(/*defer_rename=*/true);
      files_.push_back(std::move(w));
      next_y_ = y + 1;
    }
  }

  void commit() override {
    if (next_y_ != y_end_) {
      fail(ErrorKind::kInvalidArgument, "slice stack '" + join_path(folder_, prefix_) +
                                            "': only " + std::to_string(next_y_ - y_begin_) + " of " +
                                            std::to_string(y_end_ - y_begin_) + " planes written");
    }
    size_t renamed = 0;
    try {
      for (auto& f : files_) {
        f->rename_to_final();
        ++renamed;
      }
    } catch (...) {
      // Take back the ones already renamed: no stack that looks complete.
      for (size_t i = 0; i < renamed; ++i) std::remove(files_[i]->path().c_str());
      remove_all();
      throw;
    }
    committed_ = true;
  }

  void discard() noexcept override {
    if (!committed_) remove_all();
  }

  std::vector<std::string> outputs() const override {
    return {join_path(folder_, slice_file_name(prefix_, y_begin_, volume_.size[1])),
            join_path(folder_, slice_file_name(prefix_, y_end_ - 1, volume_.size[1]))};
  }

 private:
  void remove_all() noexcept {
    for (auto& f : files_) f->discard();  // removes the temporary files
    files_.clear();
  }

  std::string folder_, prefix_;
  int y_begin_, y_end_;  // the planes this writer writes (a rank's share, or all)
  std::vector<std::unique_ptr<TiffWriter>> files_;
  bool committed_ = false;
};

class BigTiffWriter final : public TiffVolumeWriterBase {
 public:
  BigTiffWriter(const std::string& path, const fdk_volume& v, const VolumeWriterOptions& o,
                TiffWriteOptions::Compression c)
      : TiffVolumeWriterBase(v, o, c), path_(path) {
    TiffWriteOptions t = tiff_;
    t.bigtiff = true;
    double lo, hi;
    if (!fixed_display_range(&lo, &hi)) lo = hi = 0;  // none: the planes are not seen yet
    t.description = imagej_description(volume_, options_, 0, volume_.size[1], lo, hi);
    writer_ = std::make_unique<TiffWriter>(path, t);
  }
  ~BigTiffWriter() override { discard(); }

  void write_planes(int y_begin, int y_end, const float* data) override {
    check_order(y_begin, y_end, path_);
    for (int y = y_begin; y < y_end; ++y) {
      SampleType type;
      const void* samples =
          plane_samples(data + static_cast<size_t>(y - y_begin) * plane_size(), &type);
      writer_->add_page(volume_.size[0], volume_.size[2], type, samples, y, volume_.size[1]);
      next_y_ = y + 1;
    }
  }

  void commit() override {
    if (next_y_ != volume_.size[1]) {
      fail(ErrorKind::kInvalidArgument, "'" + path_ + "': only " + std::to_string(next_y_) +
                                            " of " + std::to_string(volume_.size[1]) +
                                            " planes written");
    }
    writer_->commit();
  }
  void discard() noexcept override { writer_->discard(); }
  std::vector<std::string> outputs() const override { return {path_}; }

 private:
  std::string path_;
  std::unique_ptr<TiffWriter> writer_;
};

}  // namespace

std::unique_ptr<VolumeWriter> make_tiff_slice_writer(const std::string& folder,
                                                     const std::string& prefix,
                                                     const fdk_volume& volume,
                                                     const VolumeWriterOptions& options,
                                                     TiffWriteOptions::Compression compression) {
  check_volume_writer_arguments(volume, options);
  if (!is_directory(folder)) {
    fail(ErrorKind::kOutput, "output folder '" + folder + "' does not exist");
  }
  return std::make_unique<SliceStackWriter>(folder, prefix, volume, options, compression, 0,
                                            volume.size[1]);
}

std::unique_ptr<VolumeWriter> make_tiff_slice_range_writer(const std::string& folder,
                                                           const std::string& prefix,
                                                           const fdk_volume& volume,
                                                           const VolumeWriterOptions& options,
                                                           TiffWriteOptions::Compression compression,
                                                           int y_begin, int y_end) {
  check_volume_writer_arguments(volume, options);
  if (y_begin < 0 || y_end <= y_begin || y_end > volume.size[1]) {
    fail(ErrorKind::kInvalidArgument, "slice range [" + std::to_string(y_begin) + ", " +
                                          std::to_string(y_end) + ") is not inside the volume's " +
                                          std::to_string(volume.size[1]) + " planes");
  }
  if (!is_directory(folder)) {
    fail(ErrorKind::kOutput, "output folder '" + folder + "' does not exist");
  }
  return std::make_unique<SliceStackWriter>(folder, prefix, volume, options, compression, y_begin,
                                            y_end);
}

std::unique_ptr<VolumeWriter> make_bigtiff_writer(const std::string& path,
                                                  const fdk_volume& volume,
                                                  const VolumeWriterOptions& options,
                                                  TiffWriteOptions::Compression compression) {
  check_volume_writer_arguments(volume, options);
  return std::make_unique<BigTiffWriter>(path, volume, options, compression);
}

}  // namespace adapters
}  // namespace fdk
