// Estimates two errors a nominal circular-scan geometry often has, from the
// scan's own projections: the detector's offset along u (the column through
// the rotation axis, the "centre of rotation") and its in-plane tilt.
//
// The estimator keeps, as views arrive, only what the estimate needs (a few
// detector rows of each view, within a memory limit), so a caller that
// pushes views one by one and keeps none (scanner firmware) gets an estimate
// without a second pass.
//
// Parametrisation: the corrected geometry of every view is the nominal one
// with projection_offset_x += offset_u_mm and in_plane_angle_deg +=
// tilt_deg (RTK's parameters, fdk_view). apply() does exactly that.
#pragma once
#include <fdk/fdk.h>

#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace fdk {

class ThreadPool;

namespace conjugate {
struct RowPlan;
struct KeptView;
}  // namespace conjugate
namespace symmetry {
class RowSums;
}  // namespace symmetry

struct GeometryEstimate {
  double offset_u_mm = 0;       // add to every view's projection_offset_x
  double offset_u_pixels = 0;   // the same in detector columns
  double tilt_deg = 0;          // add to every view's in_plane_angle_deg
  double offset_sigma_pixels = 0;  // one standard deviation
  double tilt_sigma_deg = 0;       // one standard deviation
  double confidence = 0;           // in [0, 1]; < 0.5: do not apply blindly
  int view_pairs = 0;              // pairs of views compared
  int views_used = 0;              // views that took part
  int rows_used = 0;               // detector rows kept per view
  uint32_t flags = 0;              // FDK_ESTIMATE_* bits (fdk.h)
  std::string basis;               // what it was computed from, in words
};

class GeometryEstimator {
 public:
  // `views`: the nominal RTK parameters of every announced view (a copy is
  // kept); `detector`: the projections' detector. `memory_limit`: bytes the
  // kept rows may take (0 = the estimator's default). Throws fdk::Error
  // (INVALID_ARGUMENT) when the scan cannot be estimated at all (fewer than
  // 2 views, a detector of fewer than 8 columns).
  GeometryEstimator(std::vector<fdk_view> views, const fdk_detector& detector, uint64_t memory_limit = 0);
  ~GeometryEstimator();

  // Host memory the kept rows take at most, for the budgets.
  uint64_t memory_bytes() const;

  // Keeps what the estimate needs of view `index` (rows `pitch_bytes`
  // apart; pixels already checked finite by the caller). Thread-safe
  // against estimate(); views may arrive in any order, a view pushed again
  // replaces the earlier one. `pool`: threads that share the rows' copy
  // (the push's own), or null for the caller's alone.
  void add_view(int index, const float* pixels, size_t pitch_bytes, ThreadPool* pool = nullptr);
  // View `index` was measured at `view` instead of its nominal geometry (a
  // push with its own geometry); the estimate then uses it for that view.
  void set_view(int index, const fdk_view& view);

  // The estimate from the views kept so far. Never throws for lack of
  // data: with too few usable view pairs it returns confidence 0 and a
  // basis that says why (flags without FDK_ESTIMATE_OFFSET/TILT). The one
  // start_estimate() began, or an earlier one, when no view was kept or
  // replaced since.
  GeometryEstimate estimate() const;
  // Begins the estimate of the views kept so far on a thread of its own
  // (the scan is complete: fdk_finish), so that it is ready by the time
  // the GPUs have backprojected. Nothing happens when no thread can start.
  void start_estimate();

  // `view` corrected by `e` (projection_offset_x and in_plane_angle_deg).
  static fdk_view apply(const fdk_view& view, const GeometryEstimate& e);

  int num_views() const { return static_cast<int>(views_.size()); }

 private:
  std::vector<fdk_view> views_;
  fdk_detector detector_{};
  uint64_t memory_limit_ = 0;
  std::shared_ptr<const conjugate::RowPlan> plan_;  // detector rows kept
  int stride_ = 1;  // views kept: every stride_-th one
  // Per view, null until added; immutable once kept, so estimate() copies
  // the pointers under the lock and reads the rows without it.
  std::vector<std::shared_ptr<const conjugate::KeptView>> kept_;
  std::shared_ptr<uint16_t> block_;  // the kept views' rows, one slot each
  size_t slot_size_ = 0;             // codes per slot
  std::vector<char> slot_taken_;     // per slot: written by a view's first push (mutex_)
  // The kept views' rows summed (axis_moments.hpp): the tilt's first moments.
  std::unique_ptr<symmetry::RowSums> sums_;
  int sum_stride_ = 1;  // of the kept views, those in the sums: every sum_stride_-th
  uint64_t revision_ = 0;            // views kept or replaced so far (mutex_)
  mutable std::mutex mutex_;

  // The kept rows and views at one moment: estimates work on a copy, as
  // views may be kept or replaced while they run.
  struct Snapshot {
    std::vector<std::shared_ptr<const conjugate::KeptView>> kept;
    std::vector<fdk_view> views;
    uint64_t revision = 0;
  };
  Snapshot snapshot() const;
  GeometryEstimate compute(const Snapshot& s) const;

  // The last estimate and the revision it saw; the one start_estimate()
  // began. Declared last: destroyed first, the pending one is waited for
  // before the rows it reads go.
  mutable std::mutex result_mutex_;
  mutable std::optional<GeometryEstimate> result_;
  mutable uint64_t result_revision_ = 0;
  mutable std::future<GeometryEstimate> pending_;
  mutable uint64_t pending_revision_ = 0;
};

}  // namespace fdk
