#include "fdk/core/cpu_backend.hpp"


#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "column_kernels.hpp"
#include "fdk/core/checked.hpp"
#include "fdk/core/error.hpp"
#include "fdk/core/thread_pool.hpp"
#include "fdk/core/vertical_window.hpp"

namespace fdk {

namespace {

// Views backprojected per pass: their row windows are decompressed together,
// then every thread sweeps its share of the slab through all of them, so the
// accumulator is read and written once per batch rather than once per view.
constexpr int kViewBatch = 16;

// One view's detector rows [row0, row0 + rows) for the current slab, stored
// column by column (rows contiguous) because the backprojector walks along y,
// which moves along detector rows.
struct ViewWindow {
  int view = -1;
  int row0 = 0;
  int rows = 0;  // 0: the slab does not project onto this view's detector
  std::vector<float> columns;
};

struct Scratch {
  std::vector<float> rows;    // row-major decompression target
  std::vector<float> column;  // one column interpolated along u, weighted
};

class CpuBackend final : public Backend {
 public:
  CpuBackend(const ScanModel& model, int num_threads)
      : ramp_(model.filter), pool_(num_threads), scratch_(static_cast<size_t>(num_threads)) {
    if (model.filter.hann_cutoff_v > 0)
      vertical_ = std::make_unique<VerticalWindow>(model.detector.size[1], model.filter.hann_cutoff_v);
  }

  fdk_backend kind() const override { return FDK_BACKEND_CPU; }

  void filter(const ScanModel& model, int view, const ViewGeometry& geometry, const float* pixels,
              size_t pitch_bytes, float* filtered) override {
    const int nu = model.detector.size[0];
    // Only the rows this process was given (all of them on one machine):
    // rows are weighted and filtered along u one by one, so a rank's rows
    // come out as one process's do.
    const auto rows = model.rows_of(view);
    const int chunk = 16;
    const int first = rows[0] / chunk;
    const int tasks = (rows[1] + chunk - 1) / chunk - first;
    pool_.parallel_for(tasks, [&](int task, int) {
      const int r0 = std::max(rows[0], (first + task) * chunk), r1 = std::min(rows[1], (first + task + 1) * chunk);
      weight_projection(model.redundancy, geometry, model.input_detector, pixels, pitch_bytes, model.detector,
                        model.input_column_offset, filtered, r0, r1);
      ramp_.filter_rows(filtered + static_cast<size_t>(r0) * static_cast<size_t>(nu), r1 - r0,
                        static_cast<size_t>(nu));
    });
    // The window along v needs every row filtered along u first (the whole
    // view is here: the store's row bands are cut only after this).
    if (vertical_) {
      const int column_tasks = (nu + 63) / 64;
      pool_.parallel_for(column_tasks, [&](int task, int) {
        vertical_->filter_columns(filtered, task * 64, std::min(nu, task * 64 + 64), static_cast<size_t>(nu));
      });
    }
  }

  void finish(const ScanModel& model) override {
    fov_mask_ = field_of_view_mask(model, false, model.zero_outside_fov);
  }

  uint64_t host_work_bytes(const ScanModel& model, int planes) const override {
    // The batch of row windows (bounded by the whole detector) and the
    // per-thread decompression buffers, plus the accumulator of the slab.
    const uint64_t detector = 4ull * static_cast<uint64_t>(model.detector.size[0]) *
                              static_cast<uint64_t>(model.detector.size[1]);
    return detector * (kViewBatch + scratch_.size()) +
           4ull * model.plane_floats() * static_cast<uint64_t>(planes);
  }

  void add_timings(fdk_timings& t) const override { t.backproject_seconds += backproject_seconds_; }

