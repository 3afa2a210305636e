// The preview image of fdk-convert: the three central orthogonal slices
// side by side, windowed to 8 bits, written as PNG (PGM without libpng).
#pragma once

#include <fdk/fdk.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fdk_tools {

// Collects the three central slices while slabs stream past, subsampled so
// no panel side exceeds `max_side` pixels.
class PreviewCollector {
 public:
  PreviewCollector(const fdk_volume& volume, int max_side = 768);
  // Planes [y_begin, y_end) of the volume (x fastest, then z).
  void add_planes(int y_begin, int y_end, const float* data);
  // Writes `path` + (".png" or ".pgm"); returns the path written. The window
  // is [lo, hi]; lo >= hi picks the 0.5 and 99.5 percentiles. Throws
  // fdk::adapters::Error(kOutput).
  std::string write(const std::string& path_without_extension, double lo, double hi) const;

 private:
  fdk_volume v_;
  int step_;      // subsampling
  int px_, py_, pz_;  // panel sizes after subsampling along x, y, z
  std::vector<float> axial_, coronal_, sagittal_;
};

}  // namespace fdk_tools
