// The reconstruction pipeline behind one fdk_context: validates the
// configuration, plans the slabs, takes projections (weight, filter,
// compress), and computes slabs on demand through the chosen backend.
#pragma once
#include <fdk/fdk.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fdk/core/backend.hpp"
#include "fdk/core/geometry_estimator.hpp"
#include "fdk/core/preview.hpp"
#include "fdk/core/slab_cache.hpp"
#include "fdk/core/slab_planner.hpp"
#include "fdk/core/thread_pool.hpp"

namespace fdk {

class IngestPipeline;
struct Part;  // fdk/core/partition.hpp

// Validated, defaults-resolved settings (the configuration minus geometry).
struct Settings {
  fdk_config config{};  // pointers cleared: arrays are copied into the model
  int num_threads = 1;
  uint64_t host_budget = 0;
};

// Builds the backend the C ABI layer chose; may throw fdk::Error.
using BackendFactory = std::function<std::unique_ptr<Backend>(const ScanModel&, const Settings&)>;

class Reconstruction {
 public:
  // Throws fdk::Error for an invalid configuration or an infeasible plan.
  Reconstruction(const fdk_config& config, const BackendFactory& make_backend);
  // Only the planes of `part` (one rank's share under libfdk_mpi): its
  // slabs are planned, computed and read within them, and its views hold
  // only the rows those planes need (push_rows).
  Reconstruction(const fdk_config& config, const BackendFactory& make_backend, const Part& part);
  ~Reconstruction();

  void push(int index, const float* pixels, size_t row_pitch_bytes, const fdk_view* view);
  // Rows [row_begin, row_end) of view `index`, the first at `pixels`: what
  // a rank was sent. The rows a view needs are rows_needed(); fewer leave
  // its slabs' reads failing with INTERNAL.
  void push_rows(int index, int row_begin, int row_end, const float* pixels, size_t row_pitch_bytes,
                 const fdk_view* view);
  // The index matrix of `view` (checked as a push would), for a sender
  // that cuts the rows each rank needs.
  IndexMatrix matrix_of(const fdk_view& view) const;
  const ScanModel& model() const { return model_; }
  void finish();
  // Waits until every pushed view is stored or failed and throws the
  // failures not yet reported (as finish would), without finishing.
  void settle();
  bool finished() const { return finished_.load(); }
  void read_slab(int slab, float* buffer, size_t buffer_bytes);
  // fdk_slab_ready: never waits for a push, finish or read in progress.
  // Backends that do not hold slabs themselves (Backend::slab_ready -1):
  // true when the slab is in the host cache; else it is requested from the
  // background thread (started here the first time), which computes the
  // requested slabs one at a time into the cache when the spare host budget
  // allows. Rethrows (once) the failure of the slab's background computation.
  bool slab_ready(int slab);

  // Lock-free queries (the plan is fixed at construction).
  int slab_count() const { return static_cast<int>(plan_.slabs.size()); }
  fdk_slab_info slab_info(int slab) const;
  fdk_progress progress() const;
  // The geometry estimate from the views pushed so far; INVALID_STATE when
  // the configuration did not ask for one (estimate_geometry).
  GeometryEstimate geometry_estimate() const;
  fdk_store_info store_info() const;
  // The live preview (fdk_read_preview): INVALID_STATE when the
  // configuration did not ask for one. Never waits for a push, finish or
  // read of the volume (the preview has its own lock).
  Preview& preview() const;
  fdk_plan_info plan_info() const;
  // Whether the store holds every announced view's worst case at the
  // configured precision (no view would be reduced to float16).
  bool store_holds_every_view() const {
    return store_fit(static_cast<uint64_t>(model_.views.size()), false) == FDK_STORE_FITS;
  }
  fdk_view_state view_state(int view, fdk_status* failure) const;

  fdk_timings timings();  // waits for a call in progress
  fdk_device_stats device_stats();  // waits for a call in progress

