#include "fdk/core/reconstruction.hpp"
#include "fdk/core/byte_text.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>

#include "config_validation.hpp"
#include "fdk/core/checked.hpp"
#include "fdk/core/partition.hpp"
#include "fdk/core/projection_store.hpp"
#include "fdk/core/error.hpp"
#include "ingest_pipeline.hpp"

namespace fdk {

namespace {
// Threads that copy a pushed projection into staging, at most: the copy is
// bound by the memory bus long before, and on a 64-core host a pool of 64
// pushed (b) on four H200s in 0.34 s against 0.21 s with 32 (fdk-bench
// --threads 32, 2026-11-22).
constexpr int kMaxPushThreads = 32;

// Host memory one announced view costs besides its compressed pixels: its
// geometry and index matrix (in the model and as configured), the store's
// slot and its bands' extents, its block's allocator overhead and, for a
// block large enough that the C library maps it (glibc: from 128 KiB), its
// rounding to whole pages, and the flags and weights of the model and the
// ingest. Counted against the host budget before any of it is allocated:
// 1e8 announced views used to run until the kernel's OOM killer ended the
// process.
uint64_t bookkeeping_bytes_per_view(int detector_columns, int detector_rows) {
  constexpr uint64_t kAllocatorOverhead = 16;
  constexpr uint64_t kMappedFrom = 128 << 10, kPage = 4096;
  const uint64_t bands = (static_cast<uint64_t>(detector_rows) + 15) / 16;
  const uint64_t raw = 4ull * static_cast<uint64_t>(detector_columns) * static_cast<uint64_t>(detector_rows);
  return 2 * (sizeof(ViewGeometry) + sizeof(IndexMatrix)) + sizeof(CompressedView) + 16 +
         bands * 2 * sizeof(size_t) + 2 * kAllocatorOverhead + (raw >= kMappedFrom ? kPage : 0) + 64;
}

// Budgets as the caller gave them: whole MiB rounded up made a 1 KiB budget
// read "1 MiB" (byte_text.hpp).
std::string mib(uint64_t bytes) { return byte_text(bytes); }

// The handle whose progress callback this thread is running, if any (the
// innermost, when a callback calls another handle whose callback runs).
thread_local const Reconstruction* t_in_callback = nullptr;
}  // namespace

Reconstruction::Reconstruction(const fdk_config& config, const BackendFactory& make_backend)
    : Reconstruction(config, make_backend, Part{0, config.volume.size[1]}) {}

Reconstruction::Reconstruction(const fdk_config& config, const BackendFactory& make_backend, const Part& part)
    : settings_(validate_config(config)), ingest_pool_(std::min(settings_.num_threads, kMaxPushThreads)) {
  const fdk_config& c = settings_.config;
  uint64_t bookkeeping =
      static_cast<uint64_t>(std::max(0, c.scan.num_views)) * bookkeeping_bytes_per_view(std::max(0, c.detector.size[0]), std::max(0, c.detector.size[1]));
  if (bookkeeping > settings_.host_budget / 2)
    fail(FDK_ERROR_BUDGET, "num_views " + std::to_string(c.scan.num_views) + " needs " + mib(bookkeeping) +
                               " of per-view bookkeeping, more than half the host memory budget (" +
                               mib(settings_.host_budget) + ")");
  if (c.estimate_geometry) {
    // Made after the check above, which bounds what its per-view lists take.
    estimator_ = std::make_unique<GeometryEstimator>(scan_parameters(config.scan, "estimate_geometry"), c.detector);
    bookkeeping += estimator_->memory_bytes();
    if (bookkeeping > settings_.host_budget / 2)
      fail(FDK_ERROR_BUDGET, "the geometry estimate's rows (" + mib(estimator_->memory_bytes()) +
                                 ") and the per-view bookkeeping need " + mib(bookkeeping) +
                                 ", more than half the host memory budget (" + mib(settings_.host_budget) + ")");
  }
  bookkeeping_ = bookkeeping;
  model_.volume = c.volume;
  if (part.plane_begin < 0 || part.plane_end > c.volume.size[1] || part.plane_begin >= part.plane_end)
    fail(FDK_ERROR_INVALID_ARGUMENT, "planes [" + std::to_string(part.plane_begin) + ", " +
                                         std::to_string(part.plane_end) + ") are not a part of the volume's " +
                                         std::to_string(c.volume.size[1]));
  model_.plane_begin = part.plane_begin;
  model_.plane_end = part.plane_end;
  model_.input_detector = c.detector;
  model_.views = scan_views(config.scan);  // the caller's arrays, copied here
  model_.redundancy = plan_redundancy(model_.views, c.detector, static_cast<fdk_switch>(c.short_scan),
                                      static_cast<fdk_switch>(c.offset_detector));
  model_.detector = filtered_detector(model_.redundancy, model_.views, c.detector, &model_.input_column_offset);
  model_.zero_outside_fov = c.outside_fov == FDK_OUTSIDE_FOV_ZERO;
  model_.filter.width = model_.detector.size[0];
  model_.filter.pixel_spacing = model_.detector.spacing[0];
  model_.filter.window = c.window;
  model_.filter.cutoff = c.cutoff;
  model_.filter.truncation_padding = c.truncation_padding;
  model_.filter.hann_cutoff_v = c.hann_cutoff_v;
  model_.matrices.reserve(model_.views.size());
  for (const auto& v : model_.views) model_.matrices.push_back(index_matrix(v, c.volume, model_.detector));
  model_.arrived.assign(model_.views.size(), 0);
  voxels_outside_fov_ = voxels_outside(model_, field_of_view_mask(model_, true, true));
  model_.view_weights.assign(model_.views.size(), 0.0);
  model_.row_windows.assign(model_.views.size(), std::array<int, 2>{0, model_.detector.size[1]});
  store_ = std::make_unique<ProjectionStore>(model_.detector.size[0], model_.detector.size[1],
                                             c.scan.num_views, static_cast<fdk_precision>(c.precision));
  if (model_.partial()) {
    const auto rows = rows_needed(model_.matrices, c.volume, model_.detector.size[1], part.plane_begin,
                                  part.plane_end, c.hann_cutoff_v > 0);
    store_->set_typical_rows(rows[1] - rows[0]);
  }
  model_.store = store_.get();
  model_.cancelled = &cancelled_;

  configured_views_ = model_.views;
  configured_matrices_ = model_.matrices;

  backend_ = make_backend(model_, settings_);
  if (c.preview) make_preview(bookkeeping);
  IngestPipeline::Options ingest = IngestPipeline::sized_for(model_, settings_.num_threads, settings_.host_budget);
  const uint64_t staging_bytes = IngestPipeline::staging_bytes(model_, ingest, backend_->keeps_filtered());
  const uint64_t plane_bytes = 4ull * model_.plane_floats();
  plan_ = plan_slabs(
      part.plane_end - part.plane_begin, plane_bytes, settings_.host_budget, c.slab_thickness, backend_->max_slab_planes(model_),
      backend_->preferred_slab_bytes(model_),
      [&](int planes) { return backend_->host_work_bytes(model_, planes) + staging_bytes; },
      backend_->slab_alignment(), backend_->slab_workers(), backend_->slabs_during_scan());
  for (auto& slab : plan_.slabs) {
    slab[0] += part.plane_begin;
    slab[1] += part.plane_begin;
  }
  model_.slabs = plan_.slabs;
  meter_ = std::make_unique<BackprojectionMeter>(plan_.slabs, c.scan.num_views);
  model_.meter = meter_.get();
  slab_done_.assign(plan_.slabs.size(), 0);
  background_failures_.resize(plan_.slabs.size());
  // The store has what the slabs' reserve and the per-view bookkeeping
  // leave; at least one view's worst case, or the first push would fail.
  const uint64_t held = plan_.reserve_bytes + bookkeeping;
  ingest.store_limit = settings_.host_budget - std::min(settings_.host_budget, held);
  if (ingest.store_limit < store_->worst_case_view_bytes())
    fail(FDK_ERROR_BUDGET, "the host memory budget (" + mib(settings_.host_budget) + ") leaves " +
                               mib(ingest.store_limit) + " for the projections after the slabs' reserve (" +
                               mib(plan_.reserve_bytes) + ") and the per-view bookkeeping (" + mib(bookkeeping) +
                               "): one projection can need " + mib(store_->worst_case_view_bytes()));
  store_limit_ = ingest.store_limit;
  // Coding buys ~17 % of the store on noisy data at ~25 ms of a core per
  // 16 MiB view: only a scan that would not fit uncoded pays for it.
  store_->set_coded(static_cast<double>(c.scan.num_views) * static_cast<double>(store_->worst_case_view_bytes()) >
                    static_cast<double>(store_limit_));
  ingest.reduce_precision = c.store_policy == FDK_STORE_REDUCE_PRECISION;
  store_fit_ = store_fit(static_cast<uint64_t>(c.scan.num_views), ingest.reduce_precision);
  ingest_ = std::make_unique<IngestPipeline>(model_, *store_, *backend_, ingest, preview_.get());
}

// The preview's sum where the backend has the filtered views; one in host
// memory counts in the host budget like the per-view bookkeeping, and so
// does the copy a read of slices makes.
void Reconstruction::make_preview(uint64_t& bookkeeping) {
  const fdk_volume grid = preview_grid(settings_.config);
  std::unique_ptr<PreviewSink> sink = backend_->make_preview_sink(model_, grid);
  if (!sink) fail(FDK_ERROR_INTERNAL, "the backend made no preview");
  const uint64_t host = (sink->on_gpu() ? 0 : sink->memory_bytes()) + 4 * grid_voxels(grid);
  bookkeeping += host;
  if (bookkeeping > settings_.host_budget / 2)
    fail(FDK_ERROR_BUDGET, "the preview (" + mib(host) + " of host memory for " + std::to_string(grid.size[0]) + "x" +
                               std::to_string(grid.size[1]) + "x" + std::to_string(grid.size[2]) +
                               " voxels) and the per-view bookkeeping need " + mib(bookkeeping) +
                               ", more than half the host memory budget (" + mib(settings_.host_budget) + ")");
  bookkeeping_ = bookkeeping;
  preview_ = std::make_unique<Preview>(
      model_, grid, angular_weights(model_.views, std::vector<unsigned char>(model_.views.size(), 1),
                                    model_.redundancy.short_scan),
      std::move(sink));
}

Preview& Reconstruction::preview() const {
  if (!preview_) fail(FDK_ERROR_INVALID_STATE, "no preview: the reconstruction was created with preview = 0");
  return *preview_;
}

Reconstruction::~Reconstruction() {
  // A background computation in progress stops at its next cancellation
  // check (the handle is going away); the thread is joined before anything
  // it uses is released.
  bool running;
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    stop_background_ = true;
    running = background_.joinable();
  }
  if (running) {
    cancelled_.store(true);
    background_wake_.notify_all();
    background_.join();
  }
}

