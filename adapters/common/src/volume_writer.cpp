// MetaImage writer and the shared volume writer helpers (see
// fdk/adapters/volume_writer.hpp).
#include "fdk/adapters/volume_writer.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "fdk/adapters/error.hpp"
#include "xyz_raw_writer.hpp"

namespace fdk {
namespace adapters {
using detail::host_is_big_endian;
using detail::one_line;

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

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

std::string metaimage_header(const fdk_volume& v, const VolumeWriterOptions& o,
                             const std::string& data_file) {
  check_volume_writer_arguments(v, o);
  char buffer[1024];
  std::string h;
  h += "ObjectType = Image\nNDims = 3\n";
  std::string comment = "fdk volume; lengths in " + one_line(o.unit);
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
  // The fields and their order are those ITK (and so rtkfdk) writes.
  h += "TransformMatrix = 1 0 0 0 1 0 0 0 1\n";
  const auto n = detail::exact_number;
  h += "Offset = " + n(v.origin[0]) + " " + n(v.origin[1]) + " " + n(v.origin[2]) + "\n";
  h += "CenterOfRotation = 0 0 0\n";
  h += "AnatomicalOrientation = RAI\n";
  h += "ElementSpacing = " + n(v.spacing[0]) + " " + n(v.spacing[1]) + " " + n(v.spacing[2]) + "\n";
  std::snprintf(buffer, sizeof buffer, "DimSize = %d %d %d\n", v.size[0], v.size[1], v.size[2]);
  h += buffer;
  h += "ElementNumberOfChannels = 1\n";
  h += std::string("ElementType = ") +
       (o.type == VoxelType::kFloat32 ? "MET_FLOAT" : "MET_USHORT") + "\n";
  h += "ElementDataFile = " + one_line(data_file) + "\n";
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
  if (ends_with(path, ".mhd")) {
    const std::string raw = path.substr(0, path.size() - 4) + ".raw";
    return detail::make_xyz_raw_writer(path, metaimage_header(volume, options, base_name(raw)),
                                       raw, volume, options);
  }
  return detail::make_xyz_raw_writer(path, metaimage_header(volume, options), "", volume,
                                     options);
}

}  // namespace adapters
}  // namespace fdk
