// The preview image of fdk-convert and fdk-scan-sim: three orthogonal slices side by side
// (central ones by default), windowed to 8 bits, each labelled with its
// plane, a scale bar on the axial slice and a caption of the scan's figures
// and the window; written as PNG (PGM without libpng).
#pragma once

#include <fdk/adapters/files.hpp>
#include <fdk/fdk.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace fdk_tools {

struct PreviewWritten {
  std::string path;
  double lo = 0, hi = 0;  // the window used
  bool percentiles = false;  // chosen from the slices' 0.5 and 99.5 percentiles
};

// The preview's file name in the output folder: "preview.png" ("preview.pgm"
// in a build without libpng).
std::string preview_file_name();

// Collects three orthogonal slices while slabs stream past, subsampled so no
// panel side exceeds `max_side` pixels.
class PreviewCollector {
 public:
  // The slices cross at voxel `at` (x, y, z indices); the volume's centre
  // when an index is outside the volume (e.g. -1).
  PreviewCollector(const fdk_volume& volume, std::array<int, 3> at = {-1, -1, -1},
                   int max_side = 768);
  // Where the three slices cross (x, y, z in mm: the voxel's centre).
  std::array<double, 3> crossing_mm() const;
  // Planes [y_begin, y_end) of the volume (x fastest, then z).
  void add_planes(int y_begin, int y_end, const float* data);
  // The three slices' pixels (axial, coronal, sagittal), zero where no
  // planes were added: ranks that each added their own planes sum them to
  // get the whole preview without sending slabs.
  std::array<std::vector<float>*, 3> panels() { return {&axial_, &coronal_, &sagittal_}; }
  // Writes `path` + (".png" or ".pgm"). The window is [lo, hi]; lo >= hi
  // picks the slices' 0.5 and 99.5 percentiles. `caption` lines go under the
  // slices (wrapped at spaces), followed by a line giving the window. Throws
  // fdk::adapters::Error(kOutput). `fault` is the writers' test hook.
  PreviewWritten write(const std::string& path_without_extension, double lo, double hi,
                       const std::vector<std::string>& caption = {},
                       fdk::adapters::WriteFaultInjection* fault = nullptr) const;

 private:
  fdk_volume v_;
  std::array<int, 3> at_;
  int step_;      // subsampling
  int px_, py_, pz_;  // panel sizes after subsampling along x, y, z
  std::vector<float> axial_, coronal_, sagittal_;
};

}  // namespace fdk_tools