bool Reconstruction::in_own_callback() const { return t_in_callback == this; }

void Reconstruction::refuse_from_callback(const char* call) const {
  if (in_own_callback())
    fail(FDK_ERROR_INVALID_STATE, std::string(call) +
                                      " from the handle's own progress callback (only queries and fdk_cancel may "
                                      "be called there)");
}

void Reconstruction::check_usable() const {
  if (cancelled_.load()) fail(FDK_ERROR_CANCELLED, "the reconstruction was cancelled");
}

void Reconstruction::push(int index, const float* pixels, size_t row_pitch_bytes, const fdk_view* view) {
  push_rows(index, 0, model_.input_detector.size[1], pixels, row_pitch_bytes, view);
}

void Reconstruction::push_rows(int index, int row_begin, int row_end, const float* pixels, size_t row_pitch_bytes,
                               const fdk_view* view) {
  refuse_from_callback("fdk_push_projection");
  std::lock_guard<std::mutex> lock(op_mutex_);
  check_usable();
  if (finished_.load()) fail(FDK_ERROR_INVALID_STATE, "fdk_push_projection after fdk_finish");
  const int num_views = static_cast<int>(model_.views.size());
  if (index < 0 || index >= num_views)
    fail(FDK_ERROR_OUT_OF_RANGE, "projection index " + std::to_string(index) + " is outside [0, " +
                                     std::to_string(num_views) + ")");
  if (!pixels) fail(FDK_ERROR_INVALID_ARGUMENT, "pixels is NULL");
  const int nu = model_.input_detector.size[0];
  if (row_pitch_bytes < sizeof(float) * static_cast<size_t>(nu) || row_pitch_bytes % sizeof(float) != 0)
    fail(FDK_ERROR_INVALID_ARGUMENT, "row_pitch_bytes " + std::to_string(row_pitch_bytes) +
                                         " must be a multiple of 4 and at least 4 * " +
                                         std::to_string(nu));
  // The last row is read at pixels + (rows - 1) * pitch: that must be an
  // address (a pitch of 2^63 used to wrap and segfault in the copy).
  if (row_begin < 0 || row_end > model_.input_detector.size[1] || row_begin >= row_end)
    fail(FDK_ERROR_OUT_OF_RANGE, "rows [" + std::to_string(row_begin) + ", " + std::to_string(row_end) +
                                     ") are not rows of the detector's " +
                                     std::to_string(model_.input_detector.size[1]));
  const size_t rows = static_cast<size_t>(row_end - row_begin), row_bytes = sizeof(float) * static_cast<size_t>(nu);
  if (rows > 1 && !strided_span_fits(pixels, rows, row_pitch_bytes, row_bytes))
    fail(FDK_ERROR_INVALID_ARGUMENT,
         "row_pitch_bytes " + std::to_string(row_pitch_bytes) + " puts the last of " + std::to_string(rows) +
             " rows beyond PTRDIFF_MAX bytes or the address space: it must lie within [" +
             std::to_string(row_bytes) + ", " + std::to_string((static_cast<size_t>(PTRDIFF_MAX) - row_bytes) / (rows - 1)) +
             "] ((PTRDIFF_MAX - 4 * columns) / (rows - 1))");
  const size_t v = static_cast<size_t>(index);
  const ViewGeometry geometry = view ? view_from_parameters(*view, "view: ") : configured_views_[v];
  const IndexMatrix matrix = view ? index_matrix(geometry, model_.volume, model_.detector) : configured_matrices_[v];
  ingest_->push(index, geometry, matrix, pixels, row_pitch_bytes, ingest_pool_, row_begin, row_end);
  // Accepted, hence finite: the estimate keeps its rows. A rank of
  // libfdk_mpi holds only some rows of a view, which an estimate cannot use.
  if (estimator_ && row_begin == 0 && row_end == model_.input_detector.size[1]) {
    if (view) estimator_->set_view(index, *view);
    // The push's threads share the rows out where the host's cores are
    // free during the scan; where the backend works on them, the shared
    // rows took its time (the CPU case on 16 cores: the push 0.12 s
    // without the rows, 0.15 s with them shared, 0.12 s on the caller's
    // thread alone).
    estimator_->add_view(index, pixels, row_pitch_bytes,
                         backend_->works_on_host_cores() ? nullptr : &ingest_pool_);
  }
  notify_progress();
}