  void set_progress_callback(fdk_progress_fn fn, void* user_data);
  void cancel();
  // True on a thread inside this handle's progress callback: the calls that
  // wait for the call that invoked it (push, finish, reads, timings) refuse
  // with INVALID_STATE instead of deadlocking.
  bool in_own_callback() const;

 private:
  void check_usable() const;
  void make_preview(uint64_t& bookkeeping);
  void refuse_from_callback(const char* call) const;
  void check_read(int slab, const float* buffer, size_t buffer_bytes) const;
  // Copies the slab from the host cache when it is there (marking it read).
  bool copy_cached(int slab, float* buffer);
  void notify_progress();
  void mark_done(int slab);
  void record_done(int slab);  // op_mutex_ held; no progress callback
  uint64_t slab_bytes(int slab) const;
  // Whether `views` fit the store limit (fdk_plan_info.store_fit).
  fdk_store_fit store_fit(uint64_t views, bool reduce) const;
  // What the store and the plan's reserve leave of the host budget: the
  // bound on the host slab cache. Constant after finish (the store no
  // longer grows where the cache is used).
  uint64_t cache_capacity() const;
  // The background thread: computes requested slabs into the host cache.
  void background_loop();
  // cache_mutex_ held: a request the budget lets the thread compute now
  // (requests already cached are dropped), or -1.
  int next_request(uint64_t capacity);

  Settings settings_;
  ThreadPool ingest_pool_;  // the push path's copies into staging and checks
  ScanModel model_;
  std::unique_ptr<ProjectionStore> store_;
  // model_.meter, made once the plan exists; declared before backend_ so
  // that it outlives the backend's threads, which report into it.
  std::unique_ptr<BackprojectionMeter> meter_;
  std::unique_ptr<Backend> backend_;
  SlabPlan plan_;
  uint64_t store_limit_ = 0;  // bytes the compressed store may hold
  uint64_t bookkeeping_ = 0;  // per-view host memory besides the store
  fdk_store_fit store_fit_ = FDK_STORE_FITS;
  uint64_t voxels_outside_fov_ = 0;  // of the announced views, for fdk_plan_info
  std::vector<ViewGeometry> configured_views_;    // as announced, for pushes without geometry
  std::vector<IndexMatrix> configured_matrices_;
  std::unique_ptr<GeometryEstimator> estimator_;  // estimate_geometry = 1
  std::unique_ptr<Preview> preview_;              // preview = 1; before ingest_, which adds to it
  std::unique_ptr<IngestPipeline> ingest_;  // after backend_: stopped before it is released
  SlabCache cache_;
  std::vector<unsigned char> slab_done_;

  std::mutex op_mutex_;  // serialises push, finish, read and each background slab computation
  std::atomic<bool> cancelled_{false};
  std::atomic<int> slabs_done_{0};
  std::atomic<bool> finished_{false};  // set once, under op_mutex_

  // The host slab cache and the background computations (fdk_slab_ready).
  // Lock order: op_mutex_, then cache_mutex_; cache_mutex_ is never held
  // during a computation, a copy of a slab or a progress callback.
  std::mutex cache_mutex_;  // cache_, requests_ and everything below
  std::condition_variable background_wake_;
  std::thread background_;        // started by the first request
  std::deque<int> requests_;      // slabs to compute ahead, oldest first
  int background_slab_ = -1;      // taken by the thread, not yet cached
  int readers_waiting_ = 0;       // reads waiting for op_mutex_: go first
  bool stop_background_ = false;  // set by the destructor
  struct Failure {
    fdk_status code = FDK_OK;
    std::string message;
  };
  std::vector<Failure> background_failures_;  // per slab, reported once by slab_ready

  std::mutex callback_mutex_;
  fdk_progress_fn callback_ = nullptr;
  void* callback_user_ = nullptr;
};

}  // namespace fdk
