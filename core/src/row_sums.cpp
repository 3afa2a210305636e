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
// Binned columns at most: what the mirror fit bins the sum to.
constexpr int kMaxColumns = 256;
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

RowSums::RowSums(size_t views, int rows, int columns, uint64_t memory_limit) {
  if (views < 16 || rows < kMinRows || columns < 8) return;
  const int column_bin = (columns + kMaxColumns - 1) / kMaxColumns;
  const uint64_t row_bytes = sizeof(uint16_t) * static_cast<uint64_t>(columns / column_bin) * views;
  const int fit = static_cast<int>(std::min<uint64_t>(kMaxRows, memory_limit / row_bytes));
  if (fit < kMinRows) return;
  // Whole bins only (a bin's centre is where the mirror fit takes it).
  const int row_bin = (rows + fit - 1) / fit;
  if (rows / row_bin < kMinRows) return;
  row_bin_ = row_bin, column_bin_ = column_bin;
  columns_ = columns / column_bin;
  rows_ = rows / row_bin;
  const size_t slot = static_cast<size_t>(rows_) * static_cast<size_t>(columns_);
  // Zeroed (so touched) here, as the kept bands' block: the push then
  // writes into pages already there.
  block_ = std::shared_ptr<uint16_t>(new uint16_t[views * slot](), std::default_delete<uint16_t[]>());
  slot_taken_.assign(views, 0);
  kept_.resize(views);
}

uint64_t RowSums::memory_bytes() const {
  return usable() ? sizeof(uint16_t) * static_cast<uint64_t>(rows_) * static_cast<uint64_t>(columns_) * kept_.size()
                  : 0;
}

void RowSums::add(size_t index, const float* pixels, size_t pitch_bytes, ThreadPool* pool) {
  if (!usable() || index >= kept_.size()) return;
  // A bin's one or two middle rows (centred as the bin is): the sums of a
  // 4096-row detector read an eighth of each view, not all of it; (b)'s
  // 1012 rows, half (bins of 4).
  const int first = (row_bin_ - 1) / 2, count = 2 - row_bin_ % 2;
  const size_t slot = static_cast<size_t>(rows_) * static_cast<size_t>(columns_);
  // The binned values before their codes, in memory this thread keeps: a
  // fresh buffer a view (mapped anew above 128 KiB) faulted its pages in on
  // every push, and (b)'s push took 0.13 s longer (docs/PERFORMANCE.md).
  thread_local std::vector<float> scratch;
  scratch.assign(slot, 0.0f);
  float* const binned = scratch.data();
  const auto rows = [&](int begin, int end) {
    for (int j = begin; j < end; ++j) {
      float* to = binned + static_cast<size_t>(j) * static_cast<size_t>(columns_);
      for (int r = j * row_bin_ + first; r < j * row_bin_ + first + count; ++r) {
        const char* bytes = reinterpret_cast<const char*>(pixels) + static_cast<size_t>(r) * pitch_bytes;
        const float* from = reinterpret_cast<const float*>(bytes);
        for (int x = 0; x < columns_; ++x)
          for (int c = 0; c < column_bin_; ++c) to[x] += from[x * column_bin_ + c];
      }
    }
  };
  if (!pool) {
    rows(0, rows_);
  } else {
    const int tasks = std::min(rows_, 4 * pool->size());
    pool->parallel_for(tasks, [&](int t, int) { rows(rows_ * t / tasks, rows_ * (t + 1) / tasks); });
  }
  const auto [lo, hi] = std::minmax_element(binned, binned + slot);
  auto kv = std::make_shared<Kept>();
  kv->base = *lo;
  kv->step = (*hi - *lo) / 65535.0f;
  {
    // A view's first push writes its slot of the block; one pushed again
    // gets codes of its own, so that halves() reading the first never sees
    // them change.
    std::lock_guard<std::mutex> lock(mutex_);
    if (!slot_taken_[index]) {
      slot_taken_[index] = 1;
      kv->q = std::shared_ptr<uint16_t>(block_, block_.get() + index * slot);
    }
  }
  if (!kv->q) kv->q = std::shared_ptr<uint16_t>(new uint16_t[slot], std::default_delete<uint16_t[]>());
  uint16_t* q = kv->q.get();
  const float inverse = kv->step > 0 ? 1.0f / kv->step : 0.0f;
  for (size_t i = 0; i < slot; ++i)
    q[i] = static_cast<uint16_t>(std::min(65535.0f, (binned[i] - kv->base) * inverse + 0.5f));
  std::lock_guard<std::mutex> lock(mutex_);
  kept_[index] = std::move(kv);
}

bool RowSums::halves(const std::vector<fdk_view>& views, Halves& out, ThreadPool* pool) const {
  if (!usable() || views.size() != kept_.size()) return false;
  std::vector<std::shared_ptr<const Kept>> kept;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    kept = kept_;
  }
  std::vector<std::pair<double, size_t>> by_angle;
  const fdk_view* first = nullptr;
  for (size_t k = 0; k < kept.size(); ++k) {
    if (!kept[k]) continue;
    if (!first) first = &views[k];
    if (!on_circle(views[k], *first)) return false;
    by_angle.push_back({wrapped(views[k].gantry_angle_deg), k});
  }
  if (by_angle.size() < 16) return false;
  std::sort(by_angle.begin(), by_angle.end());
  const std::vector<std::pair<size_t, double>> part[2] = {weighted_half(by_angle, 0), weighted_half(by_angle, 1)};
  if (part[0].empty() || part[1].empty()) return false;
  out.row_bin = row_bin_, out.column_bin = column_bin_, out.rows = rows_, out.columns = columns_;
  out.views = static_cast<int>(by_angle.size());
  const size_t slot = static_cast<size_t>(rows_) * static_cast<size_t>(columns_);
  for (int h = 0; h < 2; ++h) {
    std::vector<double>& sum = out.sum[h];
    sum.assign(slot, 0.0);
    // By rows on the pool, each row's views in angle order: the same sums
    // on any number of threads.
    const auto rows = [&](int begin, int end) {
      for (const auto& [view, w] : part[h]) {
        const Kept& kv = *kept[view];
        for (size_t i = static_cast<size_t>(begin) * columns_; i < static_cast<size_t>(end) * columns_; ++i)
          sum[i] += w * (kv.base + kv.step * kv.q.get()[i]);
      }
    };
    if (!pool) {
      rows(0, rows_);
    } else {
      const int tasks = std::min(rows_, 4 * pool->size());
      pool->parallel_for(tasks, [&](int t, int) { rows(rows_ * t / tasks, rows_ * (t + 1) / tasks); });
    }
  }
  return true;
}

}  // namespace fdk::symmetry