GeometryEstimate Reconstruction::geometry_estimate() const {
  if (!estimator_)
    fail(FDK_ERROR_INVALID_STATE, "no geometry estimate: the reconstruction was created with estimate_geometry = 0");
  return estimator_->estimate();
}

IndexMatrix Reconstruction::matrix_of(const fdk_view& view) const {
  return index_matrix(view_from_parameters(view, "view: "), model_.volume, model_.detector);
}

void Reconstruction::settle() {
  refuse_from_callback("fdk_finish");
  std::lock_guard<std::mutex> lock(op_mutex_);
  check_usable();
  if (finished_.load()) return;
  ingest_->settle();
}

void Reconstruction::finish() {
  refuse_from_callback("fdk_finish");
  std::lock_guard<std::mutex> lock(op_mutex_);
  check_usable();
  if (finished_.load()) fail(FDK_ERROR_INVALID_STATE, "fdk_finish was already called");
  ingest_->seal();
  check_usable();
  model_.view_weights = angular_weights(model_.views, model_.arrived, model_.redundancy.short_scan);
  if (preview_) preview_->finish(model_);
  model_.view_order.clear();
  for (size_t v = 0; v < model_.arrived.size(); ++v)
    if (model_.arrived[v]) model_.view_order.push_back(static_cast<int>(v));
  meter_->set_views(static_cast<int>(model_.view_order.size()));
  backend_->finish(model_);
  finished_.store(true);
  // Every view is in: the estimate is computed while the backend
  // reconstructs, not after the last slab is read.
  if (estimator_) estimator_->start_estimate();
  notify_progress();
}

