#include "row_sums.hpp"

#include <algorithm>
#include <cmath>

#include "fdk/core/thread_pool.hpp"

namespace fdk::symmetry {
namespace {

// Binned rows at most: the mirror fit compares about 40 of them and reads
// its mirror images between them, along v. 128 read one row of three on a
// 300-row detector, and a noiseless small head's tilt came out 0.067 deg
// off (sigma 0.022): rows read apart alias along v. With 256 a detector of
// up to 512 rows is read whole; a taller one's bins at their middle two
// rows (for the push's time), where an object a few bins tall may alias
// again (not measured).
constexpr int kMaxRows = 256;
// Binned rows a tilt needs: the fit's reach along v and more.
constexpr int kMinRows = 16;

bool close(double a, double b) { return std::fabs(a - b) <= 1e-6 * (1 + std::fabs(a)); }

// One circular orbit of one geometry: the sum's symmetry needs every view
// to see the object alike but for the angle.
bool on_circle(const fdk_view& v, const fdk_view& first) {
  return close(v.sid, first.sid) && close(v.sdd, first.sdd) && close(v.source_offset_x, first.source_offset_x) &&
         close(v.source_offset_y, first.source_offset_y) && close(v.projection_offset_x, first.projection_offset_x) &&
         close(v.projection_offset_y, first.projection_offset_y) && std::fabs(v.in_plane_angle_deg) <= 1e-9 &&
         std::fabs(v.out_of_plane_angle_deg) <= 1e-9;
}

double wrapped(double deg) { return std::fmod(std::fmod(deg, 360.0) + 360.0, 360.0); }

}  // namespace

std::vector<std::pair<size_t, double>> weighted_half(const std::vector<std::pair<double, size_t>>& by_angle,
                                                     size_t part) {
  std::vector<std::pair<double, size_t>> mine;
  for (size_t i = part; i < by_angle.size(); i += 2) mine.push_back(by_angle[i]);
  const size_t m = mine.size();
  std::vector<std::pair<size_t, double>> out;
  for (size_t i = 0; i < m; ++i) {
    const double next = i + 1 < m ? mine[i + 1].first : mine[0].first + 360;
    const double prev = i > 0 ? mine[i - 1].first : mine[m - 1].first - 360;
    if (next - mine[i].first > 3 * 360.0 / static_cast<double>(m)) return {};
    out.push_back({mine[i].second, 0.5 * (next - prev)});
  }
  return out;
}

RowSums::RowSums(const std::vector<fdk_view>& views, int rows, int columns, uint64_t memory_limit) {
  if (views.size() < 16 || rows < kMinRows || columns < 8) return;
  for (const fdk_view& v : views)
    if (!on_circle(v, views[0])) return;
  std::vector<std::pair<double, size_t>> by_angle;
  for (size_t k = 0; k < views.size(); ++k) by_angle.push_back({wrapped(views[k].gantry_angle_deg), k});
  std::sort(by_angle.begin(), by_angle.end());
  const auto even = weighted_half(by_angle, 0), odd = weighted_half(by_angle, 1);
  if (even.empty() || odd.empty()) return;
  const uint64_t row_bytes = 2 * sizeof(float) * static_cast<uint64_t>(columns);
  const int fit = static_cast<int>(std::min<uint64_t>(kMaxRows, memory_limit / row_bytes));
  if (fit < kMinRows) return;
  // Whole bins only (a bin's centre is where the mirror fit takes it).
  row_bin_ = (rows + fit - 1) / fit;
  rows_ = rows / row_bin_;
  if (rows_ < kMinRows) return;
  columns_ = columns;
  nominal_ = views;
  weight_.assign(views.size(), 0.0);
  added_.assign(views.size(), 0);
  for (int h = 0; h < 2; ++h) sum_[h].assign(static_cast<size_t>(rows_) * static_cast<size_t>(columns), 0.0f);
  std::vector<signed char> half(views.size(), -1);
  for (const auto& [k, w] : even) half[k] = 0, weight_[k] = w;
  for (const auto& [k, w] : odd) half[k] = 1, weight_[k] = w;
  half_ = std::move(half);
}

uint64_t RowSums::memory_bytes() const {
  return usable() ? 2 * sizeof(float) * static_cast<uint64_t>(rows_) * static_cast<uint64_t>(columns_) : 0;
}

void RowSums::add(size_t index, const float* pixels, size_t pitch_bytes, ThreadPool* pool) {
  if (!usable() || index >= half_.size() || half_[index] < 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  // A view added twice spoils the sums (its first rows are not kept to take
  // out again): halves() then gives none.
  if (++added_[index] > 1) return;
  float* to = sum_[half_[index]].data();
  const float w = static_cast<float>(weight_[index]);
  // A bin's one or two middle rows (centred as the bin is): the sums of a
  // 4096-row detector read an eighth of each view, not all of it; (b)'s
  // 1012 rows, half (bins of 4).
  const int first = (row_bin_ - 1) / 2, count = 2 - row_bin_ % 2;
  const auto rows = [&](int begin, int end) {
    for (int j = begin; j < end; ++j) {
      float* row = to + static_cast<size_t>(j) * static_cast<size_t>(columns_);
      for (int r = j * row_bin_ + first; r < j * row_bin_ + first + count; ++r) {
        const char* bytes = reinterpret_cast<const char*>(pixels) + static_cast<size_t>(r) * pitch_bytes;
        const float* from = reinterpret_cast<const float*>(bytes);
        for (int k = 0; k < columns_; ++k) row[k] += w * from[k];
      }
    }
  };
  if (!pool) return rows(0, rows_);
  const int tasks = std::min(rows_, 4 * pool->size());
  pool->parallel_for(tasks, [&](int t, int) { rows(rows_ * t / tasks, rows_ * (t + 1) / tasks); });
}

bool RowSums::halves(const std::vector<fdk_view>& views, Halves& out) const {
  if (!usable() || views.size() != nominal_.size()) return false;
  for (size_t k = 0; k < views.size(); ++k)
    if (half_[k] >= 0 && (!on_circle(views[k], nominal_[0]) ||
                          !close(views[k].gantry_angle_deg, nominal_[k].gantry_angle_deg)))
      return false;
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t k = 0; k < half_.size(); ++k)
    if (half_[k] >= 0 && added_[k] != 1) return false;
  out.row_bin = row_bin_, out.rows = rows_, out.columns = columns_;
  for (int h = 0; h < 2; ++h) out.sum[h].assign(sum_[h].begin(), sum_[h].end());
  return true;
}

}  // namespace fdk::symmetry
