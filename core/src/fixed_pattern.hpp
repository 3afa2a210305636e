// A detector's fixed pattern in the views the geometry estimate keeps, and
// the orbit band's rows with it taken out (GeometryEstimator checks a full
// scan's offset on them; geometry_estimator.cpp).
#pragma once
#include <fdk/fdk.h>

#include <memory>
#include <vector>

#include "conjugate_rays.hpp"

namespace fdk {
namespace conjugate {

// A plan of the orbit band alone (its offset 0, its lines) and every kept
// view's rows of that band less the pattern (null where the view is).
struct PatternFree {
  RowPlan plan;
  std::vector<std::shared_ptr<const KeptView>> kept;
};

// The views' mean over `kept`, high-passed along u, taken out of the orbit
// band's rows of every view.
PatternFree without_fixed_pattern(const RowPlan& plan, const std::vector<std::shared_ptr<const KeptView>>& kept,
                                  const fdk_detector& d);

}  // namespace conjugate
}  // namespace fdk
