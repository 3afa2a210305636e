// FDK weights applied before the ramp filter (cosine, Parker short-scan,
// offset-detector) and the per-view angular weights applied at
// backprojection.
//
// Normalisation: f(x) = sum_v a_v * (sid / w)^2 * Q_v(x), with a_v = half the
// angular gap of view v (the 1/2 of the full-scan formula), Q_v the ramp
// filtered (in detector units) projection weighted by
// cos * redundancy * sdd / sid. Redundancy weights lie in [0, 2] and add up
// to 2 over conjugate rays, so that one measured ray of a pair counts fully.
#pragma once
#include <fdk/fdk.h>

#include <cstddef>
#include <vector>

#include "fdk/core/geometry.hpp"

namespace fdk {

struct RedundancyPlan {
  bool short_scan = false;
  double scan_start = 0;  // radians: angle of the first view of the arc
  double scan_range = 0;  // radians covered from the first to the last view
  double delta = 0;       // Parker's half over-scan: (range - pi) / 2
  bool offset_detector = false;
  double overlap = 0;     // half-width of the doubly measured band (physical)
  int long_side = 1;      // +1: the detector reaches further towards +u
  double principal_u = 0; // of the nominal first view, detector coordinates
};

// Decides the weighting from the nominal scan and the switches; throws
// fdk::Error (UNSUPPORTED for short scan with an offset detector, where the
// weights are not defined; INVALID_ARGUMENT for an arc shorter than pi).
RedundancyPlan plan_redundancy(const std::vector<ViewGeometry>& nominal, const fdk_detector& det,
                               fdk_switch short_scan, fdk_switch offset_detector);

// The detector that is filtered, stored and backprojected: the input
// detector, widened with zero columns on its short side for an offset
// detector so it is symmetric about the principal ray (otherwise the ramp
// filter's tails past the short edge would be lost and the half-fan
// reconstruction biased). `column_offset` receives the filtered column of the
// input's column 0.
fdk_detector filtered_detector(const RedundancyPlan& plan, const fdk_detector& input, int* column_offset);

// Per filtered column i: weight[i] = SDD * (SDD / SID) * redundancy(u_i) and
// u2[i] = u_i^2 (u about the principal point), so that a pixel's weight is
// weight[i] / sqrt(SDD^2 + v^2 + u2[i]). Shared by the CPU and GPU filters.
void column_weights(const RedundancyPlan& plan, const ViewGeometry& view, const fdk_detector& out_det,
                    double* weight, double* u2);

// Writes rows [row_begin, row_end) of weighted pixels into `out` (row j at
// out + j * out_det.size[0]) from `in` (the whole projection on the input
// detector, rows `pitch_bytes` apart); columns outside the input are 0.
void weight_projection(const RedundancyPlan& plan, const ViewGeometry& view, const fdk_detector& in_det,
                       const float* in, size_t pitch_bytes, const fdk_detector& out_det, int column_offset,
                       float* out, int row_begin, int row_end);

// a_v for every view: half its angular gap among the views that arrived
// (`arrived[v]` != 0), 0 for the others. In a short scan the arc's two ends
// use their inner gap.
std::vector<double> angular_weights(const std::vector<ViewGeometry>& views,
                                    const std::vector<unsigned char>& arrived, bool short_scan);

}  // namespace fdk
