// The push path behind fdk_push_projection. The caller's thread checks a
// projection and copies it into a staging slot, then returns. One filter
// thread weights and filters the views in push order (so a backend that
// backprojects them into resident slabs sees one deterministic order), or
// one per lane where the backend filters several views at once
// (Backend::filter_lanes: a streamed volume's GPUs each filter), and
// store workers compress and commit them. A fixed number of slots bounds the
// memory: a push waits for a free one. A slot is free once its view is
// filtered; the filtered view waits for the store in a buffer of its own
// (as many as slots). When the backend keeps the filtered
// views itself (a resident GPU volume), a slot is free once the projection
// is uploaded (the backend's filter call may return before, so that uploads
// to several GPUs overlap: Backend::uploads_in_flight; its GPUs order the
// rest themselves), and the store, which that backend never reads back,
// compresses the views after fdk_finish (between and after reads), not during the scan:
// the copies of the pushes need the memory bus (measured: (a) pushed at
// 4.4 GB/s with twelve workers compressing alongside).
//
// A view admitted while the store's worst case still fits the budget is
// processed in the background; near the budget the push waits for its own
// view to be stored, so a BUDGET refusal is reported by the push that caused
// it. Every failure after a push returned (device, memory) is kept and
// reported by the next push or seal, all of them at once, each naming its
// view, which is then FAILED (not stored; it may be pushed again).
#pragma once
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fdk/core/backend.hpp"

namespace fdk {

class ThreadPool;
class Preview;

class IngestPipeline {
 public:
  struct Options {
    int store_workers = 1;
    int slots = 2;
    uint64_t store_limit = 0;  // bytes the compressed store may hold
    // FDK_STORE_REDUCE_PRECISION: a float32 store keeps a view as float16
    // while the views still to come would not fit at float32.
    bool reduce_precision = false;
  };

  // Workers and slots for `num_threads` threads (store_limit left 0):
  // one slot per store worker and a few to keep the filter busy, fewer
  // when the host budget is tight.
  static Options sized_for(const ScanModel& model, int num_threads, uint64_t host_budget);
  // Host staging the pipeline allocates (slots, and per-worker buffers
  // when the backend keeps the filtered views).
  static uint64_t staging_bytes(const ScanModel& model, const Options& options, bool backend_keeps_filtered);

  // `preview` (may be null): every view filtered is also added to it, on
  // the filter thread, right after the backend's view_filtered (one lane
  // then, whatever the backend could take).
  IngestPipeline(ScanModel& model, ProjectionStore& store, Backend& backend, Options options,
                 Preview* preview = nullptr);
  // Stops the threads after the views they are working on; queued views
  // are dropped. No call may be in progress.
  ~IngestPipeline();
  IngestPipeline(const IngestPipeline&) = delete;
  IngestPipeline& operator=(const IngestPipeline&) = delete;

  // One view (calls serialised by the caller). Checks every pixel is
  // finite while copying them on `pool`; sets the view's geometry and matrix
  // in the model, and model.arrived once it is filtered. Throws fdk::Error:
  // INVALID_ARGUMENT, DUPLICATE, the failures of earlier views not yet
  // reported (and then does nothing else), or this view's own failure when
  // it had to wait for the store (BUDGET near the limit).
  // `pixels` holds rows [row_begin, row_end) of the view (all of them on
  // one machine); the others are zero in staging (model.row_windows).
  void push(int view, const ViewGeometry& geometry, const IndexMatrix& matrix, const float* pixels,
            size_t pitch_bytes, ThreadPool& pool, int row_begin, int row_end);
  // No more views: waits until every pushed view is filtered (and stored,
  // unless the backend keeps the filtered views), then throws the failures
  // not yet reported, or INVALID_STATE when no view was accepted (either way
  // nothing changes: the pipeline stays open), or seals it: model.arrived is
  // final, and a later store failure only leaves the view out of the store.
  void seal();
  // seal()'s wait and report, without sealing: libfdk_mpi's ranks learn
  // whether every view they were sent is stored before any of them
  // finishes, so that no rank finishes without a view another still lacks.
  void settle();
  // While a guard lives, and for kReadQuiet after the last one ends,
  // background compression after seal() pauses: it would compete with slab
  // downloads for the bus and the CPU, and reads come back to back (a
  // pause only while a read runs let twelve workers start 16 MiB views
  // between reads: (c) read into pageable memory on four H200s spent
  // 3.8 s compressing during 1.8 s of reads).
  class ReadGuard {
   public:
    explicit ReadGuard(IngestPipeline& p);
    ~ReadGuard();

   private:
    IngestPipeline& p_;
  };

  // Wakes a push waiting for a staging slot after a cancel (it then fails
  // with CANCELLED).
  void wake();