  void backproject(const ScanModel& model, int y0, int y1, float* out) override {
    struct Account {
      double& total;
      std::chrono::steady_clock::time_point begin;
      ~Account() { total += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count(); }
    } account{backproject_seconds_, std::chrono::steady_clock::now()};
    const int nx = model.volume.size[0], nz = model.volume.size[2];
    const int planes = y1 - y0;
    // Accumulate with y fastest: a column of voxels shares its detector
    // column and depth in every untilted view. Columns are padded so the
    // vector kernels never touch a neighbour's voxels.
    const int stride = (planes + kColumnPad - 1) / kColumnPad * kColumnPad;
    std::vector<float> acc(model.plane_floats() * static_cast<size_t>(stride), 0.0f);
    std::vector<ViewWindow> batch(kViewBatch);
    const auto& order = model.view_order;
    for (size_t start = 0; start < order.size(); start += kViewBatch) {
      throw_if_cancelled(model);
      const int count = static_cast<int>(std::min<size_t>(kViewBatch, order.size() - start));
      pool_.parallel_for(count, [&](int b, int slot) {
        load_window(model, order[start + static_cast<size_t>(b)], y0, y1, batch[static_cast<size_t>(b)],
                    scratch_[static_cast<size_t>(slot)]);
      });
      const int tasks = std::min(nz, 8 * pool_.size());
      pool_.parallel_for(tasks, [&](int task, int slot) {
        const int k0 = static_cast<int>(static_cast<int64_t>(nz) * task / tasks);
        const int k1 = static_cast<int>(static_cast<int64_t>(nz) * (task + 1) / tasks);
        for (int b = 0; b < count; ++b)
          sweep(model, fov_mask_.data(), batch[static_cast<size_t>(b)], y0, planes, stride, k0, k1, acc.data(),
                scratch_[static_cast<size_t>(slot)]);
      });
      if (model.meter) model.meter->add(y0, y1, count);
    }
    // Back to the public layout: x fastest, then z, then y.
    const int tasks = std::min(planes, 4 * pool_.size());
    pool_.parallel_for(tasks, [&](int task, int) {
      const int t0 = planes * task / tasks, t1 = planes * (task + 1) / tasks;
      for (int t = t0; t < t1; ++t)
        for (int k = 0; k < nz; ++k) {
          float* dst = out + (static_cast<size_t>(t) * nz + k) * nx;
          const float* src = acc.data() + static_cast<size_t>(k) * nx * stride + t;
          for (int i = 0; i < nx; ++i) dst[i] = src[static_cast<size_t>(i) * stride];
        }
    });
  }

 private:
  static void load_window(const ScanModel& model, int view, int y0, int y1, ViewWindow& win,
                          Scratch& scratch) {
    const int nu = model.detector.size[0], nv = model.detector.size[1];
    win.view = view;
    auto range = rows_for_slab(model.matrices[static_cast<size_t>(view)], model.volume, nv, y0, y1);
    if (range[0] > range[1]) {
      win.rows = 0;
      return;
    }
    if (range[1] - range[0] < 1) {  // interpolation needs two rows
      if (range[1] < nv - 1) ++range[1]; else --range[0];
    }
    win.row0 = range[0];
    win.rows = range[1] - range[0] + 1;
    const size_t n = static_cast<size_t>(win.rows) * static_cast<size_t>(nu);
    scratch.rows.resize(n);
    win.columns.resize(n);
    model.store->read_rows(view, range[0], range[1] + 1, scratch.rows.data());
    for (int r = 0; r < win.rows; ++r)
      for (int c = 0; c < nu; ++c)
        win.columns[static_cast<size_t>(c) * win.rows + r] = scratch.rows[static_cast<size_t>(r) * nu + c];
  }

  // Adds one view to the voxels of z indices [k0, k1) of the slab.
  static void sweep(const ScanModel& model, const unsigned char* fov_mask, const ViewWindow& win, int y0, int planes,
                    int stride, int k0, int k1, float* acc, Scratch& scratch) {
    if (win.rows == 0) return;
    const IndexMatrix& pm = model.matrices[static_cast<size_t>(win.view)];
    const double a_v = model.view_weights[static_cast<size_t>(win.view)];
    if (a_v == 0) return;
    if (pm.y_separable())
      sweep_separable(model, fov_mask, win, pm, a_v, y0, planes, stride, k0, k1, acc, scratch);
    else
      sweep_general(model, fov_mask, win, pm, a_v, y0, planes, stride, k0, k1, acc);
  }

  static void sweep_separable(const ScanModel& model, const unsigned char* fov_mask, const ViewWindow& win, const IndexMatrix& pm,
                              double a_v, int y0, int planes, int stride, int k0, int k1, float* acc,
                              Scratch& scratch) {
    const int nx = model.volume.size[0], nu = model.detector.size[0];
    const double* m = pm.m.data();
    const int rows = win.rows;
    scratch.column.resize(static_cast<size_t>(rows) + 2);
    float* col = scratch.column.data();
    const unsigned char* fov = fov_mask;
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
  static void sweep_general(const ScanModel& model, const unsigned char* fov_mask, const ViewWindow& win, const IndexMatrix& pm,
                            double a_v, int y0, int planes, int stride, int k0, int k1, float* acc) {
    const int nx = model.volume.size[0], nu = model.detector.size[0];
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

  RampFilter ramp_;
  std::unique_ptr<VerticalWindow> vertical_;  // fdk_config.hann_cutoff_v > 0
  ThreadPool pool_;
  std::vector<unsigned char> fov_mask_;  // from field_of_view_mask, at finish
  double backproject_seconds_ = 0;
  std::vector<Scratch> scratch_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(const ScanModel& model, int num_threads) {
  return std::make_unique<CpuBackend>(model, num_threads);
}

}  // namespace fdk
