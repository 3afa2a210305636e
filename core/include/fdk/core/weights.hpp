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

#include <array>
#include <cstddef>
#include <vector>

#include "fdk/core/geometry.hpp"

namespace fdk {

struct RedundancyPlan {
  bool short_scan = false;
  double scan_start = 0;  // radians: angle of the first view of the arc
  double scan_range = 0;  // radians covered from the first to the last view
  double delta = 0;       // Parker's half over-scan: (range - pi) / 2
  // Half-fan (offset detector), as rtkfdk (RTK's DisplacedDetectorFor-
  // OffsetFieldOfViewImageFilter, for a field of view centred on the
  // axis): the signed distances from the rotation axis of the rays through
  // the detector's first and last pixel centres, the innermost over the
  // views (the field of view's radius on each side; < 0 on the -u side).
  double inferior = 0, superior = 0;
  // rtkfdk's rule: the detector is displaced when the two radii differ by
  // at least 10 % of their mean: 200 |superior + inferior| >= 10
  // (superior - inferior).
  bool displaced = false;
  bool offset_detector = false;  // half-fan weights applied
  double overlap = 0;     // the doubly measured band's half-width: the smaller radius
  int long_side = 1;      // +1: the detector reaches further towards +u
};

// Decides the weighting from the nominal scan and the switches; throws
// fdk::Error (INVALID_ARGUMENT for an arc shorter than pi, or for half-fan
// weights forced on while the ray through the rotation axis misses the
// detector; on AUTO such a detector stays full fan).
// Short-scan and half-fan weights combine (their product, as RTK's rtkfdk
// applies them one after the other).
RedundancyPlan plan_redundancy(const std::vector<ViewGeometry>& nominal, const fdk_detector& det,
                               fdk_switch short_scan, fdk_switch offset_detector);

// The detector that is filtered, stored and backprojected: the input
// detector, widened with zero columns on its short side for an offset
// detector so that it reaches the mirror image (in fan angle about the axis
// ray) of its long edge in every nominal view (otherwise the ramp filter's
// tails past the short edge would be lost and the half-fan reconstruction
// biased); at most the input's width is added. `column_offset` receives the
// filtered column of the input's column 0.
fdk_detector filtered_detector(const RedundancyPlan& plan, const std::vector<ViewGeometry>& nominal,
                               const fdk_detector& input, int* column_offset);

// The columns of the filtered detector, [first, last] (fractional), where
// view `view` measures what the reconstruction uses: the input detector's
// pixel centres, or for half-fan the band from the mirror image of the long
// edge's centre to that centre (both sides of the axis ray are then known,
// one of them through the conjugate rays).
std::array<double, 2> used_columns(const RedundancyPlan& plan, const ViewGeometry& view,
                                   const fdk_detector& input, int column_offset);

// Per filtered column i: weight[i] = SDD * (SDD / SID) * redundancy(u_i) *
// RTK's source-offset terms, and u2[i] = u_i^2 (u about the principal
// point), so that a pixel's weight is weight[i] / sqrt(SDD^2 + v^2 + u2[i]).
// The redundancy weights take the fan angle from the axis ray. Shared by
// the CPU and GPU filters.
void column_weights(const RedundancyPlan& plan, const ViewGeometry& view, const fdk_detector& out_det,
                    double* weight, double* u2);

// Writes rows [row_begin, row_end) of weighted pixels into `out` (row j at
// out + j * out_det.size[0]) from `in` (the whole projection on the input
// detector, rows `pitch_bytes` apart); columns outside the input are 0.
void weight_projection(const RedundancyPlan& plan, const ViewGeometry& view, const fdk_detector& in_det,
                       const float* in, size_t pitch_bytes, const fdk_detector& out_det, int column_offset,
                       float* out, int row_begin, int row_end);

// a_v for every view: half its angular gap (of source angles, as RTK) among
// the views that arrived (`arrived[v]` != 0), 0 for the others. In a short
// scan the arc's two ends use their inner gap.
std::vector<double> angular_weights(const std::vector<ViewGeometry>& views,
                                    const std::vector<unsigned char>& arrived, bool short_scan);

}  // namespace fdk
