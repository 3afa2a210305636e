// Every row of a full scan's views, kept binned as the views arrive and
// summed at estimate time, for the mirror fit of the tilt
// (axis_symmetry.hpp) over the detector's whole height: the estimator's
// kept bands span half of it, 40 rows compared of three bands of about 17,
// and in a noisy scan that left the tilt loose (docs/ACCURACY.md, session
// 43). Kept per view, not added into running sums, so that a view pushed
// again replaces its rows and the sums never depend on the pushes' order.
// Internal to core/: not a header of the library's interface.
#pragma once
#include <fdk/fdk.h>

#include <cstddef>
#include <cstdint>
#include <memory>
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

// Each view's rows binned: at most 256 rows, each the sum of a bin of
// `row_bin` detector rows read at its middle one or two (so centred where
// the bin is), and at most 256 columns, each the sum of `column_bin`;
// 16 bits against the view's own range, as the kept bands.
class RowSums {
 public:
  // `views`: the views that may be added; rows and columns of the
  // detector; `memory_limit`: bytes the binned rows may take. Not usable
  // (add() does nothing) where the limit holds too few rows.
  RowSums(size_t views, int rows, int columns, uint64_t memory_limit);

  bool usable() const { return rows_ > 0; }
  uint64_t memory_bytes() const;

  // Keeps view `index`'s binned rows (rows `pitch_bytes` apart), replacing
  // those of an earlier push; `pool`: threads to share the rows with (null:
  // the caller's alone; the codes are the same either way). Thread-safe.
  void add(size_t index, const float* pixels, size_t pitch_bytes, ThreadPool* pool);

  struct Halves {
    int row_bin = 1, column_bin = 1, rows = 0, columns = 0;  // binned rows and columns
    std::vector<double> sum[2];                              // rows x columns each
    int views = 0;                                           // views in the two together
  };
  // The two halves of the views kept (every other one by angle, each a full
  // circle weighted by its gaps, as weighted_half) at their geometry
  // `views`, or false where they are not one circle of one geometry (only
  // the gantry angle differs, no in-plane or out-of-plane angle: the sum's
  // symmetry needs every view alike but for the angle) or do not cover it.
  bool halves(const std::vector<fdk_view>& views, Halves& out, ThreadPool* pool) const;

 private:
  struct Kept {
    std::shared_ptr<uint16_t> q;  // rows x columns
    float base = 0, step = 0;
  };
  int row_bin_ = 1, column_bin_ = 1, rows_ = 0, columns_ = 0;
  std::shared_ptr<uint16_t> block_;  // a slot per view for its first push, touched at construction
  std::vector<char> slot_taken_;
  std::vector<std::shared_ptr<const Kept>> kept_;  // per view, null until added
  mutable std::mutex mutex_;
};

}  // namespace fdk::symmetry
