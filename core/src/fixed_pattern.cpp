#include "fixed_pattern.hpp"

#include <algorithm>
#include <cmath>

namespace fdk {
namespace conjugate {

namespace {

// A detector's fixed pattern: the same flat frames correct every view, so
// their noise (and any gain left uncorrected) is one pattern in all of
// them. The conjugate rays compare pixel a of one view with pixel b of
// another, and where the same a and b meet again and again (a uniform
// scan pairs its views at a few fixed columns) the pattern's difference
// does not average out, in any block of pairs: a full scan of a small
// head at 2e4 photons and 8 flat frames read 0.54 column for 0, sigma
// 0.08; with 400 flat frames 0.01. The views' mean holds the pattern;
// high-passed along u (less its Gaussian of kPatternColumns) it holds
// little of the object (a point off the axis sweeps across the columns).
constexpr double kPatternColumns = 12;

}  // namespace

PatternFree without_fixed_pattern(const RowPlan& plan,
                                  const std::vector<std::shared_ptr<const KeptView>>& kept,
                                  const fdk_detector& d) {
  PatternFree out;
  const Band& orbit = plan.bands[0];
  out.plan = plan;
  out.plan.bands = {orbit};
  out.plan.bands[0].offset = 0;
  out.plan.rows = orbit.count;
  out.plan.lines.clear();
  for (const Line& l : plan.lines)
    if (l.band == 0) out.plan.lines.push_back(l);
  const int nu = d.size[0], rows = orbit.count;
  const size_t n = static_cast<size_t>(rows) * static_cast<size_t>(nu);
  std::vector<double> mean(n, 0.0);
  int count = 0;
  for (const auto& kv : kept) {
    if (!kv) continue;
    ++count;
    const uint16_t* q = kv->q + static_cast<size_t>(orbit.offset) * static_cast<size_t>(nu);
    for (size_t i = 0; i < n; ++i) mean[i] += kv->base + kv->step * q[i];
  }
  for (double& m : mean) m /= std::max(1, count);
  const int reach = static_cast<int>(std::ceil(3 * kPatternColumns));
  std::vector<double> taps(static_cast<size_t>(2 * reach + 1));
  for (int t = -reach; t <= reach; ++t)
    taps[static_cast<size_t>(t + reach)] = std::exp(-0.5 * t * t / (kPatternColumns * kPatternColumns));
  std::vector<double> pattern(n);
  for (int r = 0; r < rows; ++r)
    for (int x = 0; x < nu; ++x) {
      double a = 0, w = 0;
      for (int t = -reach; t <= reach; ++t) {
        const int c = x + t;
        if (c < 0 || c >= nu) continue;  // at the edges the Gaussian is cut and renormalised
        a += taps[static_cast<size_t>(t + reach)] * mean[static_cast<size_t>(r) * nu + c];
        w += taps[static_cast<size_t>(t + reach)];
      }
      pattern[static_cast<size_t>(r) * nu + x] = mean[static_cast<size_t>(r) * nu + x] - a / w;
    }
  // keep_rows reads a band at its detector rows; the cleaned band is a
  // buffer of its own, so it is read through a plan whose band starts at
  // row 0 (the codes are the same: they do not depend on where rows lie).
  RowPlan source = out.plan;
  source.bands[0].first_row = 0;
  std::vector<float> band(n);
  out.kept.resize(kept.size());
  for (size_t k = 0; k < kept.size(); ++k) {
    if (!kept[k]) continue;
    const uint16_t* q = kept[k]->q + static_cast<size_t>(orbit.offset) * static_cast<size_t>(nu);
    for (size_t i = 0; i < n; ++i) band[i] = static_cast<float>(kept[k]->base + kept[k]->step * q[i] - pattern[i]);
    out.kept[k] = keep_rows(source, nu, band.data(), static_cast<size_t>(nu) * sizeof(float));
  }
  return out;
}

}  // namespace conjugate
}  // namespace fdk
