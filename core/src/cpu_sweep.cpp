#include "cpu_sweep.hpp"

#include <algorithm>
#include <cmath>

#include "column_kernels.hpp"
#include "fdk/core/checked.hpp"
#include "fdk/core/thread_pool.hpp"

namespace fdk {
namespace {

void sweep_separable(const SweepGrid& grid, const ViewWindow& win, const IndexMatrix& pm, double a_v, int y0,
                     int planes, int stride, int k0, int k1, float* acc, Scratch& scratch) {
  const int nx = grid.nx, nu = grid.columns;
  const double* m = pm.m.data();
  const int rows = win.rows;
  scratch.column.resize(static_cast<size_t>(rows) + 2);
  float* col = scratch.column.data();
  const unsigned char* fov = grid.fov;
  const ColumnKernels& kernels = column_kernels();
  for (int k = k0; k < k1; ++k) {
    for (int i = 0; i < nx; ++i) {
      if (!fov[static_cast<size_t>(k) * nx + i]) continue;
      const double w = m[8] * i + m[10] * k + m[11];
      if (!(w > 0)) continue;
      const double inv = 1.0 / w;
      const double u = (m[0] * i + m[2] * k + m[3]) * inv;
      if (!(u >= 0 && u <= nu - 1)) continue;
      const int iu = std::min(static_cast<int>(u), nu - 2);
      const float fu = static_cast<float>(u - iu);
      // Local detector row of plane t: r0 + dr * t, valid within [0, rows - 1].
      const double r0 = (m[4] * i + m[5] * y0 + m[6] * k + m[7]) * inv - win.row0;
      const double dr = m[5] * inv;
      int t0 = 0, t1 = planes - 1;
      if (std::abs(dr) < 1e-12) {
        if (r0 < 0 || r0 > rows - 1) continue;
      } else {
        // The planes whose row lies on the window, in double: with a
        // small dr they reach far beyond int (an unchecked conversion was
        // undefined behaviour).
        const double ta = -r0 / dr, tb = (rows - 1 - r0) / dr;
        const double first = std::ceil(std::min(ta, tb)), last = std::floor(std::max(ta, tb));
        if (!(first <= last && first <= t1 && last >= t0)) continue;
        t0 = clamp_to_int(first, t0, t1, t0);
        t1 = clamp_to_int(last, t0, t1, t1);
      }
      const double ra = r0 + dr * t0, rb = r0 + dr * t1;
      int h0 = std::max(0, static_cast<int>(std::floor(std::min(ra, rb))));
      int h1 = std::min(rows - 1, static_cast<int>(std::floor(std::max(ra, rb))) + 1);
      if (h1 == h0) {
        if (h1 < rows - 1) ++h1; else --h0;
      }
      // The column interpolated along u once, weighted once; then each
      // voxel is one linear interpolation along v.
      const float weight = static_cast<float>(a_v * (pm.sid * inv) * (pm.sid * inv));
      const float* ca = win.columns.data() + static_cast<size_t>(iu) * rows;
      const float* cb = ca + rows;
      kernels.interpolate(col, ca + h0, cb + h0, fu, weight, h1 - h0 + 1);
      const int last = h1 - h0 - 1;
      const float fr0 = static_cast<float>(r0 - h0), fdr = static_cast<float>(dr);
      kernels.accumulate(acc + (static_cast<size_t>(k) * nx + i) * stride, col, fr0, fdr, t0, t1, last);
    }
  }
}

// Tilted views: every voxel projected on its own.
void sweep_general(const SweepGrid& grid, const ViewWindow& win, const IndexMatrix& pm, double a_v, int y0,
                   int planes, int stride, int k0, int k1, float* acc) {
  const int nx = grid.nx, nu = grid.columns;
  const unsigned char* fov_mask = grid.fov;
  const double* m = pm.m.data();
  const int rows = win.rows;
  for (int k = k0; k < k1; ++k)
    for (int i = 0; i < nx; ++i) {
      if (!fov_mask[static_cast<size_t>(k) * nx + i]) continue;
      float* dst = acc + (static_cast<size_t>(k) * nx + i) * stride;
      for (int t = 0; t < planes; ++t) {
        const int j = y0 + t;
        const double w = m[8] * i + m[9] * j + m[10] * k + m[11];
        if (!(w > 0)) continue;
        const double inv = 1.0 / w;
        const double u = (m[0] * i + m[1] * j + m[2] * k + m[3]) * inv;
        const double r = (m[4] * i + m[5] * j + m[6] * k + m[7]) * inv - win.row0;
        if (!(u >= 0 && u <= nu - 1 && r >= 0 && r <= rows - 1)) continue;
        const int iu = std::min(static_cast<int>(u), nu - 2);
        const int ir = std::min(static_cast<int>(r), rows - 2);
        const double fu = u - iu, fr = r - ir;
        const float* ca = win.columns.data() + static_cast<size_t>(iu) * rows + ir;
        const float* cb = ca + rows;
        const double top = ca[0] + fu * (cb[0] - ca[0]);
        const double bottom = ca[1] + fu * (cb[1] - ca[1]);
        dst[t] += static_cast<float>(a_v * (pm.sid * inv) * (pm.sid * inv) * (top + fr * (bottom - top)));
      }
    }
}

}  // namespace

void to_public_layout(const float* acc, int nx, int nz, int planes, int stride, float* out, ThreadPool& pool) {
  const int tasks = std::min(planes, 4 * pool.size());
  pool.parallel_for(tasks, [&](int task, int) {
    const int t0 = planes * task / tasks, t1 = planes * (task + 1) / tasks;
    for (int t = t0; t < t1; ++t)
      for (int k = 0; k < nz; ++k) {
        float* dst = out + (static_cast<size_t>(t) * nz + k) * nx;
        const float* src = acc + static_cast<size_t>(k) * nx * stride + t;
        for (int i = 0; i < nx; ++i) dst[i] = src[static_cast<size_t>(i) * stride];
      }
  });
}

void sweep_view(const SweepGrid& grid, const ViewWindow& win, const IndexMatrix& pm, double a_v, int y0, int planes,
                int stride, int k0, int k1, float* acc, Scratch& scratch) {
  if (win.rows == 0 || a_v == 0) return;
  if (pm.y_separable())
    sweep_separable(grid, win, pm, a_v, y0, planes, stride, k0, k1, acc, scratch);
  else
    sweep_general(grid, win, pm, a_v, y0, planes, stride, k0, k1, acc);
}

}  // namespace fdk
