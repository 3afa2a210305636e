// The ImageJ stack (see tiff_io.hpp): one classic TIFF that ImageJ opens
// as a calibrated stack.
//
// ImageJ reads a file whose description says images=N by taking the first
// directory's strip offset and reading N images back to back from there;
// it ignores the other directories. libtiff writes each page's directory
// between the pages' pixels, so this file is written by hand: header, then
// the planes contiguously in the order they arrive, then, at commit, one
// directory per plane (the first with the description). Other readers
// (libtiff, tifffile, Bio-Formats) follow the directories as usual.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "fdk/adapters/error.hpp"
#include "fdk/adapters/tiff_io.hpp"

namespace fdk {
namespace adapters {
namespace {

constexpr uint64_t kHeaderBytes = 8;
constexpr int kEntries = 16;  // the tags of one directory (write_directory)
constexpr uint64_t kDirectoryBytes = 2 + 12 * kEntries + 4;
constexpr uint64_t kRationalBytes = 16;     // X and YResolution of one directory
constexpr uint64_t kDescriptionRoom = 4096;  // the description beyond the user's text
constexpr size_t kSampleTarget = size_t(1) << 20;

uint64_t bytes_per_voxel(const VolumeWriterOptions& o) {
  return o.type == VoxelType::kUInt16 ? 2 : 4;
}

uint64_t plane_bytes(const fdk_volume& v, const VolumeWriterOptions& o) {
  return static_cast<uint64_t>(v.size[0]) * static_cast<uint64_t>(v.size[2]) * bytes_per_voxel(o);
}

// A rational close to `value` (> 0) with numerator and denominator in
// 32 bits, for X/YResolution.
void rational(double value, uint32_t* num, uint32_t* den) {
  uint64_t d = 10000000;
  while (d > 1 && value * static_cast<double>(d) > 4.0e9) d /= 10;
  const double n = std::min(std::round(value * static_cast<double>(d)), 4294967295.0);
  *num = static_cast<uint32_t>(std::max(n, 1.0));
  *den = static_cast<uint32_t>(d);
}

class ImageJStackWriter final : public VolumeWriter {
 public:
  ImageJStackWriter(const std::string& path, const fdk_volume& v, const VolumeWriterOptions& o)
      : volume_(v), options_(o), file_(path, o.fault) {
    plane_bytes_ = plane_bytes(v, o);
    directories_at_ = kHeaderBytes + plane_bytes_ * static_cast<uint64_t>(v.size[1]);
    unsigned char header[kHeaderBytes];
    const uint16_t magic = 42;
    const uint32_t first = static_cast<uint32_t>(directories_at_);
    // The host's byte order throughout: "II" little-endian, "MM" big.
    const uint16_t probe = 1;
    unsigned char low;
    std::memcpy(&low, &probe, 1);
    header[0] = header[1] = low ? 'I' : 'M';
    std::memcpy(header + 2, &magic, 2);
    std::memcpy(header + 4, &first, 4);
    file_.write(header, sizeof header);
    const uint64_t voxels = static_cast<uint64_t>(v.size[0]) * v.size[1] * v.size[2];
    sample_stride_ = std::max<uint64_t>(1, voxels / kSampleTarget);
  }
  ~ImageJStackWriter() override { discard(); }

  void write_planes(int y_begin, int y_end, const float* data) override {
    if (y_begin != next_y_ || y_end <= y_begin || y_end > volume_.size[1]) {
      fail(ErrorKind::kInvalidArgument,
           "'" + file_.final_path() + "': planes [" + std::to_string(y_begin) + ", " +
               std::to_string(y_end) + ") out of order (next is " + std::to_string(next_y_) + ")");
    }
    const size_t n = static_cast<size_t>(y_end - y_begin) * static_cast<size_t>(volume_.size[0]) *
                     static_cast<size_t>(volume_.size[2]);
    if (options_.type == VoxelType::kFloat32) {
      // A strided sample of the volume for the display range at commit.
      const uint64_t first_voxel = static_cast<uint64_t>(y_begin) * (plane_bytes_ / 4);
      for (uint64_t i = (sample_stride_ - first_voxel % sample_stride_) % sample_stride_; i < n;
           i += sample_stride_) {
        if (std::isfinite(data[i])) sample_.push_back(data[i]);
      }
      file_.write(data, n * sizeof(float));
    } else {
      converted_.resize(n);
      to_uint16(data, n, options_.window_lo, options_.window_hi, converted_.data());
      file_.write(converted_.data(), n * sizeof(uint16_t));
    }
    next_y_ = y_end;
  }

  void commit() override {
    const int ny = volume_.size[1];
    if (next_y_ != ny) {
      fail(ErrorKind::kInvalidArgument, "'" + file_.final_path() + "': only " +
                                            std::to_string(next_y_) + " of " +
                                            std::to_string(ny) + " planes written");
    }
    double lo = 0, hi = 0;
    display_range(&lo, &hi);
    std::string description = imagej_description(volume_, options_, 0, ny, lo, hi);
    description.push_back('\0');
    // Directory y at directories_at_ + y * kDirectoryBytes; then the
    // rationals of every directory; then the description.
    const uint64_t rationals_at = directories_at_ + kDirectoryBytes * static_cast<uint64_t>(ny);
    const uint64_t description_at = rationals_at + kRationalBytes * static_cast<uint64_t>(ny);
    std::vector<unsigned char> block;
    block.reserve(static_cast<size_t>(description_at - directories_at_) + description.size());
    for (int y = 0; y < ny; ++y) {
      const uint64_t next = y + 1 < ny ? directories_at_ + kDirectoryBytes * (y + 1) : 0;
      write_directory(&block, y, rationals_at + kRationalBytes * y, description_at,
                      static_cast<uint32_t>(description.size()), next);
    }
    uint32_t xn, xd, zn, zd;
    rational(1.0 / volume_.spacing[0], &xn, &xd);
    rational(1.0 / volume_.spacing[2], &zn, &zd);
    for (int y = 0; y < ny; ++y) {
      for (uint32_t v : {xn, xd, zn, zd}) append(&block, v);
    }
    block.insert(block.end(), description.begin(), description.end());
    file_.write(block.data(), block.size());
    file_.commit();
  }

