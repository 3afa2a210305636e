#include "fdk/core/partition.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "config_validation.hpp"
#include "fdk/core/error.hpp"
#include "fdk/core/weights.hpp"

namespace fdk {

std::vector<std::array<int, 2>> split_planes(int planes, int unit, const std::vector<double>& capacity,
                                             const std::vector<int>& max_planes) {
  if (planes < 0 || unit < 1) fail(FDK_ERROR_INVALID_ARGUMENT, "split_planes: bad planes or unit");
  const size_t n = capacity.size();
  for (size_t r = 0; r < n; ++r)
    if (!std::isfinite(capacity[r]))
      fail(FDK_ERROR_INVALID_ARGUMENT, "rank " + std::to_string(r) + "'s capacity is not finite");
  const long long units = (static_cast<long long>(planes) + unit - 1) / unit;
  // Shares in units, in proportion to capacity, none above a rank's cap
  // (water-filling: a rank whose share exceeds its cap gets the cap and
  // the others share the rest).
  std::vector<double> share(n, 0.0);
  std::vector<unsigned char> settled(n, 0);
  for (size_t r = 0; r < n; ++r) settled[r] = !(capacity[r] > 0);
  double left = static_cast<double>(units);
  for (;;) {
    double total = 0;
    for (size_t r = 0; r < n; ++r)
      if (!settled[r]) total += capacity[r];
    if (!(total > 0)) break;
    bool capped = false;
    for (size_t r = 0; r < n; ++r) {
      if (settled[r] || r >= max_planes.size()) continue;
      const double cap = static_cast<double>(max_planes[r] / unit);
      if (left * capacity[r] / total > cap) {
        share[r] = cap;
        settled[r] = 1;
        left -= cap;
        capped = true;
      }
    }
    if (capped) continue;
    for (size_t r = 0; r < n; ++r)
      if (!settled[r]) share[r] = left * capacity[r] / total;
    left = 0;
    break;
  }
  bool anyone = false;
  for (size_t r = 0; r < n; ++r) anyone |= capacity[r] > 0;
  if (!anyone) fail(FDK_ERROR_INVALID_ARGUMENT, "no rank has a capacity above 0: nobody would reconstruct");
  if (left > 0.5)
    fail(FDK_ERROR_BUDGET, "the ranks' budgets hold " + std::to_string(units - std::llround(left)) + " of the " +
                               std::to_string(units) + " units of " + std::to_string(unit) + " planes");
  // Cumulative shares rounded to whole units: contiguous, in rank order,
  // every unit given once (a capped share is whole, so it stays exact).
  size_t last = 0;
  for (size_t r = 0; r < n; ++r)
    if (share[r] > 0) last = r;
  std::vector<std::array<int, 2>> ranges(n, std::array<int, 2>{0, 0});
  double before = 0;
  long long unit_begin = 0;
  for (size_t r = 0; r < n; ++r) {
    before += share[r];
    long long unit_end = std::clamp(std::llround(before), unit_begin, units);
    if (r == last) unit_end = units;
    if (share[r] == 0) unit_end = unit_begin;
    const int b = static_cast<int>(std::min<long long>(planes, unit_begin * unit));
    const int e = static_cast<int>(std::min<long long>(planes, unit_end * unit));
    ranges[r] = b < e ? std::array<int, 2>{b, e} : std::array<int, 2>{0, 0};
    unit_begin = unit_end;
  }
  return ranges;
}

std::array<int, 2> rows_needed(const IndexMatrix& m, const fdk_volume& volume, int detector_rows, int y0, int y1,
                               bool whole_columns) {
  if (y0 >= y1) return {0, 0};
  if (whole_columns) return {0, detector_rows};
  const auto r = rows_for_slab(m, volume, detector_rows, y0, y1);
  if (r[0] > r[1]) return {0, 0};  // the planes miss this view's detector
  return {std::max(0, r[0] - 1), std::min(detector_rows, r[1] + 2)};
}

std::array<int, 2> rows_needed(const std::vector<IndexMatrix>& matrices, const fdk_volume& volume, int detector_rows,
                               int y0, int y1, bool whole_columns) {
  std::array<int, 2> all{0, 0};
  for (const auto& m : matrices) {
    const auto r = rows_needed(m, volume, detector_rows, y0, y1, whole_columns);
    if (r[0] >= r[1]) continue;
    all = all[0] >= all[1] ? r : std::array<int, 2>{std::min(all[0], r[0]), std::max(all[1], r[1])};
  }
  return all;
}

ScanRows::ScanRows(const fdk_config& config) : settings_(validate_config(config)) {
  const fdk_config& c = settings_.config;
  const auto views = scan_views(config.scan);
  const auto plan = plan_redundancy(views, c.detector, static_cast<fdk_switch>(c.short_scan),
                                    static_cast<fdk_switch>(c.offset_detector));
  int offset = 0;
  detector_ = filtered_detector(plan, views, c.detector, &offset);
  matrices_.reserve(views.size());
  for (const auto& v : views) matrices_.push_back(index_matrix(v, c.volume, detector_));
}

IndexMatrix ScanRows::matrix(const fdk_view& view) const {
  return index_matrix(view_from_parameters(view, "view: "), settings_.config.volume, detector_);
}

std::array<int, 2> ScanRows::rows(const IndexMatrix& m, int y0, int y1) const {
  return rows_needed(m, settings_.config.volume, detector_.size[1], y0, y1, settings_.config.hann_cutoff_v > 0);
}

std::array<int, 2> ScanRows::rows(int y0, int y1) const {
  return rows_needed(matrices_, settings_.config.volume, detector_.size[1], y0, y1,
                     settings_.config.hann_cutoff_v > 0);
}

}  // namespace fdk
