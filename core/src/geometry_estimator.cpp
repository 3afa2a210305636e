// Placeholder implementation: keeps rows, estimates nothing yet. The method
// lands with its accuracy tests (issue 41).
#include "fdk/core/geometry_estimator.hpp"

#include <algorithm>
#include <cstring>

#include "fdk/core/error.hpp"

namespace fdk {

namespace {
constexpr uint64_t kDefaultMemoryLimit = uint64_t{256} << 20;
constexpr int kMaxRows = 32;
}  // namespace

GeometryEstimator::GeometryEstimator(std::vector<fdk_view> views, const fdk_detector& detector, uint64_t memory_limit)
    : views_(std::move(views)), detector_(detector), memory_limit_(memory_limit ? memory_limit : kDefaultMemoryLimit) {
  if (views_.size() < 2) fail(FDK_ERROR_INVALID_ARGUMENT, "geometry estimation needs at least 2 views");
  if (detector_.size[0] < 8) fail(FDK_ERROR_INVALID_ARGUMENT, "geometry estimation needs at least 8 detector columns");
  const int rows = std::min(kMaxRows, detector_.size[1]);
  for (int r = 0; r < rows; ++r) rows_.push_back(static_cast<int>((static_cast<int64_t>(2 * r + 1) * detector_.size[1]) / (2 * rows)));
  kept_.resize(views_.size());
}

uint64_t GeometryEstimator::memory_bytes() const {
  return static_cast<uint64_t>(views_.size()) * rows_.size() * static_cast<uint64_t>(detector_.size[0]) * sizeof(float);
}

void GeometryEstimator::add_view(int index, const float* pixels, size_t pitch_bytes) {
  const size_t nu = static_cast<size_t>(detector_.size[0]);
  std::vector<float> rows(rows_.size() * nu);
  for (size_t r = 0; r < rows_.size(); ++r)
    std::memcpy(rows.data() + r * nu, reinterpret_cast<const char*>(pixels) + static_cast<size_t>(rows_[r]) * pitch_bytes,
                nu * sizeof(float));
  std::lock_guard<std::mutex> lock(mutex_);
  kept_.at(static_cast<size_t>(index)) = std::move(rows);
}

void GeometryEstimator::set_view(int index, const fdk_view& view) {
  std::lock_guard<std::mutex> lock(mutex_);
  views_.at(static_cast<size_t>(index)) = view;
}

GeometryEstimate GeometryEstimator::estimate() const {
  GeometryEstimate e;
  std::lock_guard<std::mutex> lock(mutex_);
  e.rows_used = static_cast<int>(rows_.size());
  e.basis = "not estimated: the method is not implemented yet";
  return e;
}

fdk_view GeometryEstimator::apply(const fdk_view& view, const GeometryEstimate& e) {
  fdk_view v = view;
  v.projection_offset_x += e.offset_u_mm;
  v.in_plane_angle_deg += e.tilt_deg;
  return v;
}

}  // namespace fdk