fdk_store_fit Reconstruction::store_fit(uint64_t views, bool reduce) const {
  // Ratios (float32 bytes over stored bytes) measured on noisy filtered
  // projections, the benchmark's and simulated ones: near what noisy
  // floats allow, so an estimate rather than a hope.
  constexpr double kTypicalRatio32 = 1.2, kTypicalRatio16 = 2.4;
  const fdk_precision lowest =
      reduce ? FDK_PRECISION_FLOAT16 : static_cast<fdk_precision>(store_->precision());
  const double limit = static_cast<double>(store_limit_);
  if (static_cast<double>(views) * static_cast<double>(store_->worst_case_view_bytes(lowest)) <= limit)
    return FDK_STORE_FITS;
  const double raw = 4.0 * store_->width() * static_cast<double>(store_->height()) * static_cast<double>(views);
  const double ratio = lowest == FDK_PRECISION_FLOAT16 ? kTypicalRatio16 : kTypicalRatio32;
  return raw / ratio <= limit ? FDK_STORE_LIKELY : FDK_STORE_UNLIKELY;
}

uint64_t Reconstruction::slab_bytes(int slab) const {
  const auto& s = plan_.slabs[static_cast<size_t>(slab)];
  return 4ull * model_.plane_floats() * static_cast<uint64_t>(s[1] - s[0]);
}

