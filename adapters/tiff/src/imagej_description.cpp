// The ImageJ ImageDescription of fdk's TIFF outputs (see tiff_io.hpp).
//
// ImageJ (and Fiji, tifffile, Bio-Formats) read the calibration from this
// text: `unit` and the X/YResolution tags (pixels per unit) give the pixel
// size, `spacing` the step between images, x/y/zorigin (in pixels) the
// physical position of the first voxel, `min`/`max` the display range.
// ImageJ reads it as Java properties and ignores keys it does not know, so
// fdk's own description of the grid follows as fdk_* keys.
#include <cmath>
#include <cstdio>

#include "fdk/adapters/tiff_io.hpp"

namespace fdk {
namespace adapters {
namespace {

std::string number(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.10g", v);
  return buffer;
}

// One line, and nothing Java's Properties would read as an escape.
std::string property_value(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
    if (c == '\\') c = '/';
  }
  return s;
}

}  // namespace

std::string imagej_description(const fdk_volume& v, const VolumeWriterOptions& o, int first_y,
                               int images, double display_min, double display_max) {
  const std::string unit = property_value(o.unit);
  std::string d = "ImageJ=1.11a\n";
  d += "images=" + std::to_string(images) + "\n";
  if (images > 1) d += "slices=" + std::to_string(images) + "\n";
  d += "unit=" + unit + "\n";
  d += "spacing=" + number(v.spacing[1]) + "\n";  // images are y planes
  d += "loop=false\n";
  if (std::isfinite(display_min) && std::isfinite(display_max) && display_max > display_min) {
    d += "min=" + number(display_min) + "\n";
    d += "max=" + number(display_max) + "\n";
  }
  // ImageJ's physical coordinate of pixel p is (p - origin) * pixel size.
  d += "xorigin=" + number(-v.origin[0] / v.spacing[0]) + "\n";
  d += "yorigin=" + number(-v.origin[2] / v.spacing[2]) + "\n";
  d += "zorigin=" + number(-(v.origin[1] + first_y * v.spacing[1]) / v.spacing[1]) + "\n";
  d += "fdk_volume_size=" + std::to_string(v.size[0]) + " " + std::to_string(v.size[1]) + " " +
       std::to_string(v.size[2]) + "\n";
  d += "fdk_volume_spacing=" + number(v.spacing[0]) + " " + number(v.spacing[1]) + " " +
       number(v.spacing[2]) + "\n";
  d += "fdk_volume_origin=" + number(v.origin[0]) + " " + number(v.origin[1]) + " " +
       number(v.origin[2]) + "\n";
  d += "fdk_axes=x across, z down, one image per y plane (axial slices)\n";
  d += "fdk_first_plane=" + std::to_string(first_y) + "\n";
  d += "fdk_first_plane_y=" + number(v.origin[1] + first_y * v.spacing[1]) + "\n";
  if (o.type == VoxelType::kUInt16) {
    d += "fdk_uint16_window=" + number(o.window_lo) + " " + number(o.window_hi) + "\n";
  }
  if (!o.description.empty()) d += "fdk_description=" + property_value(o.description) + "\n";
  return d;
}

}  // namespace adapters
}  // namespace fdk