  // Views pushed and not failed (stored or on their way).
  int views_accepted() const { return accepted_.load(); }
  // Where view `view` stands (fdk_view_state), and for a FAILED view the
  // status that lost it (else FDK_OK).
  fdk_view_state view_state(int view, fdk_status* failure) const;
  double filter_seconds() const;  // summed over the lanes
  double store_seconds() const;  // compression, summed over the workers

 private:
  // settle()'s wait and report, mutex_ held.
  void settle_locked(std::unique_lock<std::mutex>& lock);
  struct Slot {
    std::unique_ptr<StagingBuffer> raw;
    // Rows of `raw` that may hold something other than zeros (all of them
    // at first): a push of a band zeroes only these outside its band.
    int dirty_begin = 0, dirty_end = std::numeric_limits<int>::max();
  };
  // One pushed view on its way.
  struct Job {
    int view = -1;
    int slot = -1;           // its staging slot (the pixels pushed), until filtered
    int filtered = -1;       // its filtered buffer (unless the backend keeps the views), until stored
    bool waited_on = false;  // the push waits for this view
    bool reserved = false;   // holds a worst-case reservation in the budget
    bool filtered_ok = false;
    bool done = false;
    std::exception_ptr error;
  };
  using JobPtr = std::shared_ptr<Job>;

  void filter_loop(int lane);
  // A view whose filter() returned: waits until the backend no longer reads
  // its staging, then frees the slot and queues the view for the store.
  void upload_done(const JobPtr& job);
  // A view's filtering is over (failed, or the backend no longer reads its
  // staging): to the store, or completed with its error.
  void filtering_done(const JobPtr& job);
  void store_loop(int worker);
  // With mutex_ held: whether a store worker may start a view now, and if
  // not because of a recent read, when it may (else time_point::max()).
  // The first job in to_store_ that may be stored now (end() if none).
  std::deque<JobPtr>::iterator next_storable();
  bool store_may_run(std::chrono::steady_clock::time_point now,
                     std::chrono::steady_clock::time_point* resume) const;
  void store_one(Job& job, float* worker_buffer);
  // With mutex_ held: whether the views not yet stored fit the budget at
  // float32, at the ratio the float32 views stored so far reached.
  bool full_precision_fits() const;
  void complete(Job& job);                  // with mutex_ held
  void release_slot(Job& job);              // with mutex_ held
  void release_filtered(Job& job);          // with mutex_ held
  void report_failures();                   // with mutex_ held: throws the unreported ones
  void wake_all();                          // after stop_

  ScanModel& model_;
  ProjectionStore& store_;
  Backend& backend_;
  Preview* const preview_;
  const Options options_;
  const uint64_t view_bound_;  // worst-case stored bytes of one view

  const bool keeps_filtered_;
  const int lanes_;  // filter threads

  mutable std::mutex mutex_;
  // Each waiter on its own condition, so that a push does not wake every
  // store worker (a dozen threads taking the lock the pushes need, three
  // times per view): changed_ for the callers (a free slot, a waited-on
  // view, seal), filter_wake_ for the filter thread, store_wake_ for the
  // store workers.
  std::condition_variable changed_, filter_wake_, store_wake_;
  std::vector<Slot> slots_;
  std::vector<std::unique_ptr<StagingBuffer>> worker_buffers_;  // when keeps_filtered_
  // When the backend does not keep the views: as many filtered buffers as
  // slots, held from filtering until stored, apart from the slots, which a
  // view frees once filtered. Views queued behind a slow filter then hold
  // the pixels pushed only, and those being coded the filtered view only:
  // in (d) on two H200s the filter stalled now and then while the store
  // held most of 35 whole slots, and the push waited for one (80 whole
  // slots pushed 134 views/s, 35 115-120; docs/PERFORMANCE.md).
  std::vector<std::unique_ptr<StagingBuffer>> filtered_;
  std::vector<int> free_filtered_;
  std::vector<int> free_;
  std::deque<JobPtr> to_filter_, to_store_;
  std::vector<uint8_t> state_;          // fdk_view_state of each view
  std::vector<uint8_t> failure_;        // fdk_status that lost a FAILED view
  int filtering_ = 0;                   // jobs between push and the end of filtering
  int in_flight_ = 0;                   // jobs between push and completion
  uint64_t reserved_bytes_ = 0;         // worst case of the views in flight
  // Failures of views whose push had returned, not yet reported: as status
  // and message, not exception objects shared between threads.
  struct Failure {
    int view;
    fdk_status code;
    std::string message;
  };
  std::vector<Failure> unreported_;
  bool sealed_ = false;
  int readers_ = 0;
  std::chrono::steady_clock::time_point last_read_end_{};
  int waiting_pushes_ = 0;  // pushes waiting for their own view to be stored
  bool stop_ = false;
  double filter_seconds_ = 0, store_seconds_ = 0;
  uint64_t full_bytes_ = 0;  // stored bytes of the float32 views
  int full_views_ = 0;
  std::atomic<int> accepted_{0};

  std::vector<std::thread> threads_;
};

}  // namespace fdk
