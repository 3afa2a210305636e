// The backend seam. The core owns the scan model (geometry, weights, the
// compressed store); a backend turns raw projections into filtered ones and
// filtered ones into slabs. The CPU backend lives in core/, the CUDA backend
// in kernels/; the C ABI layer picks one.
#pragma once
#include <fdk/fdk.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "fdk/core/backprojection_meter.hpp"
#include "fdk/core/geometry.hpp"
#include "fdk/core/projection_store.hpp"
#include "fdk/core/ramp_filter.hpp"
#include "fdk/core/weights.hpp"

namespace fdk {

class ThreadPool;
class PreviewSink;  // fdk/core/preview.hpp

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
  bool zero_outside_fov = false;       // fdk_config.outside_fov == FDK_OUTSIDE_FOV_ZERO
  std::vector<std::array<int, 2>> slabs;  // the slab plan ([y0, y1) of each), set once the backend exists
  // The planes this process computes: the whole volume, or one rank's
  // share under libfdk_mpi (fdk::Part). Slabs lie within them.
  int plane_begin = 0, plane_end = 0;
  // Per view, the detector rows [first, end) this process was given and
  // filters and stores (all rows unless a Part says otherwise); set at
  // push, before the view is filtered. Rows outside are zero in staging.
  std::vector<std::array<int, 2>> row_windows;
  const ProjectionStore* store = nullptr;
  const std::atomic<bool>* cancelled = nullptr;
  // Where backends report backprojection work as it is done (fdk_progress);
  // null in tests that drive a backend alone.
  BackprojectionMeter* meter = nullptr;

  // The rows of view `view` this process holds (row_windows; all rows for
  // a model built without them).
  std::array<int, 2> rows_of(int view) const {
    return row_windows.empty() ? std::array<int, 2>{0, detector.size[1]} : row_windows[static_cast<size_t>(view)];
  }
  // Whether this process computes only part of the volume (libfdk_mpi).
  bool partial() const { return plane_begin != 0 || plane_end != volume.size[1]; }

  size_t plane_floats() const {
    return static_cast<size_t>(volume.size[0]) * static_cast<size_t>(volume.size[2]);
  }
};

// Throws fdk::Error(FDK_ERROR_CANCELLED) once cancellation was requested.
void throw_if_cancelled(const ScanModel& model);

