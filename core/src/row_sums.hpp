// Every row of a full scan's views, summed as the views arrive, for the
// mirror fit of the tilt (axis_symmetry.hpp) over the detector's whole
// height: the estimator's kept bands span half of it, 40 rows compared of
// three bands of about 17, and in a noisy scan that left the tilt loose
// (docs/ACCURACY.md, session 43). Internal to core/: not a header of the
// library's interface.
#pragma once
#include <fdk/fdk.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace fdk {
class ThreadPool;
}

namespace fdk::symmetry {

// Every other view by angle from `part` (views sorted by angle in
// `by_angle`: (angle in degrees, index)), each weighted by half the gaps to
// its neighbours among them; none when a gap exceeds three times their mean
// (not a full circle).
std::vector<std::pair<size_t, double>> weighted_half(const std::vector<std::pair<double, size_t>>& by_angle,
                                                     size_t part);

// The views' rows summed in two halves (every other view by angle, each a
// full circle weighted by its gaps, as weighted_half): at most 256 rows,
// each the middle one or two rows of a bin of `row_bin` (so centred where
// the bin is), every column.
class RowSums {
 public:
  // `views`: the views that will be added (their nominal geometry); rows
  // and columns of the detector; `memory_limit`: bytes the sums may take.
  // Not usable (add() does nothing) where the views are not one circle of
  // one geometry (only the gantry angle differs, no in-plane or
  // out-of-plane angle: the sum's symmetry needs every view alike but for
  // the angle), do not cover it, or the limit holds too few rows.
  RowSums(const std::vector<fdk_view>& views, int rows, int columns, uint64_t memory_limit);

  bool usable() const { return !half_.empty(); }
  uint64_t memory_bytes() const;

  // Adds view `index` (of the views given at construction), rows
  // `pitch_bytes` apart; `pool`: threads to share the rows with. Thread-safe.
  void add(size_t index, const float* pixels, size_t pitch_bytes, ThreadPool* pool);

  struct Halves {
    int row_bin = 1, rows = 0, columns = 0;  // binned rows
    std::vector<double> sum[2];              // rows x columns each
  };
  // The two halves, or false while a view is missing, was added twice (its
  // first rows are not kept to take out again), or `views` (the geometry
  // now) moved one off the circle it was weighted on.
  bool halves(const std::vector<fdk_view>& views, Halves& out) const;

 private:
  std::vector<fdk_view> nominal_;
  std::vector<signed char> half_;  // per view: 0, 1, or -1 (in neither)
  std::vector<double> weight_;
  int row_bin_ = 1, rows_ = 0, columns_ = 0;
  mutable std::mutex mutex_;
  std::vector<float> sum_[2];
  std::vector<int> added_;  // per view: times added
};

}  // namespace fdk::symmetry
