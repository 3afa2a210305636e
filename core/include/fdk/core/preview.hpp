// The live preview (fdk_config.preview): a coarse volume over the same field
// into which every view is backprojected as soon as it is filtered, so that
// it can be read during the scan. The core keeps the bookkeeping (which
// views are in, their share of the angular weight, the scale of a read);
// the sum itself lives where the filtered views are: a backend's
// PreviewSink (on the GPU that filters the views, or on the CPU threads).
#pragma once
#include <fdk/fdk.h>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fdk/core/backend.hpp"
#include "fdk/core/geometry.hpp"

namespace fdk {

// The default grid (all preview sizes 0): the volume's field at 1/f of its
// voxels per axis, f >= 2 the smallest factor leaving every axis <= 256.
fdk_volume default_preview_grid(const fdk_volume& volume);
// The grid fdk_config asks for: the default, or preview_volume checked as a
// volume is (throws INVALID_ARGUMENT naming the field).
fdk_volume preview_grid(const fdk_config& config);
inline uint64_t grid_voxels(const fdk_volume& g) {
  return static_cast<uint64_t>(g.size[0]) * static_cast<uint64_t>(g.size[1]) * static_cast<uint64_t>(g.size[2]);
}

// The field of view (fdk_outside_fov) over the preview's grid: the
// volume's rule (field_of_view_mask) for the announced views seen from it.
std::vector<unsigned char> preview_fov_mask(const ScanModel& model, const fdk_volume& grid);

// Where the preview's sum lives. add() runs on the ingest pipeline's filter
// thread right after the backend filtered the view; the reads on any thread.
// The Preview serialises them (one mutex): a sink needs no locks of its own.
class PreviewSink {
 public:
  virtual ~PreviewSink() = default;
  // Adds view `view`, weighted by `weight` (a_v), through `matrix` (the
  // preview grid's index matrix of the view). `filtered`: the filtered view
  // on the host (model.detector, rows contiguous), or null when the backend
  // keeps the filtered views itself (then the sink reads them there).
  virtual void add(const ScanModel& model, int view, const IndexMatrix& matrix, double weight,
                   const float* filtered) = 0;
  // The unscaled sum of every view added so far, in the public layout.
  virtual void read(float* out) = 0;
  virtual bool on_gpu() const = 0;
  virtual uint64_t memory_bytes() const = 0;
};

// The CPU's sink: threads of `pool` sweep each view into a host volume with
// the CPU backprojector's arithmetic (cpu_sweep.hpp).
std::unique_ptr<PreviewSink> make_cpu_preview_sink(const ScanModel& model, const fdk_volume& grid, ThreadPool& pool);
// Host bytes the CPU sink holds for `grid` with `threads` threads.
uint64_t cpu_preview_bytes(const ScanModel& model, const fdk_volume& grid, int threads);

// One moment of the preview, scaled: fdk_preview_info's figures.
struct PreviewState {
  fdk_volume volume{};
  int views = 0, views_announced = 0;
  double coverage = 0;
  uint32_t flags = 0;
  bool on_gpu = false;
  uint64_t memory_bytes = 0;
};

class Preview {
 public:
  // `nominal_weights`: a_v of every announced view with all present.
  Preview(const ScanModel& model, const fdk_volume& grid, std::vector<double> nominal_weights,
          std::unique_ptr<PreviewSink> sink);

  // The filter thread, after Backend::filter and view_filtered. Never
  // throws: a failure is kept and reported by the reads (the view itself
  // is fine, and the reconstruction goes on).
  void add(const ScanModel& model, int view, const float* filtered) noexcept;
  // fdk_finish: whether the sum is now the reconstruction of its grid.
  void finish(const ScanModel& model);

  PreviewState state() const;
  // The whole volume (`out` holds grid_voxels floats), scaled.
  PreviewState read(float* out);
  // Slices through `at` (-1: the middle); null outputs are skipped. Throws
  // OUT_OF_RANGE for an `at` outside the grid.
  PreviewState read_slices(const std::array<int, 3>& at, float* x_slice, float* y_slice, float* z_slice);
  const fdk_volume& grid() const { return grid_; }

 private:
  PreviewState state_locked() const;
  void read_locked(float* out);  // scaled; throws the kept failure

  const fdk_volume grid_;
  const std::vector<double> nominal_;
  double total_weight_ = 0;
  mutable std::mutex mutex_;
  std::unique_ptr<PreviewSink> sink_;
  std::vector<unsigned char> added_;
  double added_weight_ = 0;
  int views_ = 0;
  bool complete_ = false;
  fdk_status failure_ = FDK_OK;
  std::string failure_message_;
  std::vector<float> scratch_;  // a whole read, for slices
};

}  // namespace fdk
