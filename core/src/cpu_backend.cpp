#include "fdk/core/cpu_backend.hpp"


#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "column_kernels.hpp"
#include "cpu_sweep.hpp"
#include "fdk/core/checked.hpp"
#include "fdk/core/error.hpp"
#include "fdk/core/preview.hpp"
#include "fdk/core/thread_pool.hpp"
#include "fdk/core/vertical_window.hpp"

namespace fdk {

namespace {

// Views backprojected per pass: their row windows are decompressed together,
// then every thread sweeps its share of the slab through all of them, so the
// accumulator is read and written once per batch rather than once per view.
constexpr int kViewBatch = 16;

class CpuBackend final : public Backend {
 public:
  CpuBackend(const ScanModel& model, int num_threads)
      : ramp_(model.filter), pool_(num_threads), scratch_(static_cast<size_t>(num_threads)) {
    if (model.filter.hann_cutoff_v > 0)
      vertical_ = std::make_unique<VerticalWindow>(model.detector.size[1], model.filter.hann_cutoff_v);
  }

  fdk_backend kind() const override { return FDK_BACKEND_CPU; }
  bool works_on_host_cores() const override { return true; }

  void filter(const ScanModel& model, int view, const ViewGeometry& geometry, const float* pixels,
              size_t pitch_bytes, float* filtered, int /*lane: one*/) override {
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

  // The preview sweeps each view on the threads that just filtered it
  // (the filter thread calls filter, then the preview, one after the other).
  std::unique_ptr<PreviewSink> make_preview_sink(const ScanModel& model, const fdk_volume& grid) override {
    return make_cpu_preview_sink(model, grid, pool_);
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
          sweep(model, batch[static_cast<size_t>(b)], y0, planes, stride, k0, k1, acc.data(),
                scratch_[static_cast<size_t>(slot)]);
      });
      if (model.meter) model.meter->add(y0, y1, count);
    }
    to_public_layout(acc.data(), nx, nz, planes, stride, out, pool_);
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

  void sweep(const ScanModel& model, const ViewWindow& win, int y0, int planes, int stride, int k0, int k1,
             float* acc, Scratch& scratch) const {
    if (win.rows == 0) return;
    const SweepGrid grid{model.volume.size[0], model.detector.size[0], fov_mask_.data()};
    sweep_view(grid, win, model.matrices[static_cast<size_t>(win.view)],
               model.view_weights[static_cast<size_t>(win.view)], y0, planes, stride, k0, k1, acc, scratch);
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
