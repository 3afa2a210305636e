// The NRRD writer (see fdk/adapters/volume_writer.hpp): one .nrrd file, a
// text header and the raw voxels in (x, y, z) order.
#include <cstdio>

#include "fdk/adapters/volume_writer.hpp"
#include "xyz_raw_writer.hpp"

namespace fdk {
namespace adapters {

std::string nrrd_header(const fdk_volume& v, const VolumeWriterOptions& o) {
  check_volume_writer_arguments(v, o);
  const auto n = detail::exact_number;
  char buffer[512];
  std::string h = "NRRD0004\n";
  h += "# fdk volume; lengths in " + detail::one_line(o.unit) + "\n";
  if (!o.description.empty()) h += "# " + detail::one_line(o.description) + "\n";
  h += o.type == VoxelType::kFloat32 ? "type: float\n" : "type: uint16\n";
  h += "dimension: 3\n";
  // ITK's physical frame is LPS and its NRRD reader takes an LPS space as
  // is, so this gives ITK the origin, spacing and identity direction that
  // the MetaImage gives it.
  h += "space: left-posterior-superior\n";
  std::snprintf(buffer, sizeof buffer, "sizes: %d %d %d\n", v.size[0], v.size[1], v.size[2]);
  h += buffer;
  h += "space directions: (" + n(v.spacing[0]) + ",0,0) (0," + n(v.spacing[1]) + ",0) (0,0," +
       n(v.spacing[2]) + ")\n";
  h += "kinds: domain domain domain\n";
  h += std::string("endian: ") + (detail::host_is_big_endian() ? "big" : "little") + "\n";
  h += "encoding: raw\n";
  h += "space origin: (" + n(v.origin[0]) + "," + n(v.origin[1]) + "," + n(v.origin[2]) + ")\n";
  if (o.type == VoxelType::kUInt16) {
    std::snprintf(buffer, sizeof buffer, "fdk_window:=%.9g %.9g\n", o.window_lo, o.window_hi);
    h += buffer;
  }
  h += "\n";  // the blank line that ends the header
  return h;
}

std::unique_ptr<VolumeWriter> make_nrrd_writer(const std::string& path, const fdk_volume& volume,
                                               const VolumeWriterOptions& options) {
  return detail::make_xyz_raw_writer(path, nrrd_header(volume, options), "", volume, options);
}

}  // namespace adapters
}  // namespace fdk