uint64_t Reconstruction::cache_capacity() const {
  const uint64_t used = store_->stored_bytes() + plan_.reserve_bytes + bookkeeping_;
  return settings_.host_budget > used ? settings_.host_budget - used : 0;
}

void Reconstruction::check_read(int slab, const float* buffer, size_t buffer_bytes) const {
  check_usable();
  if (!finished_.load()) fail(FDK_ERROR_INVALID_STATE, "fdk_read_slab before fdk_finish");
  if (slab < 0 || slab >= slab_count())
    fail(FDK_ERROR_OUT_OF_RANGE, "slab " + std::to_string(slab) + " is outside [0, " +
                                     std::to_string(slab_count()) + ")");
  if (!buffer) fail(FDK_ERROR_INVALID_ARGUMENT, "buffer is NULL");
  const uint64_t bytes = slab_bytes(slab);
  if (buffer_bytes < bytes)
    fail(FDK_ERROR_INVALID_ARGUMENT, "buffer_bytes " + std::to_string(buffer_bytes) + " is smaller than slab " +
                                         std::to_string(slab) + "'s " + std::to_string(bytes) + " bytes");
}

bool Reconstruction::copy_cached(int slab, float* buffer) {
  SlabCache::Slab data;
  bool first_read = false;
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    data = cache_.find(slab, &first_read);
  }
  if (!data) return false;
  if (first_read) background_wake_.notify_all();  // its room may now go to a request
  std::memcpy(buffer, data->data(), data->size() * sizeof(float));
  if (first_read) notify_progress();  // computed in the background: reported to the reader
  return true;
}

