// The in-plane tilt from the mirror symmetry of a full scan's sum of views
// (axis_symmetry.hpp), on the estimator's kept bands or on every row
// (row_sums.hpp): GeometryEstimator's tilt where the conjugate rays leave it
// loose, and its check where they pin it. Internal to core/: not a header
// of the library's interface.
#pragma once
#include <fdk/fdk.h>

#include <memory>
#include <vector>

#include "row_sums.hpp"

namespace fdk {
class ThreadPool;
namespace conjugate {
struct RowPlan;
struct KeptView;
}  // namespace conjugate
}  // namespace fdk

namespace fdk::symmetry {

// A mirror fit's tilt: its sigma is the larger of the fit's (axis_symmetry:
// residual, curvature, a coarser blur's change) and half the difference
// between the fits of the views' two halves (each a full circle too).
struct MirrorTilt {
  bool found = false;
  double tilt_deg = 0, sigma_deg = 0;
  int views = 0;
  bool every_row = false;  // fitted on every row the object spans, not the bands
};

// On the kept bands' rows of the views present (`kept`, null where
// missing), where each half of them (every other one by angle) covers the
// full circle; columns binned to at most 256. `axis_column`: where the
// search starts, at the principal point's row.
MirrorTilt bands_mirror_tilt(const conjugate::RowPlan& plan,
                             const std::vector<std::shared_ptr<const conjugate::KeptView>>& kept,
                             const std::vector<fdk_view>& views, const fdk_detector& d, double axis_column,
                             ThreadPool* pool);

// On the rows the object spans of `h` (every row of the views kept,
// summed): about 40 binned rows compared.
MirrorTilt rows_mirror_tilt(const RowSums::Halves& h, const fdk_view& view, const fdk_detector& d,
                            double axis_column, ThreadPool* pool);

}  // namespace fdk::symmetry
