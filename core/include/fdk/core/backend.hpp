// The backend seam. The core owns the scan model (geometry, weights, the
// compressed store); a backend turns raw projections into filtered ones and
// filtered ones into slabs. The CPU backend lives in core/, the CUDA backend
// in kernels/; the C ABI layer picks one.
#pragma once
#include <fdk/fdk.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fdk/core/geometry.hpp"
#include "fdk/core/projection_store.hpp"
#include "fdk/core/ramp_filter.hpp"
#include "fdk/core/weights.hpp"

namespace fdk {

class ThreadPool;

// Everything a backend reads; owned by the pipeline. Fields marked "at
// finish" are final once fdk_finish has run.
struct ScanModel {
  fdk_volume volume{};
  fdk_detector input_detector{};  // as projections are pushed
  fdk_detector detector{};        // as filtered, stored and backprojected
  int input_column_offset = 0;    // filtered column of input column 0
  RampFilterParams filter;
  RedundancyPlan redundancy;
  std::vector<ViewGeometry> views;     // the measured geometry where pushed with one
  std::vector<IndexMatrix> matrices;   // index_matrix of each view
  std::vector<unsigned char> arrived;  // view pushed
  std::vector<double> view_weights;    // at finish: angular weight a_v (0: absent)
  std::vector<int> view_order;         // at finish: arrived views, ascending
  // At finish: 1 where the (x, z) column (index z * nx + x) is reconstructable,
  // i.e. every view (or, for an offset detector, it or its conjugate) sees it.
  std::vector<unsigned char> fov_mask;
  const ProjectionStore* store = nullptr;
  const std::atomic<bool>* cancelled = nullptr;

  size_t plane_floats() const {
    return static_cast<size_t>(volume.size[0]) * static_cast<size_t>(volume.size[2]);
  }
};

// Throws fdk::Error(FDK_ERROR_CANCELLED) once cancellation was requested.
void throw_if_cancelled(const ScanModel& model);

class Backend {
 public:
  virtual ~Backend() = default;
  virtual fdk_backend kind() const = 0;
  // Weights (with the geometry of this view) and ramp-filters one projection
  // (pixels as pushed) into `filtered`:
  // height rows of width floats, contiguous.
  virtual void filter(const ScanModel& model, const ViewGeometry& geometry, const float* pixels,
                      size_t pitch_bytes,
                      float* filtered) = 0;
  // Backprojects every arrived view into planes [y0, y1), written to `out`
  // in the public layout (x fastest, then z, then y).
  virtual void backproject(const ScanModel& model, int y0, int y1, float* out) = 0;
  // Bytes of host working memory a slab of `planes` planes needs beyond the
  // slab itself (for the planner's budget check).
  virtual uint64_t host_work_bytes(const ScanModel& model, int planes) const = 0;
};

}  // namespace fdk