void Reconstruction::read_slab(int slab, float* buffer, size_t buffer_bytes) {
  refuse_from_callback("fdk_read_slab");
  // A slab in the host cache is copied at once, without waiting for a
  // computation in progress on another thread (fdk_slab_ready said 1).
  if (finished_.load()) {
    check_read(slab, buffer, buffer_bytes);
    if (!backend_->keeps_volume() && copy_cached(slab, buffer)) return;
  }
  // A read waiting for op_mutex_ goes before the background thread's next
  // slab (a computation already running is waited for).
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    ++readers_waiting_;
  }
  std::unique_lock<std::mutex> op_lock(op_mutex_);
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    --readers_waiting_;
  }
  background_wake_.notify_all();
  check_read(slab, buffer, buffer_bytes);
  const uint64_t bytes = slab_bytes(slab);
  const auto& range = plan_.slabs[static_cast<size_t>(slab)];
  const IngestPipeline::ReadGuard pause_store(*ingest_);
  if (backend_->keeps_volume()) {
    backend_->backproject(model_, range[0], range[1], buffer);
    mark_done(slab);
    return;
  }
  // A slab the background thread computed is in the cache by now: it runs
  // under op_mutex_, which this read holds. One it took but has not begun
  // is this read's to compute (the thread then skips it).
  if (copy_cached(slab, buffer)) return;
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    requests_.erase(std::remove(requests_.begin(), requests_.end(), slab), requests_.end());
    if (background_slab_ == slab) background_slab_ = -1;
  }
  // Computed straight into the caller's buffer; a copy is kept only where
  // recomputing costs more than copying (the backend says), and only in
  // what the store leaves of the budget beyond the reserve, beside the
  // slabs computed ahead and not yet read (slabs already read are evicted
  // for it, least recently used first).
  backend_->backproject(model_, range[0], range[1], buffer);
  if (backend_->caches_slabs()) {
    const uint64_t capacity = cache_capacity();
    bool room;
    {
      std::lock_guard<std::mutex> lock(cache_mutex_);
      room = bytes <= capacity && cache_.make_room(bytes, capacity);
    }
    // Only this thread inserts while it holds op_mutex_: the room stays.
    if (room) {
      auto copy = std::make_shared<std::vector<float>>(buffer, buffer + bytes / 4);
      std::lock_guard<std::mutex> lock(cache_mutex_);
      cache_.insert(slab, std::move(copy), capacity);
    }
  }
  mark_done(slab);
}

bool Reconstruction::slab_ready(int slab) {
  refuse_from_callback("fdk_slab_ready");
  check_usable();
  if (!finished_.load()) fail(FDK_ERROR_INVALID_STATE, "fdk_slab_ready before fdk_finish");
  if (slab < 0 || slab >= slab_count())
    fail(FDK_ERROR_OUT_OF_RANGE, "slab " + std::to_string(slab) + " is outside [0, " +
                                     std::to_string(slab_count()) + ")");
  const auto& range = plan_.slabs[static_cast<size_t>(slab)];
  const int held = backend_->slab_ready(model_, range[0], range[1]);
  if (held >= 0) return held == 1;
  if (backend_->keeps_volume()) return true;  // reads copy the resident volume
  const uint64_t bytes = slab_bytes(slab);
  const uint64_t capacity = cache_capacity();
  std::lock_guard<std::mutex> lock(cache_mutex_);
  Failure& failure = background_failures_[static_cast<size_t>(slab)];
  if (failure.code != FDK_OK) {
    const Failure f = std::move(failure);
    failure = Failure{};
    fail(f.code, "slab " + std::to_string(slab) + " could not be computed in the background: " + f.message);
  }
  if (cache_.touch(slab)) return true;
  if (background_slab_ == slab || std::find(requests_.begin(), requests_.end(), slab) != requests_.end())
    return false;
  // Too big for what the budget leaves the cache: never computed ahead (a
  // read computes it into the caller's buffer).
  if (bytes > capacity) return false;
  requests_.push_back(slab);
  if (!background_.joinable()) background_ = std::thread([this] { background_loop(); });
  background_wake_.notify_all();
  return false;
}

int Reconstruction::next_request(uint64_t capacity) {
  for (auto it = requests_.begin(); it != requests_.end();) {
    const int slab = *it;
    if (cache_.touch(slab)) {
      it = requests_.erase(it);
      continue;
    }
    if (cache_.unread_bytes() + slab_bytes(slab) <= capacity) {
      requests_.erase(it);
      return slab;
    }
    ++it;
  }
  return -1;
}

