// MetaImage writer and the shared volume writer helpers (see
// fdk/adapters/volume_writer.hpp).
#include "fdk/adapters/volume_writer.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "fdk/adapters/error.hpp"

namespace fdk {
namespace adapters {
namespace {

bool host_is_big_endian() {
  const uint32_t one = 1;
  unsigned char first;
  std::memcpy(&first, &one, 1);
  return first == 0;
}

std::string one_line(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

class MetaImageWriter final : public VolumeWriter {
 public:
  MetaImageWriter(const std::string& path, const fdk_volume& volume,
                  const VolumeWriterOptions& options)
      : volume_(volume), options_(options), file_(path, options.fault) {
    const std::string header = metaimage_header(volume, options);
    file_.write(header.data(), header.size());
  }
  ~MetaImageWriter() override { discard(); }

  void write_planes(int y_begin, int y_end, const float* data) override {
    if (y_begin != next_y_ || y_end <= y_begin || y_end > volume_.size[1]) {
      fail(ErrorKind::kInvalidArgument,
           "'" + file_.final_path() + "': planes [" + std::to_string(y_begin) + ", " +
               std::to_string(y_end) + ") out of order (next is " + std::to_string(next_y_) + ")");
    }
    const size_t count = static_cast<size_t>(y_end - y_begin) *
                         static_cast<size_t>(volume_.size[2]) *
                         static_cast<size_t>(volume_.size[0]);
    if (options_.type == VoxelType::kFloat32) {
      file_.write(data, count * sizeof(float));
    } else {
      converted_.resize(count);
      to_uint16(data, count, options_.window_lo, options_.window_hi, converted_.data());
      file_.write(converted_.data(), count * sizeof(uint16_t));
    }
    next_y_ = y_end;
  }

  void commit() override {
    if (next_y_ != volume_.size[1]) {
      fail(ErrorKind::kInvalidArgument, "'" + file_.final_path() + "': only " +
                                            std::to_string(next_y_) + " of " +
                                            std::to_string(volume_.size[1]) + " planes written");
    }
    file_.commit();
  }

  void discard() noexcept override { file_.discard(); }

  std::vector<std::string> outputs() const override { return {file_.final_path()}; }

 private:
  fdk_volume volume_;
  VolumeWriterOptions options_;
  OutputFile file_;
  int next_y_ = 0;
  std::vector<uint16_t> converted_;
};

}  // namespace

void check_volume_writer_arguments(const fdk_volume& v, const VolumeWriterOptions& o) {
  for (int a = 0; a < 3; ++a) {
    if (v.size[a] < 1 || !(v.spacing[a] > 0.0) || !std::isfinite(v.spacing[a]) ||
        !std::isfinite(v.origin[a])) {
      fail(ErrorKind::kInvalidArgument, "volume writer: bad volume size, spacing or origin");
    }
  }
  if (o.type == VoxelType::kUInt16 &&
      !(o.window_hi > o.window_lo && std::isfinite(o.window_lo) && std::isfinite(o.window_hi))) {
    fail(ErrorKind::kInvalidArgument, "volume writer: the uint16 window needs lo < hi");
  }
}

std::string metaimage_header(const fdk_volume& v, const VolumeWriterOptions& o) {
  check_volume_writer_arguments(v, o);
  char buffer[1024];
  std::string h;
  h += "ObjectType = Image\nNDims = 3\n";
  std::string comment =
      "fdk volume; memory order x fastest then z then y, so the index axes are (x, z, y) "
      "and TransformMatrix maps them to physical (x, y, z); lengths in " + one_line(o.unit);
  if (o.type == VoxelType::kUInt16) {
    std::snprintf(buffer, sizeof buffer, "; uint16 0..65535 = values %.9g..%.9g", o.window_lo,
                  o.window_hi);
    comment += buffer;
  }
  if (!o.description.empty()) comment += "; " + one_line(o.description);
  h += "Comment = " + comment + "\n";
  h += "BinaryData = True\n";
  h += std::string("BinaryDataByteOrderMSB = ") + (host_is_big_endian() ? "True" : "False") + "\n";
  h += "CompressedData = False\n";
  h += "TransformMatrix = 1 0 0 0 0 1 0 1 0\n";
  std::snprintf(buffer, sizeof buffer, "Offset = %.17g %.17g %.17g\n", v.origin[0], v.origin[1],
                v.origin[2]);
  h += buffer;
  h += "CenterOfRotation = 0 0 0\n";
  std::snprintf(buffer, sizeof buffer, "ElementSpacing = %.17g %.17g %.17g\n", v.spacing[0],
                v.spacing[2], v.spacing[1]);
  h += buffer;
  std::snprintf(buffer, sizeof buffer, "DimSize = %d %d %d\n", v.size[0], v.size[2], v.size[1]);
  h += buffer;
  h += "ElementNumberOfChannels = 1\n";
  h += std::string("ElementType = ") +
       (o.type == VoxelType::kFloat32 ? "MET_FLOAT" : "MET_USHORT") + "\n";
  h += "ElementDataFile = LOCAL\n";
  return h;
}

void to_uint16(const float* in, size_t count, double lo, double hi, uint16_t* out) {
  const double scale = 65535.0 / (hi - lo);
  for (size_t i = 0; i < count; ++i) {
    const double q = (static_cast<double>(in[i]) - lo) * scale;
    if (!(q > 0.0)) {
      out[i] = 0;  // also NaN
    } else if (q >= 65535.0) {
      out[i] = 65535;
    } else {
      out[i] = static_cast<uint16_t>(q + 0.5);
    }
  }
}

std::unique_ptr<VolumeWriter> make_metaimage_writer(const std::string& path,
                                                    const fdk_volume& volume,
                                                    const VolumeWriterOptions& options) {
  check_volume_writer_arguments(volume, options);
  return std::make_unique<MetaImageWriter>(path, volume, options);
}

}  // namespace adapters
}  // namespace fdk
