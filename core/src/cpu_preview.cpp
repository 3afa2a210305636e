// The live preview on the CPU: each filtered view swept into a host volume
// by the CPU backprojector's own sweep, on the threads that filtered it.
#include <algorithm>
#include <vector>

#include "column_kernels.hpp"
#include "cpu_sweep.hpp"
#include "fdk/core/preview.hpp"
#include "fdk/core/thread_pool.hpp"

namespace fdk {

namespace {

int padded_planes(int ny) { return (ny + kColumnPad - 1) / kColumnPad * kColumnPad; }

class CpuPreviewSink final : public PreviewSink {
 public:
  CpuPreviewSink(const ScanModel& model, const fdk_volume& grid, ThreadPool& pool)
      : grid_(grid),
        stride_(padded_planes(grid.size[1])),
        pool_(pool),
        fov_(preview_fov_mask(model, grid)),
        acc_(static_cast<size_t>(grid.size[0]) * grid.size[2] * static_cast<size_t>(stride_), 0.0f),
        scratch_(static_cast<size_t>(pool.size())),
        bytes_(cpu_preview_bytes(model, grid, pool.size())) {}

  void add(const ScanModel& model, int view, const IndexMatrix& matrix, double weight, const float* filtered) override {
    const int nu = model.detector.size[0], nv = model.detector.size[1];
    const int nx = grid_.size[0], ny = grid_.size[1], nz = grid_.size[2];
    // The rows the grid projects onto, column by column (the sweep's
    // layout), as a slab's window is loaded.
    auto range = rows_for_slab(matrix, grid_, nv, 0, ny);
    if (range[0] > range[1]) return;
    if (range[1] - range[0] < 1) {
      if (range[1] < nv - 1) ++range[1]; else --range[0];
    }
    win_.view = view;
    win_.row0 = range[0];
    win_.rows = range[1] - range[0] + 1;
    win_.columns.resize(static_cast<size_t>(win_.rows) * static_cast<size_t>(nu));
    const int column_tasks = std::min((nu + 63) / 64, 4 * pool_.size());
    pool_.parallel_for(column_tasks, [&](int task, int) {
      const int c0 = static_cast<int>(static_cast<int64_t>(nu) * task / column_tasks);
      const int c1 = static_cast<int>(static_cast<int64_t>(nu) * (task + 1) / column_tasks);
      for (int c = c0; c < c1; ++c) {
        float* dst = win_.columns.data() + static_cast<size_t>(c) * win_.rows;
        for (int r = 0; r < win_.rows; ++r)
          dst[r] = filtered[static_cast<size_t>(win_.row0 + r) * static_cast<size_t>(nu) + static_cast<size_t>(c)];
      }
    });
    const SweepGrid g{nx, nu, fov_.data()};
    const int tasks = std::min(nz, 8 * pool_.size());
    pool_.parallel_for(tasks, [&](int task, int slot) {
      const int k0 = static_cast<int>(static_cast<int64_t>(nz) * task / tasks);
      const int k1 = static_cast<int>(static_cast<int64_t>(nz) * (task + 1) / tasks);
      sweep_view(g, win_, matrix, weight, 0, ny, stride_, k0, k1, acc_.data(), scratch_[static_cast<size_t>(slot)]);
    });
  }

  void read(float* out) override {
    to_public_layout(acc_.data(), grid_.size[0], grid_.size[2], grid_.size[1], stride_, out, pool_);
  }

  bool on_gpu() const override { return false; }
  uint64_t memory_bytes() const override { return bytes_; }

 private:
  const fdk_volume grid_;
  const int stride_;
  ThreadPool& pool_;
  std::vector<unsigned char> fov_;
  std::vector<float> acc_;
  ViewWindow win_;
  std::vector<Scratch> scratch_;
  const uint64_t bytes_;
};

}  // namespace

std::unique_ptr<PreviewSink> make_cpu_preview_sink(const ScanModel& model, const fdk_volume& grid, ThreadPool& pool) {
  return std::make_unique<CpuPreviewSink>(model, grid, pool);
}

uint64_t cpu_preview_bytes(const ScanModel& model, const fdk_volume& grid, int threads) {
  const uint64_t columns = static_cast<uint64_t>(grid.size[0]) * static_cast<uint64_t>(grid.size[2]);
  const uint64_t detector = 4ull * static_cast<uint64_t>(model.detector.size[0]) *
                            static_cast<uint64_t>(model.detector.size[1]);
  // The accumulator, the mask, one view's window, the threads' columns.
  return 4 * columns * static_cast<uint64_t>(padded_planes(grid.size[1])) + columns + detector +
         static_cast<uint64_t>(threads) * (4ull * static_cast<uint64_t>(model.detector.size[1]) + 64);
}

}  // namespace fdk
