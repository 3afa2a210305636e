// One GPU's set-up (one_device.hpp): whether the volume stays resident or
// streams, within the budget, how many planes a slab may have, and the batch
// sets and mask every launch uses. Apart from the work itself, so that
// what a device chooses, and why, reads in one place.

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <vector>

#include "fdk/core/projection_store.hpp"
#include "one_device.hpp"

namespace fdk::cuda {

namespace {

// Filters (each with its own stream and buffers) a resident device cycles
// through, so that several views are in flight.
constexpr int kResidentFilters = 2;
// Streamed volumes come in at least this many slabs (5 slabs of (d) on two
// GPUs kept one idle for a fifth of the time).
constexpr int kMinStreamedSlabs = 8;
constexpr size_t kBounceFloats = size_t{4} << 20;  // 16 MiB per bounce chunk

// Bounce chunks no larger than the whole volume: a small volume pins little.
size_t bounce_chunk_floats(const ScanModel& model) {
  return std::min(kBounceFloats, model.plane_floats() * static_cast<size_t>(model.volume.size[1]));
}

class PinnedStaging final : public StagingBuffer {
 public:
  explicit PinnedStaging(size_t floats) { buffer_.resize(floats); }
  float* data() override { return buffer_.get(); }

 private:
  PinnedBuffer<float> buffer_;
};

}  // namespace

OneDevice::OneDevice(const ScanModel& model, const Settings& settings, const DeviceRole& role)
    : device_(checked_ordinal(role)),
      role_(role),
      scope_(device_),
      pool_(settings.num_threads),
      filter_(model, filter_stream_.get()) {
  CUdevice dev = 0;
  int pitch_alignment = 0, alignment = 0;
  check(cu().cuDeviceGet(&dev, device_), "cuDeviceGet");
  check(cu().cuDeviceGetAttribute(&pitch_alignment, CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT, dev),
        "cuDeviceGetAttribute (texture pitch alignment)");
  check(cu().cuDeviceGetAttribute(&alignment, CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT, dev),
        "cuDeviceGetAttribute (texture alignment)");
  tex_align_ = std::max<size_t>(static_cast<size_t>(pitch_alignment), 32);
  size_t free_bytes = 0, total_bytes = 0;
  check(cu().cuMemGetInfo(&free_bytes, &total_bytes), "cuMemGetInfo");
  budget_ = settings.config.gpu_memory_budget > 0 ? settings.config.gpu_memory_budget
                                                  : static_cast<uint64_t>(0.9 * static_cast<double>(free_bytes));
  budget_ -= std::min(budget_, role.reserved_bytes);
  columns_ = model.detector.size[0];
  rows_ = model.detector.size[1];
  pitch_ = round_up(static_cast<size_t>(columns_), tex_align_ / sizeof(float));
  base_align_ = std::max<size_t>(static_cast<size_t>(alignment), 256) / sizeof(float);
  view_stride_ = round_up(pitch_ * rows_, base_align_);
  quad_pitch_ = round_up(static_cast<size_t>(columns_) * kTexelBytes, tex_align_);
  orbits_ = find_symmetric_quads(model.views, model.matrices, model.volume);
  const auto pairs = find_mirror_pairs(model.views, model.matrices, model.volume, columns_);
  counted_.assign(model.views.size(), 0);

  const uint64_t plane = 4ull * model.plane_floats();
  // The whole volume, or the whole of one rank's planes (libfdk_mpi).
  const uint64_t volume = plane * static_cast<uint64_t>(model.plane_end - model.plane_begin);
  const uint64_t projections = 4ull * view_stride_ * model.views.size();
  const uint64_t fixed = filter_bytes(model) + 2 * model.plane_floats();
  // A volume takes quads when they serve at least as many views as mirror
  // pairs. A pair is complete within its half of the scan, a quad only in
  // its last quarter, but a quad's lookup serves four views from one half4
  // texel. Resident, on one H200 (c) took 4.487 s end to end with quads
  // against 6.013 s with pairs (kernels 3.763 against 5.833 s), (b) 0.721
  // against 0.801 s, and at 600 views/s (c) 5.560 against 6.256 s, (b)
  // 2.150 against 2.127 s (docs/DECISIONS.md, "A resident volume takes
  // quads"). Streamed, c8 took 6.242 s against 6.928 s (float16: 5.885
  // against 7.342 s) with no slab backprojected during the scan, and 5.699 s
  // with the early slab by quads ("Streamed slabs take quads too"). Pairs serve
  // geometries with fewer quads (a grid that is not square, a short scan).
  // FaultPlan::resident_pairs and stream_pairs bring back the old rule
  // (which counted a view that is its own mirror twice) for the tests of
  // the pairs' path and of the early slab.
  const bool pairs_serve = !pairs.empty() && 2 * pairs.size() >= 4 * orbits_.size();
  size_t pair_views = 0;  // distinct views in pairs
  for (const auto& p : pairs) pair_views += p[0] == p[1] ? 1 : 2;
  const bool take_pairs = pair_views > 4 * orbits_.size();
  const bool resident_pairs = role.fault.resident_pairs ? pairs_serve : take_pairs;
  const bool stream_pairs = role.fault.stream_pairs ? pairs_serve : take_pairs;
  const uint64_t resident_sets = resident_pairs
                                     ? 2ull * kResidentPairs * quad_pitch_ * rows_
                                     : 2ull * kResidentQuads * quad_pitch_ * rows_;
  // The whole volume must fit whatever the device's part: the mode, and
  // so the bits, must not depend on the number of devices.
  // A resident volume filters on kResidentFilters streams.
  const uint64_t more_filters = (kResidentFilters - 1) * filter_bytes(model);
  resident_bytes_ = volume + projections + resident_sets + fixed + more_filters;
  resident_ = role.allow_resident && resident_bytes_ <= budget_;
  pairs_ = resident_ ? resident_pairs : stream_pairs;
  if (pairs_) {
    // Resident: pairs under whichever mirror completes them first (the
    // diagonal mirrors of a square grid: none of the depth mirror's pairs
    // completes in a full scan's first quarter, and the GPUs idled
    // through it). Streamed slabs keep the depth mirror.
    // With FaultPlan::plane_pairs the first quarter's views become plane
    // pairs of their own where the geometry allows (plan_resident_pairs):
    // the GPUs then start after a few views instead of an eighth of the
    // scan.
    std::vector<MirrorPair> kinded;
    if (resident_) kinded = find_earliest_mirror_pairs(model.views, model.matrices, model.volume, columns_);
    if (kinded.size() < pairs.size())
      kinded.clear();
    else if (role.fault.plane_pairs)
      kinded = plan_resident_pairs(std::move(kinded), model.matrices, model.volume.size[1], rows_);
    if (kinded.empty()) {
      for (const auto& p : pairs) kinded.push_back({p, MirrorKind::Depth});
    }
    // In the order they complete when views arrive by index, so that the
    // groups of a slab backprojected during the scan (early slab)
    // complete steadily.
    std::stable_sort(kinded.begin(), kinded.end(), [](const MirrorPair& a, const MirrorPair& b) {
      return std::max(a.views[0], a.views[1]) < std::max(b.views[0], b.views[1]);
    });
    orbits_.clear();
    for (const MirrorPair& p : kinded) {
      orbits_.push_back({p.views[0], p.views[1], -1, -1});
      orbit_kind_.push_back(static_cast<unsigned char>(p.kind));
    }
  }
  orbit_kind_.resize(orbits_.size(), 0);  // quads: one kind
  plane_orbits_left_ = static_cast<int>(
      std::count(orbit_kind_.begin(), orbit_kind_.end(), static_cast<unsigned char>(MirrorKind::Plane)));
  if (resident_)
    group_size_ = pairs_ ? kResidentPairs : kResidentQuads;
  else
    group_size_ = pairs_ ? kStreamPairs : kStreamQuads;
  if (!resident_ && pairs_ && role.fault.stream_group_pairs > 0)
    group_size_ = std::min(group_size_, role.fault.stream_group_pairs);
  window_slots_ = pairs_ ? 2 * kStreamPairs : kStreamViews;
  orbit_of_view_.assign(model.views.size(), -1);
  orbit_size_.assign(orbits_.size(), 0);
  for (size_t q = 0; q < orbits_.size(); ++q)
    for (int v : orbits_[q])
      if (v >= 0 && orbit_of_view_[static_cast<size_t>(v)] < 0) {
        orbit_of_view_[static_cast<size_t>(v)] = static_cast<int>(q);
        ++orbit_size_[q];
      }
  orbit_arrivals_.assign(orbits_.size(), 0);
  const double texel_row_bytes = static_cast<double>(quad_pitch_);
  if (resident_) {
    for (int f = 1; f < kResidentFilters; ++f) {
      more_filter_streams_.push_back(std::make_unique<Stream>(+1));
      more_filters_.push_back(std::make_unique<GpuFilter>(model, more_filter_streams_.back()->get()));
    }
    filter_view_.assign(1 + more_filters_.size(), -1);
    hold_chunks(model, role.chunk_planes, role.chunks);
    volume_.resize(model.plane_floats() * static_cast<size_t>(std::max<size_t>(1, owned_.size()) * chunk_planes_));
    zero_async(volume_.get(), volume_.bytes(), bp_stream_.get(), "cuMemsetD8Async (volume)");
    projections_.resize(view_stride_ * model.views.size());
    view_tex_.resize(model.views.size());
    make_sets(group_size_, rows_, false);
    reserve_packed_groups();
    nominal_weights_ = angular_weights(model.views, std::vector<unsigned char>(model.views.size(), 1),
                                       model.redundancy.short_scan);
    nominal_views_ = model.views;
    compute_mask(model, true);
    chunk_ready_ = std::vector<Event>(slot_of_chunk_.size());
  } else {
    // Streaming: two slab buffers plus two batch sets must fit; each
    // plane of slab brings at most rows_per_plane_ detector rows into
    // every window.
    const auto span = rows_for_slab(model.matrices.front(), model.volume, rows_, 0, model.volume.size[1]);
    rows_per_plane_ = std::max(0.0, static_cast<double>(span[1] - span[0] + 1)) / model.volume.size[1] * 1.25 + 0.01;
    const double set_row_bytes = window_slots_ * 4.0 * pitch_ + group_size_ * texel_row_bytes;
    const double per_plane = static_cast<double>(kSlabBuffers) * static_cast<double>(plane) +
                             2.0 * rows_per_plane_ * set_row_bytes;
    const double per_set_fixed = 2.0 * 8 * set_row_bytes;
    // The second filtered view (scratch_) that the early slabs' copies
    // read while the next one is filtered.
    const double spare_view = 4.0 * static_cast<double>(pitch_) * rows_;
    const double room = static_cast<double>(budget_) - static_cast<double>(fixed) - per_set_fixed - spare_view;
    max_planes_ = room > per_plane ? static_cast<int>(std::min<double>(model.volume.size[1], room / per_plane)) : 0;
    // A slab can be backprojected during the scan when every view belongs
    // to an orbit (a pair or a quad): the same groups, windows and weights
    // as a streamed slab (so the same bits), with the windows cut from each
    // view as it is filtered (here or on the device that filters for the
    // store) and held in the second slab buffer until its orbit completes
    // (a quad in the scan's last quarter). A float16 store's views are
    // rounded here as the store rounds them, whether or not this GPU has an
    // early slab, so that the store's values (and each view's maximum, a
    // slab's packing scale) do not depend on the number of GPUs.
    const bool float16 = settings.config.precision == FDK_PRECISION_FLOAT16;
    if (float16 && model.store) filter_.round_like_store(model.store->band_rows());
    early_ = role.early_slab >= 0 && (!float16 || model.store) && !orbits_.empty() &&
             std::find(orbit_of_view_.begin(), orbit_of_view_.end(), -1) == orbit_of_view_.end();
    if (early_) {
      nominal_weights_ = angular_weights(model.views, std::vector<unsigned char>(model.views.size(), 1),
                                         model.redundancy.short_scan);
      nominal_views_ = model.views;
    }
  }
  // Pinning costs milliseconds per hundred MiB: done here, not in a read.
  bounce_chunk_ = bounce_chunk_floats(model);
  bounce_.resize(kBounceChunks * bounce_chunk_);
  synchronize(bp_stream_.get(), "cuStreamSynchronize (setup)");
  scope_.leave();
}

OneDevice::~OneDevice() {
  // Members are released with our device current; then scope_ puts the
  // host's device back. The owner has stopped the shared prefetch, so the
  // worker ends.
  scope_.enter();
  if (worker_.joinable()) worker_.join();
  if (staging_.valid()) staging_.wait();
  stop_launching_.store(true);
  if (launcher_.joinable()) launcher_.join();
  const DriverApi& d = cu();
  d.cuStreamSynchronize(bp_stream_.get());
  credit_.drain();
  wait_filters();
  d.cuStreamSynchronize(store_stream_.get());
  d.cuStreamSynchronize(download_stream_.get());
  d.cuStreamSynchronize(upload_stream_.get());
  for (const auto& link : early_links_)
    if (link) d.cuStreamSynchronize(link->stream.get());
}

void OneDevice::add_timings(fdk_timings& t) const {
  // The kernel clock is read once every launch is made (after finish).
  if (finished_) clock_.collect();
  t.backproject_seconds += clock_.seconds();
  std::lock_guard<std::mutex> lock(timing_mutex_);
  t.upload_seconds += upload_seconds_;
  t.download_seconds += download_seconds_;
}

uint64_t OneDevice::preferred_slab_bytes(const ScanModel& model) const {
  // Streaming: as thick as the GPU allows (each slab re-reads its windows).
  return resident_ ? Backend::preferred_slab_bytes(model) : UINT64_MAX;
}

int OneDevice::max_slab_planes(const ScanModel& model) const {
  if (resident_) return model.volume.size[1];
  // At least kMinStreamedSlabs slabs, so that several GPUs share them
  // evenly; the same on one GPU, so that the plan, and with it the bits,
  // does not depend on the number of GPUs.
  const int ny = model.volume.size[1];
  return std::min(max_planes_, std::max(1, (ny + kMinStreamedSlabs - 1) / kMinStreamedSlabs));
}

uint64_t OneDevice::host_work_bytes(const ScanModel& model, int planes) const {
  const uint64_t bounce = sizeof(float) * kBounceChunks * bounce_chunk_floats(model);
  if (resident_) return bounce;  // slabs are copied straight from the device
  return bounce + 2ull * window_slots_ * 4ull * columns_ * static_cast<uint64_t>(window_rows(planes));
}

std::unique_ptr<StagingBuffer> OneDevice::make_staging(size_t floats) const {
  DeviceGuard guard(device_);
  return std::make_unique<PinnedStaging>(floats);
}

double OneDevice::busy_seconds() const {
  if (finished_) clock_.collect();
  return clock_.seconds();
}

uint64_t OneDevice::filter_bytes(const ScanModel& model) const {
  const RampFilter ramp(model.filter);
  const uint64_t n = static_cast<uint64_t>(ramp.padded_length());
  return 4ull * rows_ * (n + (n / 2 + 1) * 2 + model.input_detector.size[0]) + 4ull * pitch_ * rows_ +
         vertical_window_bytes(model);
}

void OneDevice::make_sets(int quads, int rows, bool streaming) {
  for (BatchSet& set : sets_) make_set(set, quads, rows, streaming);
  set_rows_ = rows;
}

void OneDevice::make_set(BatchSet& set, int quads, int rows, bool streaming) {
  set.slot_stride = slot_stride(rows);
  set.slots.resize(set.slot_stride * static_cast<size_t>(quads));
  set.quad_tex.resize(static_cast<size_t>(quads));
  set.quad_max.resize(static_cast<size_t>(quads));
  for (size_t q = 0; q < static_cast<size_t>(quads); ++q)
    set.quad_tex[q].make_pitch2d(set.slot(q), pairs_ ? kHalf2 : kHalf4, columns_, rows, quad_pitch_);
  if (streaming) {
    window_stride_ = round_up(pitch_ * rows, base_align_);
    set.windows.resize(window_stride_ * window_slots_);
    set.window_tex.resize(static_cast<size_t>(window_slots_));
    for (int v = 0; v < window_slots_; ++v)
      set.window_tex[static_cast<size_t>(v)].make_pitch2d(set.windows.get() + window_stride_ * v,
                                                          kFloat1, columns_, rows,
                                                          pitch_ * sizeof(float));
  }
}

// The sets' pinned staging for `rows`: what the early slab started in the
// background first (its failure is thrown here), then any growth.
void OneDevice::reserve_staging(int rows) {
  if (staging_.valid()) staging_.get();
  pin_staging(rows, false);
}

void OneDevice::pin_staging(int rows, bool paced) {
  const size_t floats = static_cast<size_t>(columns_) * rows;
  for (BatchSet& set : sets_) {
    if (set.staging.covers(window_slots_, floats)) continue;
    hold_staging();
    set.staging.reserve(window_slots_, floats, paced);
  }
}

// Pinning the staging took 1.1-1.6 s a GPU in (d) (two sets of 128 windows
// of 4096 x ~700 floats, about 3 GiB). Done in start_early, on the filter
// lane that brought the first view, it held every lane (the GPUs' starts
// came one after the other) while 35 pushes filled the slots: the push
// stopped 2.5-3.1 s at its start. The early slab never reads the staging;
// the slabs from the store do, after fdk_finish (reserve_staging). Pinned
// in one piece on a thread of its own, it stopped the push as long (the
// lanes' driver calls seem to wait for a pinning); a window at a time,
// paced, it did not (docs/DECISIONS.md).
void OneDevice::reserve_staging_in_background(int rows) {
  try {
    staging_ = std::async(std::launch::async, [this, rows] {
      DeviceGuard guard(device_);
      pin_staging(rows, true);
    });
  } catch (const std::exception&) {
    // No thread (or memory) to be had now: the first slab from the store
    // pins the staging itself, and the scan goes on.
  }
}

// Field-of-view mask from the announced views (nominal) or the arrived
// ones: the core's, so both backends zero the same voxels.
void OneDevice::compute_mask(const ScanModel& model, bool nominal) {
  const std::vector<unsigned char> mask = field_of_view_mask(model, nominal, model.zero_outside_fov);
  mask_.resize(mask.size());
  copy_async(mask_.get(), mask.data(), mask.size(), bp_stream_.get(), "cuMemcpyAsync (mask)");
  // The host vector dies here: wait for the copy.
  synchronize(bp_stream_.get(), "cuStreamSynchronize (mask)");
}

SlabGeometry OneDevice::slab_geometry(const ScanModel& model, int y0, int planes) const {
  return slab_geometry(model, Run{y0, planes, std::max(1, planes), std::max(1, planes)});
}

SlabGeometry OneDevice::slab_geometry(const ScanModel& model, const Run& run) const {
  SlabGeometry g{};
  g.nx = model.volume.size[0];
  g.ny = model.volume.size[1];
  g.nz = model.volume.size[2];
  g.y0 = run.y0;
  g.planes = run.planes;
  g.chunk = run.chunk;
  g.stride = run.stride;
  g.split = std::min(run.split, run.planes);
  g.y0_b = run.y0_b;
  g.stride_b = run.stride_b;
  g.gap = run.gap;
  g.columns = columns_;
  g.rows = rows_;
  return g;
}

// Resident, at set-up: a set for each group of pairs of the scan, as
// device memory allows. Made here because allocating sets at the finish
// kept four H200s idle 0.5 s of (c) (the host made 448 allocations while
// the GPUs had run out of work).
void OneDevice::reserve_packed_groups() {
  if (!pairs_) return;
  size_t free_bytes = 0, total_bytes = 0;
  check(cu().cuMemGetInfo(&free_bytes, &total_bytes), "cuMemGetInfo");
  const uint64_t reserve = 512ull << 20;
  uint64_t room = std::min<uint64_t>(budget_ > resident_bytes_ ? budget_ - resident_bytes_ : 0,
                                     free_bytes > reserve ? free_bytes - reserve : 0);
  const uint64_t per_set = static_cast<uint64_t>(group_size_) * slot_stride(rows_) + 4096;
  // Groups hold one kind each.
  std::array<size_t, kMirrorKinds> of_kind{};
  for (unsigned char kind : orbit_kind_) ++of_kind[kind];
  size_t groups = 0;
  for (int kind = 0; kind < kMirrorKinds; ++kind) {
    for (size_t n = of_kind[static_cast<size_t>(kind)], g = 0; n > 0; ++g, ++groups)
      n -= std::min(n, static_cast<size_t>(group_target(kind, static_cast<int>(g))));
  }
  if (role_.fault.packed_sets_limit >= 0)
    groups = std::min(groups, static_cast<size_t>(role_.fault.packed_sets_limit));
  while (packed_groups_.size() < groups && room >= per_set) {
    room -= per_set;
    auto g = std::make_unique<PackedGroup>();
    try {
      make_set(g->set, group_size_, rows_, false);
    } catch (const Error&) {
      break;  // no room after all: the other groups are packed when launched
    }
    packed_groups_.push_back(std::move(g));
  }
}

std::unique_ptr<DeviceBackend> make_device_backend(const ScanModel& model, const Settings& settings,
                                                   const DeviceRole& role) {
  return std::make_unique<OneDevice>(model, settings, role);
}

}  // namespace fdk::cuda
