// The reconstruction pipeline behind one fdk_context: validates the
// configuration, plans the slabs, takes projections (weight, filter,
// compress), and computes slabs on demand through the chosen backend.
#pragma once
#include <fdk/fdk.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "fdk/core/backend.hpp"
#include "fdk/core/slab_cache.hpp"
#include "fdk/core/slab_planner.hpp"
#include "fdk/core/thread_pool.hpp"

namespace fdk {

class IngestPipeline;

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
  ~Reconstruction();

  void push(int index, const float* pixels, size_t row_pitch_bytes, const fdk_view* view);
  void finish();
  void read_slab(int slab, float* buffer, size_t buffer_bytes);

  // Lock-free queries (the plan is fixed at construction).
  int slab_count() const { return static_cast<int>(plan_.slabs.size()); }
  fdk_slab_info slab_info(int slab) const;
  fdk_progress progress() const;
  fdk_store_info store_info() const;
  fdk_plan_info plan_info() const;

  fdk_timings timings();  // waits for a call in progress

  void set_progress_callback(fdk_progress_fn fn, void* user_data);
  void cancel();

 private:
  void check_usable() const;
  void notify_progress();
  void mark_done(int slab);
  uint64_t slab_bytes(int slab) const;

  Settings settings_;
  ThreadPool ingest_pool_;  // the push path's host work: checks, compression
  ScanModel model_;
  std::unique_ptr<ProjectionStore> store_;
  std::unique_ptr<Backend> backend_;
  SlabPlan plan_;
  std::vector<ViewGeometry> configured_views_;    // as announced, for pushes without geometry
  std::vector<IndexMatrix> configured_matrices_;
  std::unique_ptr<IngestPipeline> ingest_;  // after backend_: stopped before it is released
  SlabCache cache_;
  std::vector<unsigned char> slab_done_;

  std::mutex op_mutex_;  // serialises push, finish and read
  std::atomic<bool> cancelled_{false};
  std::atomic<int> slabs_done_{0};
  std::atomic<bool> finished_{false};  // set once, under op_mutex_


  std::mutex callback_mutex_;
  fdk_progress_fn callback_ = nullptr;
  void* callback_user_ = nullptr;
};

}  // namespace fdk
