#include "fdk/core/preview.hpp"

#include <algorithm>
#include <cmath>
#include <new>

#include "fdk/core/checked.hpp"
#include "fdk/core/error.hpp"
#include "fdk/core/value_ranges.hpp"

namespace fdk {

namespace {
// A preview is for looking at, at the pace of a scan. 256 voxels a side
// cost (b) 24 % end to end on one H100 with the first GPU kernel; 128 an
// eighth of that, and +0.8 % with the kernel that replaced it
// (docs/DECISIONS.md, "The live preview").
constexpr int kDefaultPreviewExtent = 128;
}  // namespace

fdk_volume default_preview_grid(const fdk_volume& volume) {
  int largest = 1;
  for (int a = 0; a < 3; ++a) largest = std::max(largest, volume.size[a]);
  const int f = std::max(2, (largest + kDefaultPreviewExtent - 1) / kDefaultPreviewExtent);
  fdk_volume g{};
  for (int a = 0; a < 3; ++a) {
    const int n = volume.size[a];
    g.size[a] = std::max(1, (n + f - 1) / f);
    // The same extent and first edge: n * s = n' * s'.
    g.spacing[a] = volume.spacing[a] * n / g.size[a];
    g.origin[a] = volume.origin[a] - 0.5 * volume.spacing[a] + 0.5 * g.spacing[a];
  }
  return g;
}

fdk_volume preview_grid(const fdk_config& c) {
  const fdk_volume& p = c.preview_volume;
  if (p.size[0] == 0 && p.size[1] == 0 && p.size[2] == 0) return default_preview_grid(c.volume);
  static const char* axes[3] = {"x", "y", "z"};
  for (int a = 0; a < 3; ++a) {
    const std::string name = std::string("preview_volume ") + axes[a];
    if (p.size[a] < 1 || p.size[a] > ranges::kMaxExtent)
      fail(FDK_ERROR_INVALID_ARGUMENT, name + " size is " + std::to_string(p.size[a]) +
                                           ": it must lie within [1, 65536] (or every size 0: the default grid)");
    require_spacing(p.spacing[a], name + " spacing");
    require_coordinate(p.origin[a], name + " origin");
  }
  const size_t plane = checked_multiply<size_t>(static_cast<size_t>(p.size[0]), static_cast<size_t>(p.size[2]),
                                                "voxels of a preview plane");
  checked_multiply<size_t>(plane, 4 * static_cast<size_t>(p.size[1]), "bytes of the preview volume");
  return p;
}

std::vector<unsigned char> preview_fov_mask(const ScanModel& model, const fdk_volume& grid) {
  ScanModel m;
  m.volume = grid;
  m.input_detector = model.input_detector;
  m.detector = model.detector;
  m.input_column_offset = model.input_column_offset;
  m.redundancy = model.redundancy;
  m.views = model.views;
  for (const auto& v : m.views) m.matrices.push_back(index_matrix(v, grid, model.detector));
  m.arrived.assign(m.views.size(), 1);
  m.plane_end = grid.size[1];
  return field_of_view_mask(m, true, model.zero_outside_fov);
}

Preview::Preview(const ScanModel& model, const fdk_volume& grid, std::vector<double> nominal_weights,
                 std::unique_ptr<PreviewSink> sink)
    : grid_(grid), nominal_(std::move(nominal_weights)), sink_(std::move(sink)) {
  for (double w : nominal_) total_weight_ += w;
  added_.assign(model.views.size(), 0);
}

void Preview::add(const ScanModel& model, int view, const float* filtered) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t v = static_cast<size_t>(view);
  // A view pushed again (after its store failed) is in already.
  if (failure_ != FDK_OK || added_[v]) return;
  try {
    const IndexMatrix matrix = index_matrix(model.views[v], grid_, model.detector);
    sink_->add(model, view, matrix, nominal_[v], filtered);
    added_[v] = 1;
    added_weight_ += nominal_[v];
    ++views_;
  } catch (const Error& e) {
    failure_ = e.code();
    failure_message_ = std::string("the preview lost view ") + std::to_string(view) + ": " + e.what();
  } catch (const std::bad_alloc&) {
    failure_ = FDK_ERROR_OUT_OF_MEMORY;
    failure_message_ = "the preview lost view " + std::to_string(view) + ": out of host memory";
  } catch (...) {
    failure_ = FDK_ERROR_INTERNAL;
    failure_message_ = "the preview lost view " + std::to_string(view);
  }
}