  void discard() noexcept override { file_.discard(); }
  std::vector<std::string> outputs() const override { return {file_.final_path()}; }

 private:
  template <typename T>
  static void append(std::vector<unsigned char>* out, T value) {
    unsigned char b[sizeof(T)];
    std::memcpy(b, &value, sizeof(T));
    out->insert(out->end(), b, b + sizeof(T));
  }
  // One 12-byte entry; values of up to 4 bytes sit in the entry itself,
  // left-aligned.
  static void entry(std::vector<unsigned char>* out, uint16_t tag, uint16_t type, uint32_t count,
                    uint32_t value) {
    append(out, tag);
    append(out, type);
    append(out, count);
    if (type == 3 && count == 1) {  // SHORT
      append(out, static_cast<uint16_t>(value));
      append(out, static_cast<uint16_t>(0));
    } else {
      append(out, value);
    }
  }

  void write_directory(std::vector<unsigned char>* out, int y, uint64_t rationals_at,
                       uint64_t description_at, uint32_t description_bytes, uint64_t next) const {
    const bool u16 = options_.type == VoxelType::kUInt16;
    constexpr uint16_t kShort = 3, kLong = 4, kRational = 5, kAscii = 2;
    append(out, static_cast<uint16_t>(kEntries));
    entry(out, 254, kLong, 1, 0);                                   // NewSubfileType
    entry(out, 256, kLong, 1, static_cast<uint32_t>(volume_.size[0]));  // ImageWidth
    entry(out, 257, kLong, 1, static_cast<uint32_t>(volume_.size[2]));  // ImageLength
    entry(out, 258, kShort, 1, u16 ? 16 : 32);                      // BitsPerSample
    entry(out, 259, kShort, 1, 1);                                  // Compression: none
    entry(out, 262, kShort, 1, 1);                                  // Photometric: min is black
    // Every page points at the one description (ImageJ reads the first).
    entry(out, 270, kAscii, description_bytes, static_cast<uint32_t>(description_at));
    entry(out, 273, kLong, 1, static_cast<uint32_t>(kHeaderBytes + plane_bytes_ * y));  // StripOffsets
    entry(out, 277, kShort, 1, 1);                                   // SamplesPerPixel
    entry(out, 278, kLong, 1, static_cast<uint32_t>(volume_.size[2]));  // RowsPerStrip
    entry(out, 279, kLong, 1, static_cast<uint32_t>(plane_bytes_));  // StripByteCounts
    entry(out, 282, kRational, 1, static_cast<uint32_t>(rationals_at));      // XResolution
    entry(out, 283, kRational, 1, static_cast<uint32_t>(rationals_at + 8));  // YResolution
    entry(out, 296, kShort, 1, 1);                                   // ResolutionUnit: none
    entry(out, 305, kAscii, 4, software());                          // Software "fdk"
    entry(out, 339, kShort, 1, u16 ? 1 : 3);                         // SampleFormat
    append(out, static_cast<uint32_t>(next));
  }
  static uint32_t software() {
    uint32_t v;
    std::memcpy(&v, "fdk", 4);
    return v;
  }

  void display_range(double* lo, double* hi) {
    if (options_.type == VoxelType::kUInt16) {
      *lo = 0;
      *hi = 65535;
    } else if (options_.display_window) {
      *lo = options_.window_lo;
      *hi = options_.window_hi;
    } else if (!sample_.empty()) {
      // 0.5 and 99.5 percentiles: a few hot voxels do not wash the image out.
      const size_t a = sample_.size() / 200, b = sample_.size() - 1 - sample_.size() / 200;
      std::nth_element(sample_.begin(), sample_.begin() + a, sample_.end());
      *lo = sample_[a];
      std::nth_element(sample_.begin(), sample_.begin() + b, sample_.end());
      *hi = sample_[b];
    }
  }

  fdk_volume volume_;
  VolumeWriterOptions options_;
  OutputFile file_;
  uint64_t plane_bytes_ = 0, directories_at_ = 0, sample_stride_ = 1;
  int next_y_ = 0;
  std::vector<float> sample_;
  std::vector<uint16_t> converted_;
};

}  // namespace

uint64_t imagej_stack_bytes(const fdk_volume& v, const VolumeWriterOptions& o) {
  const uint64_t ny = static_cast<uint64_t>(std::max(v.size[1], 0));
  return kHeaderBytes + plane_bytes(v, o) * ny + (kDirectoryBytes + kRationalBytes) * ny +
         kDescriptionRoom + o.description.size();
}

std::unique_ptr<VolumeWriter> make_imagej_stack_writer(const std::string& path,
                                                       const fdk_volume& volume,
                                                       const VolumeWriterOptions& options,
                                                       uint64_t classic_limit) {
  check_volume_writer_arguments(volume, options);
  if (imagej_stack_bytes(volume, options) >= std::min(classic_limit, uint64_t(1) << 32)) {
    return make_bigtiff_writer(path, volume, options);
  }
  return std::make_unique<ImageJStackWriter>(path, volume, options);
}

}  // namespace adapters
}  // namespace fdk