void Reconstruction::background_loop() {
  std::unique_lock<std::mutex> lock(cache_mutex_);
  for (;;) {
    int slab = -1;
    background_wake_.wait(lock, [&] {
      if (stop_background_ || cancelled_.load()) return true;
      if (readers_waiting_ > 0) return false;
      slab = next_request(cache_capacity());
      return slab >= 0;
    });
    if (stop_background_ || cancelled_.load()) {
      requests_.clear();
      return;
    }
    background_slab_ = slab;
    lock.unlock();

    Failure failure;
    {
      // The backend computes one slab at a time (the CPU backend's thread
      // pool runs one parallel_for at a time), and nothing is inserted into
      // the cache meanwhile: room made here stays.
      std::lock_guard<std::mutex> op_lock(op_mutex_);
      const uint64_t bytes = slab_bytes(slab);
      const uint64_t capacity = cache_capacity();
      bool mine;
      {
        // A read that came first took the slab over, or the room went to it.
        std::lock_guard<std::mutex> guard(cache_mutex_);
        mine = background_slab_ == slab && cache_.make_room(bytes, capacity);
      }
      if (mine && !cancelled_.load()) {
        try {
          const auto& range = plan_.slabs[static_cast<size_t>(slab)];
          auto data = std::make_shared<std::vector<float>>(static_cast<size_t>(bytes / 4));
          {
            const IngestPipeline::ReadGuard pause_store(*ingest_);
            backend_->backproject(model_, range[0], range[1], data->data());
          }
          {
            std::lock_guard<std::mutex> guard(cache_mutex_);
            cache_.insert(slab, std::move(data), capacity, /*unread=*/true);
          }
          record_done(slab);
        } catch (const Error& e) {
          failure.code = e.code();
          failure.message = e.what();
        } catch (const std::bad_alloc&) {
          failure.code = FDK_ERROR_OUT_OF_MEMORY;
          failure.message = "out of host memory";
        } catch (const std::exception& e) {
          failure.code = FDK_ERROR_INTERNAL;
          failure.message = std::string("internal error: ") + e.what();
        } catch (...) {
          failure.code = FDK_ERROR_INTERNAL;
          failure.message = "internal error: unknown exception";
        }
      }
    }
    lock.lock();
    if (background_slab_ == slab) background_slab_ = -1;
    // A cancel is reported by every call itself; other failures by the
    // slab's next fdk_slab_ready (as a status and message, not an
    // exception object shared between threads).
    if (failure.code != FDK_OK && failure.code != FDK_ERROR_CANCELLED)
      background_failures_[static_cast<size_t>(slab)] = std::move(failure);
  }
}

void Reconstruction::record_done(int slab) {
  const auto& range = plan_.slabs[static_cast<size_t>(slab)];
  meter_->complete(range[0], range[1]);
  if (!slab_done_[static_cast<size_t>(slab)]) {
    slab_done_[static_cast<size_t>(slab)] = 1;
    slabs_done_.fetch_add(1);
  }
}

void Reconstruction::mark_done(int slab) {
  record_done(slab);
  notify_progress();
}

fdk_view_state Reconstruction::view_state(int view, fdk_status* failure) const {
  const int num_views = static_cast<int>(model_.views.size());
  if (view < 0 || view >= num_views)
    fail(FDK_ERROR_OUT_OF_RANGE, "projection index " + std::to_string(view) + " is outside [0, " +
                                     std::to_string(num_views) + ")");
  return ingest_->view_state(view, failure);
}

fdk_slab_info Reconstruction::slab_info(int slab) const {
  if (slab < 0 || slab >= slab_count())
    fail(FDK_ERROR_OUT_OF_RANGE, "slab " + std::to_string(slab) + " is outside [0, " +
                                     std::to_string(slab_count()) + ")");
  fdk_slab_info info{};
  info.struct_size = sizeof(info);
  info.y_begin = plan_.slabs[static_cast<size_t>(slab)][0];
  info.y_end = plan_.slabs[static_cast<size_t>(slab)][1];
  info.byte_size = slab_bytes(slab);
  return info;
}