void Preview::finish(const ScanModel& model) {
  std::lock_guard<std::mutex> lock(mutex_);
  bool complete = failure_ == FDK_OK;
  for (size_t v = 0; complete && v < added_.size(); ++v)
    complete = model.arrived[v] && added_[v] && model.view_weights[v] == nominal_[v];
  complete_ = complete;
}

PreviewState Preview::state_locked() const {
  PreviewState s;
  s.volume = grid_;
  s.views = views_;
  s.views_announced = static_cast<int>(added_.size());
  s.coverage = complete_ ? 1.0 : total_weight_ > 0 ? std::min(1.0, added_weight_ / total_weight_) : 0.0;
  if (complete_) s.flags |= FDK_PREVIEW_COMPLETE;
  if (failure_ != FDK_OK) s.flags |= FDK_PREVIEW_FAILED;
  s.on_gpu = sink_->on_gpu();
  s.memory_bytes = sink_->memory_bytes();
  return s;
}

PreviewState Preview::state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return state_locked();
}

void Preview::read_locked(float* out) {
  if (failure_ != FDK_OK) fail(failure_, failure_message_);
  sink_->read(out);
  // The partial sum over its share of the angular weight: grey values as
  // the finished volume's. Complete, it is the reconstruction (scale 1).
  const double coverage = state_locked().coverage;
  if (complete_ || coverage <= 0) return;
  const float scale = static_cast<float>(1.0 / coverage);
  const size_t n = static_cast<size_t>(grid_voxels(grid_));
  for (size_t i = 0; i < n; ++i) out[i] *= scale;
}

PreviewState Preview::read(float* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  read_locked(out);
  return state_locked();
}

PreviewState Preview::read_slices(const std::array<int, 3>& at_in, float* x_slice, float* y_slice, float* z_slice) {
  const int nx = grid_.size[0], ny = grid_.size[1], nz = grid_.size[2];
  std::array<int, 3> at = at_in;
  static const char* axes[3] = {"x", "y", "z"};
  for (int a = 0; a < 3; ++a) {
    if (at[a] == -1) at[a] = grid_.size[a] / 2;
    if (at[a] < 0 || at[a] >= grid_.size[a])
      fail(FDK_ERROR_OUT_OF_RANGE, std::string("at[") + std::to_string(a) + "] (" + axes[a] + ") is " +
                                       std::to_string(at_in[a]) + ": it must lie within [0, " +
                                       std::to_string(grid_.size[a]) + ") or be -1 (the middle)");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  scratch_.resize(static_cast<size_t>(grid_voxels(grid_)));
  read_locked(scratch_.data());
  const float* vol = scratch_.data();
  auto voxel = [&](int i, int j, int k) { return vol[(static_cast<size_t>(j) * nz + k) * nx + i]; };
  if (x_slice)
    for (int j = 0; j < ny; ++j)
      for (int k = 0; k < nz; ++k) x_slice[static_cast<size_t>(j) * nz + k] = voxel(at[0], j, k);
  if (y_slice) std::copy_n(vol + static_cast<size_t>(at[1]) * nz * nx, static_cast<size_t>(nz) * nx, y_slice);
  if (z_slice)
    for (int j = 0; j < ny; ++j)
      std::copy_n(vol + (static_cast<size_t>(j) * nz + at[2]) * nx, nx, z_slice + static_cast<size_t>(j) * nx);
  return state_locked();
}

}  // namespace fdk
