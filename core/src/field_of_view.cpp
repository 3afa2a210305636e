#include <algorithm>
#include <cmath>

#include "fdk/core/backend.hpp"

namespace fdk {
namespace {

// Whether voxel column (i, k) projects, in the view of index matrix m, in
// front of the source and within columns [c0, c1]: the backprojectors' own
// test, in double precision.
bool sees(const double* m, int i, int k, double c0, double c1) {
  const double w = m[8] * i + m[10] * k + m[11];
  if (!(w > 0)) return false;
  const double u = (m[0] * i + m[2] * k + m[3]) / w;
  return u >= c0 && u <= c1;
}

// Narrows [lo, hi] to the voxels of row k that one view sees. Along a row
// the projection is linear-fractional, so the seen voxels are one interval
// (three half-lines: w > 0, u >= c0, u <= c1): solved in closed form, then
// its ends settled with the exact test above.
void narrow(const double* m, int k, double c0, double c1, int& lo, int& hi) {
  const double bw = m[10] * k + m[11], bu = m[2] * k + m[3];
  double x0 = lo, x1 = hi;
  const auto at_least = [&](double a, double b) {  // a * i >= b
    if (a > 0) x0 = std::max(x0, b / a);
    else if (a < 0) x1 = std::min(x1, b / a);
    else if (b > 0) x1 = x0 - 1;
  };
  at_least(m[8], -bw + 1e-12 * std::abs(bw));
  at_least(m[0] - c0 * m[8], c0 * bw - bu);
  at_least(c1 * m[8] - m[0], bu - c1 * bw);
  if (!(x0 <= x1)) {
    hi = lo - 1;
    return;
  }
  const int old_lo = lo, old_hi = hi;
  lo = std::max(old_lo, static_cast<int>(std::ceil(x0)) - 1);
  hi = std::min(old_hi, static_cast<int>(std::floor(x1)) + 1);
  for (int step = 0; step < 4 && lo <= hi && !sees(m, lo, k, c0, c1); ++step) ++lo;
  for (int step = 0; step < 4 && lo <= hi && !sees(m, hi, k, c0, c1); ++step) --hi;
  if (lo <= hi && (!sees(m, lo, k, c0, c1) || !sees(m, hi, k, c0, c1))) hi = lo - 1;  // degenerate
}

}  // namespace

std::vector<unsigned char> field_of_view_mask(const ScanModel& model, bool nominal, bool zero_outside) {
  const int nx = model.volume.size[0], nz = model.volume.size[2];
  std::vector<unsigned char> mask(model.plane_floats(), 1);
  if (!zero_outside) return mask;
  std::vector<int> lo(static_cast<size_t>(nz), 0), hi(static_cast<size_t>(nz), nx - 1);
  for (size_t v = 0; v < model.views.size(); ++v) {
    if (!nominal && !model.arrived[v]) continue;
    const IndexMatrix& pm = model.matrices[v];
    if (!pm.y_separable()) continue;
    const auto cols = used_columns(model.redundancy, model.views[v], model.input_detector, model.input_column_offset);
    for (int k = 0; k < nz; ++k)
      if (lo[static_cast<size_t>(k)] <= hi[static_cast<size_t>(k)])
        narrow(pm.m.data(), k, cols[0], cols[1], lo[static_cast<size_t>(k)], hi[static_cast<size_t>(k)]);
  }
  for (int k = 0; k < nz; ++k) {
    unsigned char* row = mask.data() + static_cast<size_t>(k) * nx;
    for (int i = 0; i < nx; ++i) row[i] = i >= lo[static_cast<size_t>(k)] && i <= hi[static_cast<size_t>(k)];
  }
  return mask;
}

uint64_t voxels_outside(const ScanModel& model, const std::vector<unsigned char>& mask) {
  uint64_t inside = 0;
  for (unsigned char c : mask) inside += c;
  return (static_cast<uint64_t>(mask.size()) - inside) * static_cast<uint64_t>(model.volume.size[1]);
}

}  // namespace fdk
