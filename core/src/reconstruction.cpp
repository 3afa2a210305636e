#include "fdk/core/reconstruction.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "config_validation.hpp"
#include "fdk/core/error.hpp"
#include "ingest_pipeline.hpp"

namespace fdk {

Reconstruction::Reconstruction(const fdk_config& config, const BackendFactory& make_backend)
    : settings_(validate_config(config)), ingest_pool_(settings_.num_threads) {
  const fdk_config& c = settings_.config;
  model_.volume = c.volume;
  model_.input_detector = c.detector;
  model_.views = scan_views(config.scan);  // the caller's arrays, copied here
  model_.redundancy = plan_redundancy(model_.views, c.detector, static_cast<fdk_switch>(c.short_scan),
                                      static_cast<fdk_switch>(c.offset_detector));
  model_.detector = filtered_detector(model_.redundancy, c.detector, &model_.input_column_offset);
  model_.filter.width = model_.detector.size[0];
  model_.filter.pixel_spacing = model_.detector.spacing[0];
  model_.filter.window = c.window;
  model_.filter.cutoff = c.cutoff;
  model_.filter.truncation_padding = c.truncation_padding;
  model_.matrices.reserve(model_.views.size());
  for (const auto& v : model_.views) model_.matrices.push_back(index_matrix(v, c.volume, model_.detector));
  model_.arrived.assign(model_.views.size(), 0);
  model_.view_weights.assign(model_.views.size(), 0.0);
  store_ = std::make_unique<ProjectionStore>(model_.detector.size[0], model_.detector.size[1],
                                             c.scan.num_views, static_cast<fdk_precision>(c.precision));
  model_.store = store_.get();
  model_.cancelled = &cancelled_;

  configured_views_ = model_.views;
  configured_matrices_ = model_.matrices;

  backend_ = make_backend(model_, settings_);
  IngestPipeline::Options ingest = IngestPipeline::sized_for(model_, settings_.num_threads, settings_.host_budget);
  const uint64_t staging_bytes = IngestPipeline::staging_bytes(model_, ingest, backend_->keeps_filtered());
  const uint64_t plane_bytes = 4ull * model_.plane_floats();
  plan_ = plan_slabs(c.volume.size[1], plane_bytes, settings_.host_budget, c.slab_thickness,
                     backend_->max_slab_planes(model_), backend_->preferred_slab_bytes(model_),
                     [&](int planes) { return backend_->host_work_bytes(model_, planes) + staging_bytes; });
  model_.slabs = plan_.slabs;
  slab_done_.assign(plan_.slabs.size(), 0);
  ingest.store_limit = settings_.host_budget - std::min(settings_.host_budget, plan_.reserve_bytes);
  ingest_ = std::make_unique<IngestPipeline>(model_, *store_, *backend_, ingest);
}

Reconstruction::~Reconstruction() = default;

void Reconstruction::check_usable() const {
  if (cancelled_.load()) fail(FDK_ERROR_CANCELLED, "the reconstruction was cancelled");
}

void Reconstruction::push(int index, const float* pixels, size_t row_pitch_bytes, const fdk_view* view) {
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
  const size_t v = static_cast<size_t>(index);
  const ViewGeometry geometry = view ? view_from_parameters(*view) : configured_views_[v];
  const IndexMatrix matrix = view ? index_matrix(geometry, model_.volume, model_.detector) : configured_matrices_[v];
  ingest_->push(index, geometry, matrix, pixels, row_pitch_bytes, ingest_pool_);
  notify_progress();
}

void Reconstruction::finish() {
  std::lock_guard<std::mutex> lock(op_mutex_);
  check_usable();
  if (finished_.load()) fail(FDK_ERROR_INVALID_STATE, "fdk_finish was already called");
  ingest_->seal();
  check_usable();
  if (ingest_->views_accepted() == 0)
    fail(FDK_ERROR_INVALID_STATE, "fdk_finish before any projection was pushed");
  model_.view_weights = angular_weights(model_.views, model_.arrived, model_.redundancy.short_scan);
  model_.view_order.clear();
  for (size_t v = 0; v < model_.arrived.size(); ++v)
    if (model_.arrived[v]) model_.view_order.push_back(static_cast<int>(v));
  backend_->finish(model_);
  finished_.store(true);
  notify_progress();
}

uint64_t Reconstruction::slab_bytes(int slab) const {
  const auto& s = plan_.slabs[static_cast<size_t>(slab)];
  return 4ull * model_.plane_floats() * static_cast<uint64_t>(s[1] - s[0]);
}

void Reconstruction::read_slab(int slab, float* buffer, size_t buffer_bytes) {
  std::lock_guard<std::mutex> lock(op_mutex_);
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
  const auto& range = plan_.slabs[static_cast<size_t>(slab)];
  const IngestPipeline::ReadGuard pause_store(*ingest_);
  if (backend_->keeps_volume()) {
    backend_->backproject(model_, range[0], range[1], buffer);
    mark_done(slab);
    return;
  }
  if (SlabCache::Slab data = cache_.find(slab)) {
    std::memcpy(buffer, data->data(), bytes);
    return;
  }
  // Computed straight into the caller's buffer; a copy is kept only where
  // recomputing costs more than copying (the backend says), and only in
  // what the store leaves of the budget beyond the reserve.
  backend_->backproject(model_, range[0], range[1], buffer);
  if (backend_->caches_slabs()) {
    const uint64_t used = store_->stored_bytes() + plan_.reserve_bytes;
    const uint64_t spare = settings_.host_budget > used ? settings_.host_budget - used : 0;
    if (spare >= bytes) {
      auto copy = std::make_shared<std::vector<float>>(buffer, buffer + bytes / 4);
      cache_.insert(slab, std::move(copy), spare);
    }
  }
  mark_done(slab);
}

void Reconstruction::mark_done(int slab) {
  if (!slab_done_[static_cast<size_t>(slab)]) {
    slab_done_[static_cast<size_t>(slab)] = 1;
    slabs_done_.fetch_add(1);
  }
  notify_progress();
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
  if (store_->precision() == FDK_PRECISION_FLOAT16) {
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
  return info;
}

fdk_timings Reconstruction::timings() {
  std::lock_guard<std::mutex> lock(op_mutex_);
  fdk_timings t{};
  t.struct_size = sizeof(t);
  t.filter_seconds = ingest_->filter_seconds();
  t.store_seconds = ingest_->store_seconds();
  backend_->add_timings(t);
  return t;
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
    fn(user, &p);
  }
}

void Reconstruction::cancel() { cancelled_.store(true); }

}  // namespace fdk
