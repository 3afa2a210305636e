#include "mirror_tilt.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

#include "axis_symmetry.hpp"
#include "conjugate_rays.hpp"

namespace fdk::symmetry {
namespace {

constexpr double kPi = 3.14159265358979323846;

// The kept rows of `weighted` views, summed with their weights, every row
// (the mirror fit reads them along v with a Gaussian, the bands' margins
// its reach) and columns binned by `bin`.
ViewSum view_sum(const conjugate::RowPlan& plan, const std::vector<std::shared_ptr<const conjugate::KeptView>>& kept,
                 const std::vector<std::pair<size_t, double>>& weighted, const fdk_detector& d, int bin) {
  const int columns = d.size[0];
  ViewSum s;
  s.bin = bin;
  s.aspect = d.spacing[1] / d.spacing[0];
  s.margin = plan.margin;
  s.columns = columns / bin;
  size_t rows = 0;
  for (const conjugate::Band& b : plan.bands) {
    s.bands.push_back({b.first_row, b.count});
    rows += static_cast<size_t>(b.count);
  }
  // About 40 rows compared, whatever the detector: (b)'s 141 rows, all
  // compared (and the fit then made in three passes), made the estimate
  // 0.85 s longer than (b)'s backprojection on an H100 host.
  s.row_stride = std::max(1, static_cast<int>(rows) / 40);
  s.pixels.assign(rows * static_cast<size_t>(s.columns), 0.0);
  for (const auto& [view, w] : weighted) {
    const conjugate::KeptView& kv = *kept[view];
    for (size_t r = 0; r < rows; ++r) {
      const uint16_t* q = kv.q + r * static_cast<size_t>(columns);
      double* to = s.pixels.data() + r * static_cast<size_t>(s.columns);
      for (int x = 0; x < s.columns; ++x)
        for (int c = 0; c < bin; ++c) to[x] += w * (kv.base + kv.step * q[x * bin + c]);
    }
  }
  return s;
}

// The mirror fit of two halves' sums (each a full circle of `views` views
// in all): the line of the whole sum, the halves' tilts from it.
MirrorTilt mirror_of_halves(const ViewSum (&half)[2], double row, double axis_column, int views,
                            ThreadPool* pool) {
  MirrorTilt out;
  // Each half's sum is symmetric, and so is their mean: the whole sum.
  ViewSum both = half[0];
  for (size_t i = 0; i < both.pixels.size(); ++i) both.pixels[i] = 0.5 * (half[0].pixels[i] + half[1].pixels[i]);
  const MirrorAxis all = mirror_axis(both, row, axis_column, pool);
  if (!all.found) return out;
  // The halves lend only their tilts' difference: fitted from the whole
  // sum's line, not searched afresh.
  const MirrorAxis even = mirror_line_near(half[0], row, all, pool);
  const MirrorAxis odd = mirror_line_near(half[1], row, all, pool);
  if (!even.found || !odd.found) return out;
  const auto degrees = [](double t) { return t * 180 / kPi; };  // mirror_axis's tilts are the detector's (mm)
  out.found = true;
  out.tilt_deg = degrees(all.tilt);
  out.sigma_deg = std::max(std::fabs(degrees(all.sigma)), 0.5 * std::fabs(degrees(even.tilt) - degrees(odd.tilt)));
  out.views = views;
  return out;
}

}  // namespace

MirrorTilt bands_mirror_tilt(const conjugate::RowPlan& plan,
                             const std::vector<std::shared_ptr<const conjugate::KeptView>>& kept,
                             const std::vector<fdk_view>& views, const fdk_detector& d, double axis_column,
                             ThreadPool* pool) {
  std::vector<std::pair<double, size_t>> by_angle;
  for (size_t k = 0; k < kept.size(); ++k)
    if (kept[k]) by_angle.push_back({std::fmod(std::fmod(views[k].gantry_angle_deg, 360.0) + 360.0, 360.0), k});
  if (by_angle.size() < 16) return MirrorTilt{};
  std::sort(by_angle.begin(), by_angle.end());
  const auto even_views = weighted_half(by_angle, 0), odd_views = weighted_half(by_angle, 1);
  if (even_views.empty() || odd_views.empty()) return MirrorTilt{};
  const int bin = std::max(1, (d.size[0] + 255) / 256);
  const ViewSum half[2] = {view_sum(plan, kept, even_views, d, bin), view_sum(plan, kept, odd_views, d, bin)};
  const double row = (-views[0].projection_offset_y - d.origin[1]) / d.spacing[1];  // the principal point's
  return mirror_of_halves(half, row, axis_column, static_cast<int>(by_angle.size()), pool);
}

MirrorTilt rows_mirror_tilt(const RowSums::Halves& h, const fdk_view& view, const fdk_detector& d,
                            double axis_column, ThreadPool* pool) {
  // Rows without the object are symmetric whatever the line: compared,
  // they only took the place of rows with it (a small head at
  // magnification 1.1: 13 of 43).
  const auto range_of = [&](int r) {
    const double* row = h.sum[0].data() + static_cast<size_t>(r) * h.columns;
    const auto [lo, hi] = std::minmax_element(row, row + h.columns);
    return *hi - *lo;
  };
  double widest = 0;
  for (int r = 0; r < h.rows; ++r) widest = std::max(widest, range_of(r));
  int first = 0, last = h.rows - 1;
  while (first < last && range_of(first) < 0.05 * widest) ++first;
  while (last > first && range_of(last) < 0.05 * widest) --last;
  first = std::max(0, first - 4), last = std::min(h.rows - 1, last + 4);  // the Gaussian's reach along v
  const int rows = last - first + 1;
  ViewSum half[2];
  for (int p = 0; p < 2; ++p) {
    ViewSum& s = half[p];
    s.bin = h.column_bin;
    s.row_bin = h.row_bin;
    s.aspect = d.spacing[1] / d.spacing[0];
    s.columns = h.columns;
    s.bands.push_back({first * h.row_bin, rows});
    s.row_stride = std::max(1, rows / 40);
    const auto from = h.sum[p].begin() + static_cast<std::ptrdiff_t>(first) * h.columns;
    s.pixels.assign(from, from + static_cast<std::ptrdiff_t>(rows) * h.columns);
  }
  const double row = (-view.projection_offset_y - d.origin[1]) / d.spacing[1];
  MirrorTilt m = mirror_of_halves(half, row, axis_column, h.views, pool);
  m.every_row = true;
  return m;
}

}  // namespace fdk::symmetry