// Host memory that projections pass through on their way into a backend
// (pinned for a GPU, so transfers run at DMA speed).
class StagingBuffer {
 public:
  virtual ~StagingBuffer() = default;
  virtual float* data() = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual fdk_backend kind() const = 0;
  // A staging buffer of `floats` floats for filter()'s input and output.
  virtual std::unique_ptr<StagingBuffer> make_staging(size_t floats) const;
  // Weights (with `geometry`, the geometry of view `view`) and ramp-filters
  // one projection (pixels as pushed, in a staging buffer) into `filtered`
  // (a staging buffer): height rows of model.detector.size[0] floats,
  // contiguous. Called on the ingest pipeline's filter lanes (threads):
  // `lane` is 0 .. filter_lanes() - 1, each lane's calls come one at a
  // time in push order, and with one lane that is every view's order.
  // `filtered` is null when keeps_filtered(): the
  // store fetches the view later through read_filtered(), and the call may
  // return once `pixels` is no longer needed, the filtering going on in the
  // backend (which then orders its own later uses of the view), or, when
  // uploads_in_flight() > 0, even before: see wait_uploaded().
  virtual void filter(const ScanModel& model, int view, const ViewGeometry& geometry, const float* pixels,
                      size_t pitch_bytes, float* filtered, int lane) = 0;
  // How many views filter() may take at once, on lanes of their own (a
  // streamed volume on several GPUs filters on each of them). 1 for a
  // backend whose filter() must see the views in one order. The ingest
  // pipeline uses one lane while a live preview is on.
  virtual int filter_lanes() const { return 1; }
  // True when the backend filters and backprojects on the host's cores
  // (the CPU backend): work the push could share out over its pool (the
  // geometry estimate's kept rows) then stays on the caller's thread, since
  // those cores are the backend's.
  virtual bool works_on_host_cores() const { return false; }
  // How many views' filter() calls may return while their `pixels` are
  // still being read (uploaded to GPUs side by side). 0: filter() returns
  // once `pixels` is free.
  virtual int uploads_in_flight() const { return 0; }
  // Waits until the `pixels` passed to filter() for `view` are no longer
  // read, on the lane that filtered it, each view once, oldest first. Never
  // throws: a failed upload is reported by the work that reads the view.
  virtual void wait_uploaded(int view) noexcept {}
  // True when the backend keeps every filtered view itself (a resident GPU
  // volume): the push path then does not wait for compression, and
  // fdk_finish does not wait for the store either (slabs are read from the
  // backend's volume).
  virtual bool keeps_filtered() const { return false; }
  // Copies filtered view `view` into `out` (a staging buffer). Only when
  // keeps_filtered(); any thread.
  virtual void read_filtered(const ScanModel& model, int view, float* out) {}
  // Right after filter(), on the same lane: a backend may backproject the
  // view into slabs it keeps resident. The view is not yet in the store.
  virtual void view_filtered(const ScanModel& model, int view) {}
  // A view passed to view_filtered did not reach the store (budget, memory):
  // what was accumulated from it must not count. Any thread.
  virtual void view_dropped(const ScanModel& model, int view) {}
  // fdk_finish: the view weights and order are final.
  virtual void finish(const ScanModel& model) {}
  // Backprojects every arrived view into planes [y0, y1), written to `out`
  // in the public layout (x fastest, then z, then y). Only after finish.
  virtual void backproject(const ScanModel& model, int y0, int y1, float* out) = 0;
  // Bytes of host working memory a slab of `planes` planes needs beyond the
  // slab itself (for the planner's budget check).
  virtual uint64_t host_work_bytes(const ScanModel& model, int planes) const = 0;
  // True when a computed slab is worth a host copy for later reads: the CPU
  // recomputes slowly; a GPU recomputes faster than the copy costs.
  virtual bool caches_slabs() const { return true; }
  // True when the backend holds the whole volume itself (on a GPU): reads
  // then copy from it directly and the host slab cache is not used.
  virtual bool keeps_volume() const { return false; }
  // Adds the backend's own measurements (backprojection, upload, download).
  virtual void add_timings(fdk_timings& t) const {}
  // fdk_slab_ready for planes [y0, y1) (a slab of the plan): 1 when the
  // backend holds them computed (a read copies them without computing); 0
  // when not yet, and the backend then computes them in the background by
  // itself; -1 when the backend does not hold slabs (the Reconstruction's
  // host slab cache and its background thread decide). Any thread, also
  // while another is inside backproject(); never blocks; only after finish.
  virtual int slab_ready(const ScanModel& model, int y0, int y1) { return -1; }
  // Fills the per-GPU figures of fdk_get_device_stats (num_devices and the
  // arrays); the CPU backend adds nothing (num_devices stays 0). Called
  // with no push, finish or slab computation in progress.
  virtual void add_device_stats(fdk_device_stats& stats) const {}
  // The largest slab worth making when the budgets allow: the CPU keeps
  // slabs small for cache and host memory; a GPU streaming from the store
  // wants them thick, since every slab re-reads its row windows.
  virtual uint64_t preferred_slab_bytes(const ScanModel& model) const { return uint64_t{256} << 20; }
  // The thickest slab the backend can compute at once (device memory).
  virtual int max_slab_planes(const ScanModel& model) const { return model.volume.size[1]; }
  // Automatic slabs start on multiples of this many planes (plan_slabs),
  // where the backend computes fastest.
  virtual int slab_alignment() const { return 1; }
  // Streamed slabs: how many workers (GPUs) compute them at once, and
  // how many of the first slabs are computed during the scan (one per GPU
  // at most), so that only the rest are shared out after fdk_finish
  // (plan_slabs evens those out).
  virtual int slab_workers() const { return 1; }
  virtual int slabs_during_scan() const { return 0; }
  // The live preview's sum over `grid` (fdk_config.preview), where the
  // backend has the filtered views: on a GPU, or on the CPU threads.
  // Called once, at fdk_create, after the backend is made. Null: none.
  virtual std::unique_ptr<PreviewSink> make_preview_sink(const ScanModel& model, const fdk_volume& grid);
};

// The field of view: 1 where the (x, z) column (index z * nx + x) is
// reconstructable from the views (the announced ones when `nominal`, else
// those that arrived): every untilted view sees it within the columns it
// measures (used_columns: for half-fan, the band symmetric in fan angle
// about the axis ray). Tilted views do not narrow it; backprojectors check
// them voxel by voxel. All ones unless `zero_outside` (fdk_outside_fov):
// the backprojectors skip the zeros, which stay 0.
std::vector<unsigned char> field_of_view_mask(const ScanModel& model, bool nominal, bool zero_outside);
// Voxels of the volume outside a mask (its zero columns times the planes).
uint64_t voxels_outside(const ScanModel& model, const std::vector<unsigned char>& mask);

}  // namespace fdk