fdk_progress Reconstruction::progress() const {
  fdk_progress p{};
  p.struct_size = sizeof(p);
  p.views_pushed = ingest_->views_accepted();
  p.views_total = static_cast<int32_t>(model_.views.size());
  p.slabs_done = slabs_done_.load();
  p.slabs_total = slab_count();
  p.backprojection_done = meter_->done();
  p.backprojection_total = meter_->total();
  if (cancelled_.load())
    p.phase = FDK_PHASE_CANCELLED;
  else if (!finished_.load())
    p.phase = FDK_PHASE_ACQUIRING;
  else
    p.phase = p.slabs_done == p.slabs_total ? FDK_PHASE_DONE : FDK_PHASE_RECONSTRUCTING;
  return p;
}

fdk_store_info Reconstruction::store_info() const {
  fdk_store_info info{};
  info.struct_size = sizeof(info);
  info.views_stored = store_->views_stored();
  info.raw_bytes = store_->raw_bytes();
  info.stored_bytes = store_->stored_bytes();
  info.ratio = info.stored_bytes ? static_cast<double>(info.raw_bytes) / static_cast<double>(info.stored_bytes) : 0;
  info.views_reduced = store_->views_reduced();
  if (store_->precision() == FDK_PRECISION_FLOAT16 || info.views_reduced > 0) {
    info.rel_error_bound = ProjectionStore::kFloat16RelBound;
    info.abs_error_bound_factor = ProjectionStore::kFloat16AbsBoundFactor;
  }
  return info;
}

fdk_plan_info Reconstruction::plan_info() const {
  fdk_plan_info info{};
  info.struct_size = sizeof(info);
  info.backend = backend_->kind();
  info.num_slabs = slab_count();
  info.slab_thickness = plan_.thickness;
  info.short_scan = model_.redundancy.short_scan ? 1 : 0;
  info.offset_detector = model_.redundancy.offset_detector ? 1 : 0;
  info.num_threads = settings_.num_threads;
  info.host_memory_budget = settings_.host_budget;
  info.gpu_memory_budget = settings_.config.gpu_memory_budget;
  info.outside_fov = settings_.config.outside_fov;
  info.voxels_outside_fov = voxels_outside_fov_;
  info.half_fan_inferior = model_.redundancy.inferior;
  info.half_fan_superior = model_.redundancy.superior;
  info.store_policy = settings_.config.store_policy;
  info.store_fit = store_fit_;
  info.store_limit = store_limit_;
  return info;
}

fdk_timings Reconstruction::timings() {
  refuse_from_callback("fdk_get_timings");
  std::lock_guard<std::mutex> lock(op_mutex_);
  fdk_timings t{};
  t.struct_size = sizeof(t);
  t.filter_seconds = ingest_->filter_seconds();
  t.store_seconds = ingest_->store_seconds();
  backend_->add_timings(t);
  return t;
}

fdk_device_stats Reconstruction::device_stats() {
  refuse_from_callback("fdk_get_device_stats");
  std::lock_guard<std::mutex> lock(op_mutex_);
  fdk_device_stats stats{};
  stats.struct_size = sizeof(stats);
  backend_->add_device_stats(stats);
  return stats;
}

void Reconstruction::set_progress_callback(fdk_progress_fn fn, void* user_data) {
  std::lock_guard<std::mutex> lock(callback_mutex_);
  callback_ = fn;
  callback_user_ = user_data;
}

void Reconstruction::notify_progress() {
  fdk_progress_fn fn;
  void* user;
  {
    std::lock_guard<std::mutex> lock(callback_mutex_);
    fn = callback_;
    user = callback_user_;
  }
  if (fn) {
    const fdk_progress p = progress();
    const Reconstruction* outer = t_in_callback;
    t_in_callback = this;
    fn(user, &p);
    t_in_callback = outer;
  }
}

void Reconstruction::cancel() {
  cancelled_.store(true);
  // Wakes the background thread (to end); cache_mutex_ is only ever held
  // briefly, so this does not wait for a computation.
  { std::lock_guard<std::mutex> lock(cache_mutex_); }
  background_wake_.notify_all();
  ingest_->wake();  // a push waiting for a staging slot returns
}

}  // namespace fdk
