// The geometry matrix: one case per kind of real scanner geometry, each a
// list of RTK views on one detector. Every case reconstructs the same
// 128^3 grid of 1.6 mm around the same Shepp-Logan phantom.
#pragma once

#include <string>
#include <vector>

#include "fdk/fdk.h"

namespace agreement {

struct Case {
  std::string name;
  std::string what;            // one line for the table
  fdk_detector detector{};
  std::vector<fdk_view> views;
  bool matrices = false;       // reconstructed from 3x4 matrices (FDK_SCAN_MATRICES)
  double hann = 0;             // rtkfdk --hann: FDK_WINDOW_HANN at this cutoff (0: Ram-Lak)
  double hann_y = 0;           // rtkfdk --hannY: fdk_config.hann_cutoff_v
  // fdk_config.offset_detector: rtkfdk applies its half-fan rule to short
  // scans too, which fdk's AUTO does not (ON reproduces it).
  int32_t offset_detector = FDK_AUTO;
};

constexpr int kN = 128;
constexpr double kVoxel = 1.6;
constexpr double kPhantomScale = 90.0;

std::vector<Case> all_cases();
fdk_volume case_volume();

}  // namespace agreement
