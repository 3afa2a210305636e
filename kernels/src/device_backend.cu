// One GPU of the CUDA backend (see device_backend.hpp for how several share
// the work). Projections are weighted and filtered on the device. When the volume, the filtered projections and the batch buffers fit
// the GPU budget, the volume stays resident and views are backprojected as
// they arrive ("resident" mode: the volume is done when the scan ends), by
// mirror pairs when the geometry has them (complete within each half of the
// scan), else by quads.
// Otherwise slabs are computed from the compressed store ("streaming" mode):
// from fdk_finish on, a worker thread takes slabs from the shared
// SlabPrefetch and computes them into two device slab buffers, ahead of the
// reader, which copies a finished slab out while the next one computes. CPU threads decompress each view's
// row window into pinned memory while the GPU works on the previous batch,
// and the windows upload on their own stream.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <array>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <limits>
#include <mutex>
#include <utility>
#include <thread>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "backproject_kernels.cuh"
#include "cufft_loader.hpp"
#include "device_resources.hpp"
#include "fault_plan_state.hpp"
#include "fdk/core/slab_prefetch.hpp"
#include "device_backend.hpp"
#include "fdk/core/thread_pool.hpp"
#include "gpu_filter.hpp"
#include "symmetry.hpp"

namespace fdk::cuda {
namespace {

// Quads per launch when resident (16 measured 1550 GUPS on (b) against
// 1800 for 32: each launch reads and writes the whole volume).
constexpr int kResidentQuads = 32;
// Mirror pairs per launch when resident: the same 128 views as the quads.
constexpr int kResidentPairs = kMaxBatchPairs;
// Groups still waiting at fdk_finish are launched chunk by chunk of y
// planes (a multiple of kPlanesPerThread, so every voxel sees the same
// arithmetic as in a whole-volume launch), by the reads: a chunk is
// downloaded while the next one computes.
constexpr int kFinishChunks = 16;
// The finish launches a 1/kFinishSpanDivisor of the chunks left at once,
// up to kFinishSpanVoxels voxels: (b) on two H200s 0.413 -> 0.406 s end to
// end, on four (page-locked) 0.231 -> 0.225 s (A/B in one call; 2 measured
// no better than 4). Without the cap (c) on four H200s took 1.58 -> 1.90 s:
// its reads, bound by the host's copies, wait for the first span; with it
// (c)'s chunks (2^27 voxels or more) go one by one as before.
constexpr int kFinishSpanDivisor = 4;
constexpr uint64_t kFinishSpanVoxels = uint64_t{1} << 27;
// Filters (each with its own stream and buffers) a resident device cycles
// through, so that several views are in flight.
constexpr int kResidentFilters = 2;
constexpr int kStreamQuads = 8;      // quads per launch when streaming
constexpr int kStreamViews = 4 * kStreamQuads;
constexpr int kStreamPairs = kMaxBatchPairs;  // mirror pairs per launch when streaming
// Streamed volumes come in at least this many slabs (5 slabs of (d) on two
// GPUs kept one idle for a fifth of the time).
constexpr int kMinStreamedSlabs = 8;
// Slab downloads into pageable memory go through a ring of pinned chunks.
constexpr size_t kBounceFloats = size_t{4} << 20;  // 16 MiB per chunk
constexpr int kBounceChunks = 4;

// Bounce chunks no larger than the whole volume: a small volume pins little.
size_t bounce_chunk_floats(const ScanModel& model) {
  return std::min(kBounceFloats, model.plane_floats() * static_cast<size_t>(model.volume.size[1]));
}

// The device's ordinal, unless a test injects a set-up failure into it.
int checked_ordinal(const DeviceRole& role) {
  if (role.fault.kind == FaultPlan::Alloc && role.fault.worker == role.worker)
    fail(FDK_ERROR_OUT_OF_MEMORY, "injected allocation failure on GPU " + std::to_string(role.ordinal) +
                                      " (worker " + std::to_string(role.worker) + ", a test's FaultPlan)");
  return role.ordinal;
}

size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

// True when the host address is page-locked (the device can DMA to it).
bool page_locked(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

void fill_terms(ViewTerms& t, const IndexMatrix& m, float weight, int row_offset) {
  for (int e = 0; e < 12; ++e) t.m[e] = static_cast<float>(m.m[e]);
  t.weight = weight;
  t.row_offset = static_cast<float>(row_offset);
}

// Packed quads are half-precision texels (8 bytes: the texture unit filters
// them at several times the rate of float4). float32 storage keeps a second
// texture with the rounding remainder, so hi + lo carries ~22 bits;
// float16 storage needs only the first.
struct TexelFormat {
  bool split;
  cudaChannelFormatDesc desc;
};

TexelFormat texel_format(fdk_precision p) {
  return {p != FDK_PRECISION_FLOAT16, cudaCreateChannelDescHalf4()};
}

constexpr size_t kTexelBytes = 8;

class PinnedStaging final : public StagingBuffer {
 public:
  explicit PinnedStaging(size_t floats) { buffer_.resize(floats); }
  float* data() override { return buffer_.get(); }

 private:
  PinnedBuffer<float> buffer_;
};

// A set of buffers one launch uses; two sets alternate so the host prepares
// one while the GPU works on the other.
struct BatchSet {
  // Every slot's texels in one allocation (one cudaMalloc per slot cost
  // about 1.3 ms each on an H200 host: 0.1 s per group of 64 pairs).
  DeviceBuffer<unsigned char> slots, slots_lo;
  size_t slot_stride = 0;  // bytes from one slot to the next
  unsigned char* slot(size_t q) const { return slots.get() + q * slot_stride; }
  unsigned char* slot_lo(size_t q) const { return slots_lo.get() + q * slot_stride; }
  std::vector<TextureObject> quad_tex, quad_tex_lo;
  DeviceBuffer<unsigned> quad_max;  // per slot, for the packing scale
  DeviceBuffer<float> windows;            // streaming: window_slots_ row windows
  std::vector<TextureObject> window_tex;  // streaming: one per window
  PinnedBuffer<float> staging;            // streaming: decompressed windows
  Event uploaded;                         // streaming: the windows are on the device
  Event done;
  bool used = false;
  void wait() {
    if (used) done.synchronize();
  }
};

// Resident planes one launch computes: `planes` planes in chunks of `chunk`
// taken every `stride` planes from y0 (see SlabGeometry).
struct Run {
  int y0 = 0, planes = 0, chunk = 1, stride = 1;
  float* dest = nullptr;  // where the run's planes lie, one after the other; null: in volume_
  // From output plane `split` on, a second run of chunks, `gap` planes
  // after the first's end in the destination (SlabGeometry).
  int split = std::numeric_limits<int>::max(), y0_b = 0, stride_b = 1, gap = 0;
};

// A resident launch's worth: a group of complete orbits, or a batch of views
// outside orbits.
struct HeldItem {
  bool views = false;
  std::vector<int> ids;  // orbits, or views
  int packed = -1;       // pairs packed as they completed: its index in packed_groups_
};

class OneDevice final : public DeviceBackend {
 public:
  OneDevice(const ScanModel& model, const Settings& settings, const DeviceRole& role)
      : device_(checked_ordinal(role)),
        role_(role),
        scope_(device_),
        pool_(settings.num_threads),
        filter_(model, filter_stream_.get()),
        format_(texel_format(static_cast<fdk_precision>(settings.config.precision))) {
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, device_), "cudaGetDeviceProperties");
    tex_align_ = std::max<size_t>(prop.texturePitchAlignment, 32);
    size_t free_bytes = 0, total_bytes = 0;
    check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    budget_ = settings.config.gpu_memory_budget > 0 ? settings.config.gpu_memory_budget
                                                    : static_cast<uint64_t>(0.9 * static_cast<double>(free_bytes));
    columns_ = model.detector.size[0];
    rows_ = model.detector.size[1];
    pitch_ = round_up(static_cast<size_t>(columns_), tex_align_ / sizeof(float));
    base_align_ = std::max<size_t>(prop.textureAlignment, 256) / sizeof(float);
    view_stride_ = round_up(pitch_ * rows_, base_align_);
    quad_pitch_ = round_up(static_cast<size_t>(columns_) * kTexelBytes, tex_align_);
    orbits_ = find_symmetric_quads(model.views, model.matrices, model.volume);
    const auto pairs = find_mirror_pairs(model.views, model.matrices, model.volume, columns_);
    counted_.assign(model.views.size(), 0);

    const uint64_t plane = 4ull * model.plane_floats();
    const uint64_t volume = plane * static_cast<uint64_t>(model.volume.size[1]);
    const uint64_t projections = 4ull * view_stride_ * model.views.size();
    const uint64_t fixed = filter_bytes(model) + 2 * model.plane_floats();
    // A resident volume prefers mirror pairs when they serve as many views:
    // a pair is complete within its half of the scan, a quad only in the
    // last quarter, so pairs let the backprojection keep up with the scan.
    const bool pairs_preferred = !pairs.empty() && 2 * pairs.size() >= 4 * orbits_.size();
    const uint64_t resident_sets = pairs_preferred ? 2ull * kResidentPairs * quad_pitch_ * rows_
                                                   : 2ull * kResidentQuads * quad_pitch_ * rows_ * (format_.split ? 2 : 1);
    // The whole volume must fit whatever the device's part: the mode, and
    // so the bits, must not depend on the number of devices.
    // A resident volume filters on kResidentFilters streams.
    const uint64_t more_filters = (kResidentFilters - 1) * filter_bytes(model);
    resident_bytes_ = volume + projections + resident_sets + fixed + more_filters;
    resident_ = role.allow_resident && resident_bytes_ <= budget_;
    pairs_ = pairs_preferred;
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
    const double texel_row_bytes = static_cast<double>(quad_pitch_) * (format_.split && !pairs_ ? 2 : 1);
    if (resident_) {
      for (int f = 1; f < kResidentFilters; ++f) {
        more_filter_streams_.push_back(std::make_unique<Stream>(+1));
        more_filters_.push_back(std::make_unique<GpuFilter>(model, more_filter_streams_.back()->get()));
      }
      filter_view_.assign(1 + more_filters_.size(), -1);
      hold_chunks(model, role.chunk_planes, role.chunks);
      volume_.resize(model.plane_floats() * static_cast<size_t>(std::max<size_t>(1, owned_.size()) * chunk_planes_));
      check(cudaMemsetAsync(volume_.get(), 0, volume_.bytes(), bp_stream_.get()), "cudaMemsetAsync (volume)");
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
      const double room = static_cast<double>(budget_) - static_cast<double>(fixed) - per_set_fixed;
      max_planes_ = room > per_plane ? static_cast<int>(std::min<double>(model.volume.size[1], room / per_plane)) : 0;
      // The first slab can be backprojected during the scan when every
      // view belongs to a pair: the same groups, windows and weights as a
      // streamed slab (so the same bits), with the windows cut from each
      // view as it is filtered and held in the second slab buffer. float32
      // only: the store's float16 rounding is not the GPU's.
      early_ = role.filters_for_store && pairs_ && format_.split && !orbits_.empty() &&
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
    check(cudaStreamSynchronize(bp_stream_.get()), "cudaStreamSynchronize (setup)");
    scope_.leave();
  }

  ~OneDevice() override {
    // Members are released with our device current; then scope_ puts the
    // host's device back. The owner has stopped the shared prefetch, so the
    // worker ends.
    scope_.enter();
    if (worker_.joinable()) worker_.join();
    stop_launching_.store(true);
    if (launcher_.joinable()) launcher_.join();
    cudaStreamSynchronize(bp_stream_.get());
    wait_filters();
    cudaStreamSynchronize(store_stream_.get());
    cudaStreamSynchronize(download_stream_.get());
    cudaStreamSynchronize(upload_stream_.get());
  }

  fdk_backend kind() const override { return FDK_BACKEND_CUDA; }

  void add_timings(fdk_timings& t) const override {
    // The kernel clock is read once every launch is made (after finish).
    if (finished_) clock_.collect();
    t.backproject_seconds += clock_.seconds();
    std::lock_guard<std::mutex> lock(timing_mutex_);
    t.upload_seconds += upload_seconds_;
    t.download_seconds += download_seconds_;
  }

  uint64_t preferred_slab_bytes(const ScanModel& model) const override {
    // Streaming: as thick as the GPU allows (each slab re-reads its windows).
    return resident_ ? Backend::preferred_slab_bytes(model) : UINT64_MAX;
  }

  int max_slab_planes(const ScanModel& model) const override {
    if (resident_) return model.volume.size[1];
    // At least kMinStreamedSlabs slabs, so that several GPUs share them
    // evenly; the same on one GPU, so that the plan, and with it the bits,
    // does not depend on the number of GPUs.
    const int ny = model.volume.size[1];
    return std::min(max_planes_, std::max(1, (ny + kMinStreamedSlabs - 1) / kMinStreamedSlabs));
  }

  uint64_t host_work_bytes(const ScanModel& model, int planes) const override {
    const uint64_t bounce = sizeof(float) * kBounceChunks * bounce_chunk_floats(model);
    if (resident_) return bounce;  // slabs are copied straight from the device
    return bounce + 2ull * window_slots_ * 4ull * columns_ * static_cast<uint64_t>(window_rows(planes));
  }

  std::unique_ptr<StagingBuffer> make_staging(size_t floats) const override {
    DeviceGuard guard(device_);
    return std::make_unique<PinnedStaging>(floats);
  }

  void filter(const ScanModel& model, int view, const ViewGeometry& geometry, const float* pixels,
              size_t pitch_bytes, float* filtered) override {
    DeviceGuard guard(device_);
    float* target;
    if (resident_) {
      target = projections_.get() + static_cast<size_t>(view) * view_stride_;
    } else {
      scratch_.resize(pitch_ * rows_);
      target = scratch_.get();
    }
    filter_.run(model, geometry, pixels, pitch_bytes, target, pitch_, filtered);
  }


  // Store workers fetch resident filtered views (one copy at a time: they
  // share the bus with the uploads anyway).
  void read_filtered(const ScanModel& model, int view, float* out) override {
    DeviceGuard guard(device_);
    std::lock_guard<std::mutex> lock(store_copy_mutex_);
    after_filters(store_stream_.get());
    check(cudaMemcpy2DAsync(out, columns_ * sizeof(float), projections_.get() + static_cast<size_t>(view) * view_stride_,
                            pitch_ * sizeof(float), columns_ * sizeof(float), rows_, cudaMemcpyDeviceToHost,
                            store_stream_.get()),
          "cudaMemcpy2DAsync (filtered view for the store)");
    check(cudaStreamSynchronize(store_stream_.get()), "cudaStreamSynchronize (store copy)");
  }

  // Runs on the ingest filter thread, in push order: complete quads are
  // backprojected into the resident volume in batches.
  void view_filtered(const ScanModel& model, int view) override {
    if (!resident_) return early_view(model, view);
    inject_fault(FaultPlan::Scan, views_seen_++);
    DeviceGuard guard(device_);
    if (!same_geometry(model.views[static_cast<size_t>(view)], nominal_views_[static_cast<size_t>(view)]))
      geometry_changed_ = true;
    if (counted_[static_cast<size_t>(view)]) return;  // pushed again after a drop: finish recomputes
    counted_[static_cast<size_t>(view)] = 1;
    dirty_ = true;  // cleared once this view is accounted for
    const int q = orbit_of_view_[static_cast<size_t>(view)];
    if (q >= 0) {
      if (++orbit_arrivals_[static_cast<size_t>(q)] == orbit_size_[static_cast<size_t>(q)]) {
        // A group holds orbits of one kind (one kernel per launch).
        const int kind = orbit_kind_[static_cast<size_t>(q)];
        const bool plane = kind == static_cast<int>(MirrorKind::Plane);
        std::vector<int>& pending = pending_orbits_[static_cast<size_t>(kind)];
        pending.push_back(q);
        const bool last_plane = plane && --plane_orbits_left_ == 0;
        if (static_cast<int>(pending.size()) == group_target(kind, plane_groups_) || last_plane) {
          if (plane) ++plane_groups_;
          // Launched while the GPU keeps up; held for fdk_finish's chunked
          // launches when it is behind. Groups stay the same either way,
          // so every voxel sums the same groups in the same order.
          held_.push_back({false, std::move(pending)});
          if (pairs_) pack_on_completion(model, held_.back());
          pending.clear();
        }
      }
    } else {
      // Views outside complete orbits queue with the groups, so that their
      // place in every voxel's sum is fixed by arrival, not by timing.
      pending_views_.push_back(view);
      if (static_cast<int>(pending_views_.size()) == kMaxBatchViews) {
        held_.push_back({true, std::move(pending_views_)});
        pending_views_.clear();
      }
    }
    // Looked at with every view, not only when a group completes: in the
    // quarters of a scan where no pair completes the GPU would otherwise
    // idle with groups held.
    while (!held_.empty() && !role_.fault.hold_groups && !gpu_behind()) {
      launch_item(model, held_.front(), nominal_weights_, all_chunks_);
      launched_items_.push_back(held_.front());
      scan_launches_[next_scan_launch_].record(bp_stream_.get());
      next_scan_launch_ ^= 1;
      held_.erase(held_.begin());
    }
    dirty_ = false;
  }

  void view_dropped(const ScanModel&, int) override { dropped_.store(true); }

  void finish(const ScanModel& model) override {
    if (resident_) throw_if_failed();
    DeviceGuard guard(device_);
    if (!resident_) {
      early_done_ = finish_early(model);
      compute_mask(model, false);
      check(cudaStreamSynchronize(bp_stream_.get()), "cudaStreamSynchronize (mask)");
      finished_ = true;
      return;
    }
    bool all_arrived = true;
    for (unsigned char a : model.arrived) all_arrived &= a != 0;
    if (all_arrived && !geometry_changed_ && !dirty_ && !dropped_.load()) {
      if (!pending_views_.empty()) held_.push_back({true, std::move(pending_views_)});
      for (auto& pending : pending_orbits_) {
        if (pending.empty()) continue;
        held_.push_back({false, std::move(pending)});
        if (pairs_) pack_on_completion(model, held_.back());
        pending.clear();
      }
      pending_views_.clear();
      // The held groups go chunk by chunk from launch_all_chunks.
      chunks_launched_ = 0;
      finished_ = true;
      return;
    } else {
      // held_ groups are launched again below from the arrivals.
      held_.clear();
      launched_items_.clear();
      final_weights_ = model.view_weights;
      // The weights the views were accumulated with are not the final ones:
      // start again from the filtered projections still on the device.
      check(cudaStreamSynchronize(bp_stream_.get()), "cudaStreamSynchronize");
      for (auto& pending : pending_orbits_) pending.clear();
      pending_views_.clear();
      check(cudaMemsetAsync(volume_.get(), 0, volume_.bytes(), bp_stream_.get()), "cudaMemsetAsync (volume)");
      compute_mask(model, false);
      for (size_t q = 0; q < orbits_.size(); ++q) {
        bool complete = true;
        for (int v : orbits_[q]) complete &= v < 0 || model.arrived[static_cast<size_t>(v)] != 0;
        if (complete) {
          const int kind = orbit_kind_[q];
          pending_orbits_[static_cast<size_t>(kind)].push_back(static_cast<int>(q));
          if (static_cast<int>(pending_orbits_[static_cast<size_t>(kind)].size()) == group_size_)
            flush_orbits(model, kind, model.view_weights);
        } else {
          for (int v : orbits_[q])
            if (v >= 0 && model.arrived[static_cast<size_t>(v)]) add_view(model, v, model.view_weights);
        }
      }
      for (int v : model.view_order)
        if (orbit_of_view_[static_cast<size_t>(v)] < 0) add_view(model, v, model.view_weights);
      for (int kind = 0; kind < kMirrorKinds; ++kind) flush_orbits(model, kind, model.view_weights);
      flush_views(model, model.view_weights);
    }
    // Everything is launched: each chunk is final once the stream reaches it.
    for (int c : owned_) chunk_ready_[static_cast<size_t>(c)].record(bp_stream_.get());
    chunks_launched_ = static_cast<int>(owned_.size());
    finished_ = true;
  }

  // Resident, after finish: a thread launches the held groups over spans
  // of chunks (finish_span; the launch queue fills up and would hold the
  // caller), each chunk's end marked by its event; reads wait for the
  // launches they need.
  void launch_all_chunks(const ScanModel& model) override {
    if (!resident_ || launcher_.joinable()) return;
    launcher_ = std::thread([this, &model] {
      DeviceGuard guard(device_);
      try {
        const int n = static_cast<int>(owned_.size()), half = n / 2;
        // Held plane pairs (the first of held_, as they complete first)
        // serve a plane and its mirror image with one lookup: launched in
        // the lower half's spans for the span and its image together, not
        // in each span for one of them. A voxel still sums the same groups
        // in the same order.
        const int first = chunks_launched_.load();
        const size_t planes = mirrored_slots_ && first == 0 ? held_plane_groups() : 0;
        for (int i = first; i < n;) {
          if (stop_launching_.load() || model.cancelled->load()) break;
          int m = finish_span(model, n - i);
          if (planes > 0 && i < half) m = std::min(m, half - i);
          const Run span = owned_run(model, i, m);
          if (planes > 0 && i < half) {
            const Run both = mirrored_span(model, i, m);
            for (size_t k = 0; k < planes; ++k) launch_item(model, held_[k], nominal_weights_, both);
          }
          for (size_t k = planes; k < held_.size(); ++k) launch_item(model, held_[k], nominal_weights_, span);
          for (int s = i; s < i + m; ++s)
            chunk_ready_[static_cast<size_t>(owned_[static_cast<size_t>(s)])].record(bp_stream_.get());
          i += m;
          std::lock_guard<std::mutex> lock(launch_mutex_);
          chunks_launched_.store(i);
          launched_.notify_all();
        }
      } catch (...) {
        std::lock_guard<std::mutex> lock(launch_mutex_);
        launch_error_ = std::current_exception();
        launched_.notify_all();
      }
      std::lock_guard<std::mutex> lock(launch_mutex_);
      launcher_done_ = true;
      launched_.notify_all();
    });
  }

  bool planes_ready(int y0, int y1) const override {
    if (!resident_ || !finished_) return false;
    for (int c = y0 / chunk_planes_; c * chunk_planes_ < y1; ++c)
      if (slot_of_chunk_[static_cast<size_t>(c)] >= chunks_launched_.load() ||
          !chunk_ready_[static_cast<size_t>(c)].ready())
        return false;
    return true;
  }

  // Resident: waits until chunk `chunk` (one of ours) is launched (not computed).
  void wait_launched(const ScanModel& model, int chunk) {
    const int slot = slot_of_chunk_[static_cast<size_t>(chunk)];
    std::unique_lock<std::mutex> lock(launch_mutex_);
    while (chunks_launched_.load() <= slot) {
      if (launch_error_) std::rethrow_exception(launch_error_);
      throw_if_cancelled(model);
      if (launcher_done_) fail(FDK_ERROR_INTERNAL, "chunk " + std::to_string(chunk) + " was never launched");
      launched_.wait_for(lock, std::chrono::milliseconds(5));
    }
  }

  void backproject(const ScanModel& model, int y0, int y1, float* out) override {
    read_planes(model, y0, y1, out, kMaxCopyTasks);
  }

  void read_planes(const ScanModel& model, int y0, int y1, float* out, int copy_tasks) override {
    if (!resident_) fail(FDK_ERROR_INTERNAL, "a streamed slab is read through the shared prefetch");
    inject_fault(FaultPlan::Read, reads_.fetch_add(1));
    DeviceGuard guard(device_);
    const size_t plane = model.plane_floats();
    const auto start = std::chrono::steady_clock::now();
    // Chunk by chunk: ours are not next to each other on the device.
    for (int y = y0; y < y1;) {
      const int c = y / chunk_planes_, end = std::min(y1, (c + 1) * chunk_planes_);
      if (slot_of_chunk_[static_cast<size_t>(c)] < 0)
        fail(FDK_ERROR_INTERNAL, "planes " + std::to_string(y) + " are not held by GPU " + std::to_string(device_));
      wait_launched(model, c);
      check(cudaStreamWaitEvent(download_stream_.get(), chunk_ready_[static_cast<size_t>(c)].get(), 0),
            "cudaStreamWaitEvent (chunk)");
      download(planes_at(model, y), plane * static_cast<size_t>(end - y), out + plane * static_cast<size_t>(y - y0),
               download_stream_.get(), copy_tasks);
      y = end;
    }
    download_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  // Resident, after finish: planes [y0, y1) of another device's chunk,
  // recomputed here from the views this device holds: the same launches,
  // in the same order, as on the chunk's own device, so the same bits.
  void read_foreign_planes(const ScanModel& model, int y0, int y1, float* out, int copy_tasks) override {
    if (!resident_ || !finished_) fail(FDK_ERROR_INTERNAL, "a chunk is recomputed only after the scan");
    inject_fault(FaultPlan::Read, reads_.fetch_add(1));
    DeviceGuard guard(device_);
    const int c = y0 / chunk_planes_;
    if (y1 > (c + 1) * chunk_planes_ || slot_of_chunk_[static_cast<size_t>(c)] >= 0)
      fail(FDK_ERROR_INTERNAL, "bad foreign planes");
    // The launcher thread uses the batch sets and the stream: wait until
    // our own chunks are launched.
    if (!owned_.empty()) wait_launched(model, owned_.back());
    std::lock_guard<std::mutex> lock(foreign_mutex_);
    const size_t plane = model.plane_floats();
    if (foreign_chunk_ != c) {
      foreign_chunk_ = -1;
      foreign_.resize(plane * static_cast<size_t>(chunk_planes_));
      check(cudaMemsetAsync(foreign_.get(), 0, foreign_.bytes(), bp_stream_.get()), "cudaMemsetAsync (foreign chunk)");
      Run run = chunk_run(model, c);
      run.dest = foreign_.get();
      const std::vector<double>& weights = final_weights_.empty() ? nominal_weights_ : final_weights_;
      for (const HeldItem& item : launched_items_) launch_item(model, item, weights, run);
      for (const HeldItem& item : held_) launch_item(model, item, weights, run);
      foreign_ready_.record(bp_stream_.get());
      foreign_chunk_ = c;
    }
    check(cudaStreamWaitEvent(download_stream_.get(), foreign_ready_.get(), 0), "cudaStreamWaitEvent (foreign)");
    download(foreign_.get() + plane * static_cast<size_t>(y0 - c * chunk_planes_), plane * static_cast<size_t>(y1 - y0),
             out, download_stream_.get(), copy_tasks);
  }

  bool all_chunks_ready() const override {
    if (!resident_ || !finished_ || chunks_launched_.load() < static_cast<int>(owned_.size())) return false;
    for (int c : owned_)
      if (!chunk_ready_[static_cast<size_t>(c)].ready()) return false;
    return true;
  }

  bool early_slab_done() const override { return early_done_; }
  int ordinal() const override { return device_; }
  bool resident() const override { return resident_; }
  int slabs_computed() const override { return slabs_computed_.load(); }
  bool failed() const override { return failed_.load(); }
  double busy_seconds() const override {
    if (finished_) clock_.collect();
    return clock_.seconds();
  }

  // Resident: views go to the filters in turn, each on its own stream and
  // upload stream, so that one view's kernels wait for room on the GPU (the
  // backprojection fills it) while the next ones are uploaded and filtered.
  void filter_share(const ScanModel& model, int view, const ViewGeometry& geometry, const float* pixels,
                    size_t pitch_bytes, const std::vector<DeviceBackend*>& to) override {
    inject_fault(FaultPlan::Scan, views_seen_);
    DeviceGuard guard(device_);
    const size_t n = 1 + more_filters_.size();
    const size_t i = next_filter_;
    next_filter_ = (next_filter_ + 1) % n;
    GpuFilter& f = i == 0 ? filter_ : *more_filters_[i - 1];
    // A filter's next issue waits for its previous upload: that view's
    // pixels are free once this returns.
    filter_view_[i] = -1;
    f.issue(model, geometry, pixels, pitch_bytes, filtered_view(view), pitch_, nullptr);
    filter_view_[i] = view;
    for (DeviceBackend* d : to)
      check(cudaMemcpy2DAsync(d->filtered_view(view), d->filtered_pitch() * sizeof(float), filtered_view(view),
                              pitch_ * sizeof(float), static_cast<size_t>(columns_) * sizeof(float), rows_,
                              cudaMemcpyDefault, f.stream()),
            "cudaMemcpy2DAsync (filtered view to another GPU)");
    f.mark_done();
  }
  int uploads_in_flight() const override { return resident_ ? static_cast<int>(1 + more_filters_.size()) : 0; }
  void wait_uploaded(int view) noexcept override {
    for (size_t i = 0; i < filter_view_.size(); ++i) {
      if (filter_view_[i] != view) continue;
      filter_view_[i] = -1;
      try {
        DeviceGuard guard(device_);
        (i == 0 ? filter_ : *more_filters_[i - 1]).wait_upload();
      } catch (...) {
        // A failed upload fails the work that reads the view.
      }
    }
  }
  void wait_filters() override {
    DeviceGuard guard(device_);
    cudaStreamSynchronize(filter_stream_.get());
    for (const auto& st : more_filter_streams_) cudaStreamSynchronize(st->get());
  }
  float* filtered_view(int view) override { return projections_.get() + static_cast<size_t>(view) * view_stride_; }
  size_t filtered_pitch() const override { return pitch_; }
  void set_peers(const std::vector<const DeviceBackend*>& peers) override { peers_ = peers; }
  void order_after_filters(cudaStream_t stream) const override {
    check(cudaStreamWaitEvent(stream, filter_.done(), 0), "cudaStreamWaitEvent (filtered)");
    for (const auto& f : more_filters_)
      check(cudaStreamWaitEvent(stream, f->done(), 0), "cudaStreamWaitEvent (filtered)");
  }


 private:
  uint64_t filter_bytes(const ScanModel& model) const {
    const RampFilter ramp(model.filter);
    const uint64_t n = static_cast<uint64_t>(ramp.padded_length());
    return 4ull * rows_ * (n + (n / 2 + 1) * 2 + model.input_detector.size[0]) + 4ull * pitch_ * rows_;
  }

  int window_rows(int planes) const {
    return std::min(rows_, static_cast<int>(std::ceil(rows_per_plane_ * planes)) + 8);
  }

  static bool same_geometry(const ViewGeometry& a, const ViewGeometry& b) {
    return a.rot == b.rot && a.sid == b.sid && a.sdd == b.sdd && a.sox == b.sox && a.soy == b.soy &&
           a.pox == b.pox && a.poy == b.poy;
  }

  // A slot of `rows` texel rows, rounded so that every slot starts on a
  // texture base alignment.
  size_t slot_stride(int rows) const {
    return round_up(quad_pitch_ * static_cast<size_t>(rows), base_align_ * sizeof(float));
  }

  void make_sets(int quads, int rows, bool streaming) {
    for (BatchSet& set : sets_) make_set(set, quads, rows, streaming);
    set_rows_ = rows;
  }

  void make_set(BatchSet& set, int quads, int rows, bool streaming) {
    const bool lo = format_.split && !pairs_;  // pairs keep hi and lo in one texel
    set.slot_stride = slot_stride(rows);
    set.slots.resize(set.slot_stride * static_cast<size_t>(quads));
    if (lo) set.slots_lo.resize(set.slot_stride * static_cast<size_t>(quads));
    set.quad_tex.resize(static_cast<size_t>(quads));
    set.quad_tex_lo.resize(lo ? static_cast<size_t>(quads) : 0);
    set.quad_max.resize(static_cast<size_t>(quads));
    for (size_t q = 0; q < static_cast<size_t>(quads); ++q) {
      const cudaChannelFormatDesc desc =
          pairs_ && !format_.split ? cudaCreateChannelDescHalf2() : format_.desc;
      set.quad_tex[q].make_pitch2d(set.slot(q), desc, columns_, rows, quad_pitch_);
      if (lo) set.quad_tex_lo[q].make_pitch2d(set.slot_lo(q), format_.desc, columns_, rows, quad_pitch_);
    }
    if (streaming) {
      window_stride_ = round_up(pitch_ * rows, base_align_);
      set.windows.resize(window_stride_ * window_slots_);
      set.window_tex.resize(static_cast<size_t>(window_slots_));
      for (int v = 0; v < window_slots_; ++v)
        set.window_tex[static_cast<size_t>(v)].make_pitch2d(set.windows.get() + window_stride_ * v,
                                                            cudaCreateChannelDesc<float>(), columns_, rows,
                                                            pitch_ * sizeof(float));
      set.staging.resize(static_cast<size_t>(columns_) * rows * window_slots_);
    }
  }

  // Field-of-view mask from the announced views (nominal) or the arrived
  // ones: the core's, so both backends zero the same voxels.
  void compute_mask(const ScanModel& model, bool nominal) {
    const std::vector<unsigned char> mask = field_of_view_mask(model, nominal, model.zero_outside_fov);
    mask_.resize(mask.size());
    check(cudaMemcpyAsync(mask_.get(), mask.data(), mask.size(), cudaMemcpyHostToDevice, bp_stream_.get()),
          "cudaMemcpyAsync (mask)");
    // The host vector dies here: wait for the copy.
    check(cudaStreamSynchronize(bp_stream_.get()), "cudaStreamSynchronize (mask)");
  }

  SlabGeometry slab_geometry(const ScanModel& model, int y0, int planes) const {
    return slab_geometry(model, Run{y0, planes, std::max(1, planes), std::max(1, planes)});
  }
  SlabGeometry slab_geometry(const ScanModel& model, const Run& run) const {
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

  BatchSet& next_set() {
    BatchSet& set = sets_[next_set_];
    next_set_ ^= 1;
    set.wait();
    return set;
  }

  // `max_src` (nullable): each view's largest |value| (launch_pack_half).
  void pack_quad(const float* const src[4], const float* const max_src[4], const float scale[4], BatchSet& set,
                 int slot, int rows) {
    const size_t q = static_cast<size_t>(slot);
    launch_pack_half(src, max_src, pitch_, scale, set.quad_max.get() + slot, reinterpret_cast<ushort4*>(set.slot(q)),
                     format_.split ? reinterpret_cast<ushort4*>(set.slot_lo(q)) : nullptr,
                     quad_pitch_ / kTexelBytes, columns_, rows, set_rows_, bp_stream_.get());
  }

  // The launch fields every quad batch shares.
  void prepare_quads(QuadBatch& batch, BatchSet& set) {
    batch.quad_max = set.quad_max.get();
    batch.split = format_.split ? 1 : 0;
    clear_scales(set, bp_stream_.get());
  }

  // The packing scales start at 0 (the pack kernels take maxima into them).
  void clear_scales(BatchSet& set, cudaStream_t stream) {
    check(cudaMemsetAsync(set.quad_max.get(), 0, set.quad_max.bytes(), stream), "cudaMemsetAsync (scales)");
  }

  void set_quad_textures(QuadBatch& batch, const BatchSet& set, int slot) {
    batch.tex[slot] = set.quad_tex[static_cast<size_t>(slot)].get();
    batch.tex_lo[slot] = format_.split ? set.quad_tex_lo[static_cast<size_t>(slot)].get() : 0;
  }

  // Resident: backproject the complete orbits of `kind` queued so far into the volume.
  void flush_orbits(const ScanModel& model, int kind, const std::vector<double>& weights) {
    std::vector<int>& pending = pending_orbits_[static_cast<size_t>(kind)];
    if (!pending.empty()) launched_items_.push_back({false, pending});
    launch_group(model, pending, weights, all_chunks_);
    pending.clear();
  }

  // Resident: takes `chunks` (ascending; one evenly spaced run, or two, as
  // a dealing in mirror images gives) as this device's part; they lie one
  // after the other in volume_.
  void hold_chunks(const ScanModel& model, int chunk_planes, const std::vector<int>& chunks) {
    const int ny = model.volume.size[1];
    if (chunk_planes <= 0 || chunk_planes % kPairPlanesPerThread != 0) fail(FDK_ERROR_INTERNAL, "bad resident chunk size");
    chunk_planes_ = chunk_planes;
    slot_of_chunk_.assign(static_cast<size_t>((ny + chunk_planes_ - 1) / chunk_planes_), -1);
    owned_.clear();
    all_chunks_ = Run{};
    second_run_ = static_cast<int>(chunks.size());
    for (int c : chunks) {
      const size_t n = owned_.size();
      if (c < 0 || c >= static_cast<int>(slot_of_chunk_.size()) || (n > 0 && c <= owned_.back()))
        fail(FDK_ERROR_INTERNAL, "bad resident chunk list");
      // The first run's step is its first two chunks'; the second run
      // starts where that step breaks and keeps its own.
      const int first = n < static_cast<size_t>(second_run_) ? 0 : second_run_;
      if (n >= static_cast<size_t>(first) + 2 &&
          c - owned_.back() != owned_[static_cast<size_t>(first) + 1] - owned_[static_cast<size_t>(first)]) {
        if (first > 0) fail(FDK_ERROR_INTERNAL, "bad resident chunk list (more than two runs)");
        second_run_ = static_cast<int>(n);
      }
      slot_of_chunk_[static_cast<size_t>(c)] = static_cast<int>(n);
      owned_.push_back(c);
    }
    // Every chunk in one launch during the scan.
    if (!owned_.empty()) all_chunks_ = owned_run(model, 0, static_cast<int>(owned_.size()));
    const int n = static_cast<int>(owned_.size()), last = static_cast<int>(slot_of_chunk_.size()) - 1;
    mirrored_slots_ = n % 2 == 0 && ny == (last + 1) * chunk_planes_;
    for (int i = 0; i < n && mirrored_slots_; ++i)
      mirrored_slots_ = owned_[static_cast<size_t>(n - 1 - i)] == last - owned_[static_cast<size_t>(i)];
  }

  // Resident, mirrored_slots_: the slots [i, i + m) of the lower half and
  // their mirror images [n - i - m, n - i) as one launch's two runs.
  Run mirrored_span(const ScanModel& model, int i, int m) const {
    const int n = static_cast<int>(owned_.size());
    Run run = owned_run(model, i, m);
    const Run image = owned_run(model, n - i - m, m);
    run.split = run.planes;
    run.y0_b = image.y0;
    run.stride_b = image.stride;
    run.planes += image.planes;
    run.gap = (n - 2 * (i + m)) * chunk_planes_;
    return run;
  }

  // How many of held_'s first items are groups of plane pairs.
  size_t held_plane_groups() const {
    size_t k = 0;
    const auto plane = [&](const HeldItem& item) {
      return !item.views && orbit_kind_[static_cast<size_t>(item.ids.front())] ==
                                static_cast<unsigned char>(MirrorKind::Plane);
    };
    while (k < held_.size() && plane(held_[k])) ++k;
    return k;
  }

  // Resident: our chunks owned_[first .. first + count) as one launch's run.
  Run owned_run(const ScanModel& model, int first, int count) const {
    const auto step = [&](int from, int to) {  // of the slots [from, to)
      return to - from > 1 ? owned_[static_cast<size_t>(from) + 1] - owned_[static_cast<size_t>(from)] : 1;
    };
    const int n = static_cast<int>(owned_.size()), end = first + count;
    const Run last = chunk_run(model, owned_[static_cast<size_t>(end - 1)]);
    // The slots before second_run_ are one evenly spaced run, those from it another.
    const int a_end = first < second_run_ ? std::min(end, second_run_) : end;
    Run run{owned_[static_cast<size_t>(first)] * chunk_planes_, (count - 1) * chunk_planes_ + last.planes,
            chunk_planes_, step(first, first < second_run_ ? second_run_ : n) * chunk_planes_};
    if (a_end < end) {
      run.split = (a_end - first) * chunk_planes_;
      run.y0_b = owned_[static_cast<size_t>(a_end)] * chunk_planes_;
      run.stride_b = step(a_end, n) * chunk_planes_;
    }
    return run;
  }

  // The finish's chunks launched together when `left` remain: a quarter of
  // them at first (at most kFinishSpanVoxels), one by one at the end, so
  // that the last reads wait little while most launches stay large (a
  // launch per chunk of 32 planes kept each of two H200s busy 0.379 s on
  // (b), spans 0.375 s).
  int finish_span(const ScanModel& model, int left) const {
    const uint64_t chunk_voxels = static_cast<uint64_t>(model.plane_floats()) * static_cast<uint64_t>(chunk_planes_);
    const int cap = static_cast<int>(std::min<uint64_t>(static_cast<uint64_t>(left), kFinishSpanVoxels / chunk_voxels));
    return std::max(1, std::min(cap, left / kFinishSpanDivisor));
  }

  Run chunk_run(const ScanModel& model, int chunk) const {
    const int y0 = chunk * chunk_planes_;
    const int planes = std::min(model.volume.size[1], y0 + chunk_planes_) - y0;
    return Run{y0, planes, std::max(1, planes), std::max(1, planes)};
  }

  // Resident: where plane y (in one of our chunks) is in volume_.
  float* planes_at(const ScanModel& model, int y) {
    const int c = y / chunk_planes_;
    const size_t local = static_cast<size_t>(slot_of_chunk_[static_cast<size_t>(c)]) * chunk_planes_ +
                         static_cast<size_t>(y - c * chunk_planes_);
    return volume_.get() + model.plane_floats() * local;
  }

  // Work issued on `stream` from now on waits for every view filtered so
  // far, here or on a peer that copies its views here.
  void after_filters(cudaStream_t stream) {
    order_after_filters(stream);
    for (const DeviceBackend* p : peers_) p->order_after_filters(stream);
  }

  // True when two launches of the scan are still queued: a new one would
  // wait for the GPU (an event never recorded is ready).
  bool gpu_behind() const { return !scan_launches_[static_cast<size_t>(next_scan_launch_)].ready(); }

  void throw_if_failed() const {
    if (failed_.load())
      fail(FDK_ERROR_DEVICE, "GPU " + std::to_string(device_) + " (worker " + std::to_string(role_.worker) +
                                 ") failed earlier");
  }

  // Orbits per group: the first group of plane pairs is small (16), so that
  // the GPUs start after the scan's first views, the others group_size_,
  // where a launch's reading and writing its planes weighs little.
  // `index`: the group's place among the groups of its kind. Measured on
  // (b), one H200, kernels: first groups of 16, 16, 32 0.790 s; 16 0.779 s;
  // none smaller 0.782 s.
  int group_target(int kind, int index) const {
    if (kind != static_cast<int>(MirrorKind::Plane) || index > 0) return group_size_;
    return std::min(16, group_size_);
  }

  // Resident: where `run`'s planes are written.
  float* run_target(const ScanModel& model, const Run& run) { return run.dest ? run.dest : planes_at(model, run.y0); }

  // FaultPlan Scan and Read: this device fails at the `count`th event of
  // `kind` and from then on (a failed device stays failed).
  void inject_fault(FaultPlan::Kind kind, int count) {
    throw_if_failed();
    const FaultPlan& f = role_.fault;
    if (f.kind != kind || f.worker != role_.worker || count < f.after) return;
    failed_ = true;
    fail(FDK_ERROR_DEVICE, "injected failure on GPU " + std::to_string(device_) + " (worker " +
                               std::to_string(role_.worker) + ", a test's FaultPlan)");
  }

  // Resident: quads `group` into the planes of `run`.
  void launch_group(const ScanModel& model, const std::vector<int>& group, const std::vector<double>& weights,
                    const Run& run) {
    if (group.empty() || run.planes <= 0) return;
    if (pairs_) return launch_pair_group(model, group, weights, run);
    BatchSet& set = next_set();
    after_filters(bp_stream_.get());
    QuadBatch batch{};
    batch.count = static_cast<int>(group.size());
    prepare_quads(batch, set);
    for (int s = 0; s < batch.count; ++s) {
      const auto& quad = orbits_[static_cast<size_t>(group[static_cast<size_t>(s)])];
      const float* src[4];
      float scale[4];
      for (int c = 0; c < 4; ++c) {
        src[c] = projections_.get() + static_cast<size_t>(quad[c]) * view_stride_;
        scale[c] = static_cast<float>(weights[static_cast<size_t>(quad[c])]);
      }
      pack_quad(src, nullptr, scale, set, s, rows_);
      const double sid = model.views[static_cast<size_t>(quad[0])].sid;
      fill_terms(batch.view[s], model.matrices[static_cast<size_t>(quad[0])], static_cast<float>(sid * sid), 0);
      set_quad_textures(batch, set, s);
    }
    batch.g = slab_geometry(model, run);
    clock_.begin(bp_stream_.get());
    launch_quads(batch, run_target(model, run), mask_.get(), bp_stream_.get());
    clock_.end(bp_stream_.get());
    set.done.record(bp_stream_.get());
    set.used = true;
  }

  // Resident: mirror pairs `group` into the planes of `run`.
  void launch_pair_group(const ScanModel& model, const std::vector<int>& group, const std::vector<double>& weights,
                         const Run& run) {
    BatchSet& set = next_set();
    PairBatch batch{};
    pack_pairs(model, group, weights, set, batch, bp_stream_.get());
    launch_packed_pairs(model, batch, run);
    set.done.record(bp_stream_.get());
    set.used = true;
  }

  // Packs mirror pairs `group` into `set` (on the backprojection stream)
  // and fills `batch` for them but for its geometry.
  void pack_pairs(const ScanModel& model, const std::vector<int>& group, const std::vector<double>& weights,
                  BatchSet& set, PairBatch& batch, cudaStream_t stream) {
    after_filters(stream);
    batch.count = static_cast<int>(group.size());
    batch.pair_max = set.quad_max.get();
    batch.split = format_.split ? 1 : 0;
    batch.kind = orbit_kind_[static_cast<size_t>(group.front())];
    for (int q : group)
      if (orbit_kind_[static_cast<size_t>(q)] != batch.kind) fail(FDK_ERROR_INTERNAL, "a group mixes mirror kinds");
    clear_scales(set, stream);
    const bool plane = batch.kind == static_cast<int>(MirrorKind::Plane);
    PackPairBatch pack = pack_batch(set, batch.count);
    pack.flip_rows = plane ? 1 : 0;
    for (int s = 0; s < batch.count; ++s) {
      const auto& pair = orbits_[static_cast<size_t>(group[static_cast<size_t>(s)])];
      PackPair& p = pack.pair[s];
      // A view that is its own mirror is looked up twice per voxel; a plane
      // pair's view once per voxel.
      const float share = pair[0] == pair[1] && !plane ? 0.5f : 1.0f;
      for (int c = 0; c < 2; ++c) {
        p.src[c] = projections_.get() + static_cast<size_t>(pair[c]) * view_stride_;
        p.scale[c] = share * static_cast<float>(weights[static_cast<size_t>(pair[c])]);
      }
      p.rows = rows_;
      const double sid = model.views[static_cast<size_t>(pair[0])].sid;
      fill_terms(batch.view[s], model.matrices[static_cast<size_t>(pair[0])], static_cast<float>(sid * sid), 0);
      batch.tex[s] = set.quad_tex[static_cast<size_t>(s)].get();
    }
    launch_pack_pairs(pack, stream);
  }

  // The fields of a pair packing every pair of `set` shares.
  PackPairBatch pack_batch(BatchSet& set, int count) const {
    PackPairBatch pack{};
    pack.count = count;
    pack.src_pitch = pitch_;
    pack.dst_pitch = quad_pitch_ / (format_.split ? 8 : 4);
    pack.columns = columns_;
    pack.texture_rows = set_rows_;
    pack.split = format_.split ? 1 : 0;
    pack.pair_max = set.quad_max.get();
    for (int s = 0; s < count; ++s) pack.pair[s].texels = set.slot(static_cast<size_t>(s));
    return pack;
  }

  void launch_packed_pairs(const ScanModel& model, PairBatch& batch, const Run& run) {
    batch.g = slab_geometry(model, run);
    clock_.begin(bp_stream_.get());
    launch_pairs(batch, run_target(model, run), mask_.get(), bp_stream_.get());
    clock_.end(bp_stream_.get());
  }

  // A group of pairs packed once, as it completed, into a set of its own.
  struct PackedGroup {
    BatchSet set;
    PairBatch batch{};
  };

  // Resident: packs a group of pairs as it completes into a set reserved
  // at set-up, so that the finish's chunks only launch. The rotating sets
  // would pack each group again for every chunk of the finish, work that
  // does not shrink with the GPU count (on a stream of its own the packing
  // measured the same as here on the backprojection's). Without a set left
  // the group is packed when launched.
  void pack_on_completion(const ScanModel& model, HeldItem& item) {
    if (next_packed_ >= packed_groups_.size()) return;
    PackedGroup& g = *packed_groups_[next_packed_];
    pack_pairs(model, item.ids, nominal_weights_, g.set, g.batch, bp_stream_.get());
    item.packed = static_cast<int>(next_packed_++);
  }

  // Resident, at set-up: a set for each group of pairs of the scan, as
  // device memory allows. Made here because allocating sets at the finish
  // kept four H200s idle 0.5 s of (c) (the host made 448 allocations while
  // the GPUs had run out of work).
  void reserve_packed_groups() {
    if (!pairs_) return;
    size_t free_bytes = 0, total_bytes = 0;
    check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    const uint64_t reserve = 512ull << 20;
    uint64_t room = std::min<uint64_t>(budget_ > resident_bytes_ ? budget_ - resident_bytes_ : 0,
                                       free_bytes > reserve ? free_bytes - reserve : 0);
    const uint64_t per_set = static_cast<uint64_t>(group_size_) * slot_stride(rows_) + 4096;
    // Groups hold one kind each.
    std::array<size_t, kMirrorKinds> of_kind{};
    for (unsigned char kind : orbit_kind_) ++of_kind[kind];
    size_t groups = 0;
    for (int kind = 0; kind < kMirrorKinds; ++kind) {
      const int plane = kind == static_cast<int>(MirrorKind::Plane);
      for (size_t n = of_kind[static_cast<size_t>(kind)], g = 0; n > 0; ++g, ++groups)
        n -= std::min(n, static_cast<size_t>(group_target(kind, plane ? static_cast<int>(g) : 0)));
    }
    if (role_.fault.packed_sets_limit >= 0)
      groups = std::min(groups, static_cast<size_t>(role_.fault.packed_sets_limit));
    while (packed_groups_.size() < groups && room >= per_set) {
      room -= per_set;
      auto g = std::make_unique<PackedGroup>();
      try {
        make_set(g->set, group_size_, rows_, false);
      } catch (const Error&) {
        cudaGetLastError();
        break;  // no room after all: the other groups are packed when launched
      }
      packed_groups_.push_back(std::move(g));
    }
  }

  void add_view(const ScanModel& model, int view, const std::vector<double>& weights) {
    pending_views_.push_back(view);
    if (static_cast<int>(pending_views_.size()) == kMaxBatchViews) flush_views(model, weights);
  }

  void flush_views(const ScanModel& model, const std::vector<double>& weights) {
    if (!pending_views_.empty()) launched_items_.push_back({true, pending_views_});
    launch_views(model, pending_views_, weights, all_chunks_);
    pending_views_.clear();
  }

  void launch_item(const ScanModel& model, const HeldItem& item, const std::vector<double>& weights,
                   const Run& run) {
    if (item.packed >= 0) {  // packed with the nominal weights, which `weights` are here
      launch_packed_pairs(model, packed_groups_[static_cast<size_t>(item.packed)]->batch, run);
      return;
    }
    if (item.views)
      launch_views(model, item.ids, weights, run);
    else
      launch_group(model, item.ids, weights, run);
  }

  // Resident: views outside complete quads, straight from their projections.
  void launch_views(const ScanModel& model, const std::vector<int>& views, const std::vector<double>& weights,
                    const Run& run) {
    if (views.empty() || run.planes <= 0) return;
    after_filters(bp_stream_.get());
    GenericBatch batch{};
    batch.count = static_cast<int>(views.size());
    for (int s = 0; s < batch.count; ++s) {
      const int v = views[static_cast<size_t>(s)];
      TextureObject& tex = view_tex_[static_cast<size_t>(v)];
      if (!tex.get())
        tex.make_pitch2d(projections_.get() + static_cast<size_t>(v) * view_stride_, cudaCreateChannelDesc<float>(),
                         columns_, rows_, pitch_ * sizeof(float));
      const double sid = model.views[static_cast<size_t>(v)].sid;
      fill_terms(batch.view[s], model.matrices[static_cast<size_t>(v)],
                 static_cast<float>(weights[static_cast<size_t>(v)] * sid * sid), 0);
      batch.tex[s] = tex.get();
    }
    batch.g = slab_geometry(model, run);
    clock_.begin(bp_stream_.get());
    launch_generic(batch, run_target(model, run), mask_.get(), bp_stream_.get());
    clock_.end(bp_stream_.get());
  }

  // Device to caller memory: straight by DMA when it is page-locked
  // (fdk_alloc_host, or registered by the caller), else by DMA through a
  // ring of pinned bounce chunks, kept up to kBounceChunks - 1 ahead of CPU
  // threads (`copy_tasks`, at most the pool's) copying chunks out in order.
  // With two chunks the DMA waited for each copy and the copy for each DMA,
  // in turn.
  void download(const float* src, size_t count, float* out, cudaStream_t stream, int copy_tasks) {
    if (count == 0) return;
    if (page_locked(out) && page_locked(out + count - 1)) {
      check(cudaMemcpyAsync(out, src, count * sizeof(float), cudaMemcpyDeviceToHost, stream),
            "cudaMemcpyAsync (slab download into page-locked memory)");
      check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (slab download)");
      return;
    }
    if (role_.fault.direct_reads_only)
      fail(FDK_ERROR_INTERNAL, "a slab download went through the bounce buffers (FaultPlan::direct_reads_only)");
    constexpr size_t ring = kBounceChunks;
    const size_t chunk = bounce_chunk_;
    const size_t chunks = (count + chunk - 1) / chunk;
    const auto floats = [&](size_t c) { return std::min(chunk, count - c * chunk); };
    size_t issued = 0;
    const auto issue = [&] {
      check(cudaMemcpyAsync(bounce_.get() + issued % ring * chunk, src + issued * chunk, floats(issued) * sizeof(float),
                            cudaMemcpyDeviceToHost, stream),
            "cudaMemcpyAsync (slab download)");
      bounce_done_[issued % ring].record(stream);
      ++issued;
    };
    while (issued < std::min(chunks, ring)) issue();
    for (size_t c = 0; c < chunks; ++c) {
      bounce_done_[c % ring].synchronize();
      const float* from = bounce_.get() + c % ring * chunk;
      float* to = out + c * chunk;
      const size_t n = floats(c);
      const int tasks = std::max(1, std::min(pool_.size(), copy_tasks));
      pool_.parallel_for(tasks, [&](int t, int) {
        const size_t a = n * t / tasks, b = n * (t + 1) / tasks;
        std::memcpy(to + a, from + a, (b - a) * sizeof(float));
      });
      // Its chunk copied out, the buffer takes the next DMA.
      if (issued < chunks) issue();
    }
  }

  // Streaming, from fdk_finish: the worker thread that computes slabs ahead
  // of the reader into this device's buffers, decompressing on the pool all
  // devices' workers share (pool_ copies the reader's downloads). A device
  // failure retires the worker: its slabs go to the other devices.
  void start_worker(const ScanModel& model, SlabPrefetch& prefetch, int first_buffer, ThreadPool& decode) override {
    if (early_done_) slab_ready_[0].record(bp_stream_.get());
    decode_pool_ = &decode;
    const int worker = prefetch.worker_of(first_buffer);
    worker_ = std::thread([this, &model, &prefetch, first_buffer, worker] {
      try {
        DeviceGuard guard(device_);
        worker_loop(model, prefetch, first_buffer, worker);
      } catch (...) {
        failed_ = true;  // the device cannot even be made current
        prefetch.retire(worker, std::current_exception());
      }
    });
  }

  void worker_loop(const ScanModel& model, SlabPrefetch& prefetch, int first_buffer, int worker) {
    SlabPrefetch::Task task;
    while (prefetch.next_task(task, worker)) {
      try {
        if (role_.fault.kind == FaultPlan::Kernel && role_.fault.worker == role_.worker &&
            slabs_computed_.load() >= role_.fault.after)
          fail(FDK_ERROR_DEVICE, "injected kernel failure on GPU " + std::to_string(device_) + " (worker " +
                                     std::to_string(role_.worker) + ", a test's FaultPlan)");
        const auto range = prefetch.range(task.slab);
        compute_slab(model, range[0], range[1], task.buffer - first_buffer);
        slabs_computed_.fetch_add(1);
        prefetch.task_done(task, nullptr);
      } catch (const Error& e) {
        if (e.code() == FDK_ERROR_DEVICE || e.code() == FDK_ERROR_OUT_OF_MEMORY) {
          failed_ = true;
          prefetch.retire(worker, std::current_exception());
          return;
        }
        prefetch.task_done(task, std::current_exception());  // cancelled: the reader sees it
      } catch (...) {
        prefetch.task_done(task, std::current_exception());
      }
    }
  }

  // Streaming: copies a computed slab out while the worker goes on.
  void download_slab(const ScanModel& model, int buffer, int planes, float* out) override {
    DeviceGuard guard(device_);
    const auto start = std::chrono::steady_clock::now();
    check(cudaStreamWaitEvent(download_stream_.get(), slab_ready_[static_cast<size_t>(buffer)].get(), 0),
          "cudaStreamWaitEvent (slab)");
    download(slab_buffers_[static_cast<size_t>(buffer)].get(), model.plane_floats() * static_cast<size_t>(planes), out,
             download_stream_.get(), kMaxCopyTasks);
    std::lock_guard<std::mutex> lock(timing_mutex_);
    download_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  enum class ItemKind { Pairs, Quads, Singles };

  // Rows [lo, hi] of the detector that planes [y0, y0 + planes) need from
  // the views of `item` (their union: an orbit shares one texture).
  std::array<int, 2> item_window(const ScanModel& model, const std::array<int, 4>& item, int width, int y0, int planes,
                                 int rows) const {
    int lo = rows_, hi = -1;
    for (int c = 0; c < width; ++c) {
      const int v = item[static_cast<size_t>(c)];
      if (v < 0) continue;
      const auto r = rows_for_slab(model.matrices[static_cast<size_t>(v)], model.volume, rows_, y0, y0 + planes);
      lo = std::min(lo, r[0]);
      hi = std::max(hi, r[1]);
    }
    if (hi < lo) hi = lo = 0;
    if (hi - lo + 1 > rows) hi = lo + rows - 1;  // cannot happen with the planner's sizing
    return {lo, hi};
  }

  // Packs `count` mirror pairs (views view_at(s, 0..1), row windows at
  // src_of(s, c), each view's largest |value| at view_max + view) and
  // backprojects them into `slab`.
  template <class ViewAt, class SrcOf>
  void launch_window_pairs(const ScanModel& model, BatchSet& set, int count, ViewAt view_at, SrcOf src_of,
                           const float* view_max, const std::vector<std::array<int, 2>>& window,
                           const std::vector<double>& weights, const SlabGeometry& g, float* slab) {
    PairBatch batch{};
    batch.g = g;
    batch.count = count;
    batch.pair_max = set.quad_max.get();
    batch.split = format_.split ? 1 : 0;
    clear_scales(set, bp_stream_.get());
    PackPairBatch pack = pack_batch(set, count);
    for (int s = 0; s < count; ++s) {
      PackPair& p = pack.pair[s];
      // A view that is its own mirror is looked up twice per voxel.
      const float share = view_at(s, 0) == view_at(s, 1) ? 0.5f : 1.0f;
      for (int c = 0; c < 2; ++c) {
        p.src[c] = src_of(s, c);
        p.max_src[c] = view_max + view_at(s, c);
        p.scale[c] = share * static_cast<float>(weights[static_cast<size_t>(view_at(s, c))]);
      }
      const auto& w = window[static_cast<size_t>(s)];
      p.rows = w[1] - w[0] + 1;
      const double sid = model.views[static_cast<size_t>(view_at(s, 0))].sid;
      fill_terms(batch.view[s], model.matrices[static_cast<size_t>(view_at(s, 0))], static_cast<float>(sid * sid),
                 w[0]);
      batch.tex[s] = set.quad_tex[static_cast<size_t>(s)].get();
    }
    launch_pack_pairs(pack, bp_stream_.get());
    clock_.begin(bp_stream_.get());
    launch_pairs(batch, slab, mask_.get(), bp_stream_.get());
    clock_.end(bp_stream_.get());
  }

  // Early slab, on the filter thread: the first slab's window of `view` is
  // cut from the filtered view into the second slab buffer; groups of
  // pairs go to the GPU in order as they complete.
  void early_view(const ScanModel& model, int view) {
    if (!early_ || early_failed_) return;
    DeviceGuard guard(device_);
    const size_t v = static_cast<size_t>(view);
    if (!same_geometry(model.views[v], nominal_views_[v]) || counted_[v]) {
      early_failed_ = true;  // finish computes the slab from the store
      return;
    }
    if (!early_started_ && !start_early(model)) return;
    const int q = orbit_of_view_[v];
    const auto& w = early_windows_[static_cast<size_t>(q)];
    // The packing scales by the whole view's maximum, as a slab from the
    // store does (ProjectionStore::max_abs): the same bits.
    launch_window_max(scratch_.get(), pitch_, columns_, rows_, early_max_.get() + v, filter_stream_.get());
    check(cudaMemcpy2DAsync(slab_buffers_[1].get() + window_stride_ * v, pitch_ * sizeof(float),
                            scratch_.get() + static_cast<size_t>(w[0]) * pitch_, pitch_ * sizeof(float),
                            columns_ * sizeof(float), w[1] - w[0] + 1, cudaMemcpyDeviceToDevice, filter_stream_.get()),
          "cudaMemcpy2DAsync (early window)");
    early_copied_.record(filter_stream_.get());
    counted_[v] = 1;
    ++orbit_arrivals_[static_cast<size_t>(q)];
    launch_early_groups(model);
  }

  // The first early view: sizes the batch sets for the first slab, clears
  // it, and finds each pair's window. False (and early off) when the
  // windows of all views do not fit the second slab buffer.
  bool start_early(const ScanModel& model) {
    early_started_ = true;
    const auto range = model.slabs.front();
    const int planes = range[1] - range[0];
    const int rows = window_rows(planes);
    make_sets(group_size_, rows, true);
    const size_t buffer_floats = model.plane_floats() * static_cast<size_t>(max_planes_);
    if (range[0] != 0 || window_stride_ * model.views.size() > buffer_floats) {
      early_ = false;
      return false;
    }
    for (auto& b : slab_buffers_) b.resize(buffer_floats);
    check(cudaMemsetAsync(slab_buffers_[0].get(), 0, model.plane_floats() * planes * sizeof(float), bp_stream_.get()),
          "cudaMemsetAsync (early slab)");
    early_max_.resize(model.views.size());
    check(cudaMemsetAsync(early_max_.get(), 0, early_max_.bytes(), filter_stream_.get()), "cudaMemsetAsync (maxima)");
    compute_mask(model, true);
    early_windows_.clear();
    for (const auto& orbit : orbits_) early_windows_.push_back(item_window(model, orbit, 2, range[0], planes, rows));
    return true;
  }

  // Launches the complete groups of pairs, in order, into the first slab.
  void launch_early_groups(const ScanModel& model) {
    const auto range = model.slabs.front();
    const size_t total = orbits_.size(), group = static_cast<size_t>(group_size_);
    while (early_next_ * group < total) {
      const size_t first = early_next_ * group, last = std::min(total, first + group);
      for (size_t q = first; q < last; ++q)
        if (orbit_arrivals_[q] < orbit_size_[q]) return;
      check(cudaStreamWaitEvent(bp_stream_.get(), early_copied_.get(), 0), "cudaStreamWaitEvent (early windows)");
      BatchSet& set = next_set();
      const std::vector<std::array<int, 2>> window(early_windows_.begin() + static_cast<std::ptrdiff_t>(first),
                                                   early_windows_.begin() + static_cast<std::ptrdiff_t>(last));
      auto view_at = [&](int s, int c) { return orbits_[first + static_cast<size_t>(s)][static_cast<size_t>(c)]; };
      auto src_of = [&](int s, int c) {
        return slab_buffers_[1].get() + window_stride_ * static_cast<size_t>(view_at(s, c));
      };
      launch_window_pairs(model, set, static_cast<int>(last - first), view_at, src_of,
                          reinterpret_cast<const float*>(early_max_.get()), window, nominal_weights_,
                          slab_geometry(model, range[0], range[1] - range[0]), slab_buffers_[0].get());
      set.done.record(bp_stream_.get());
      set.used = true;
      ++early_next_;
    }
  }

  // fdk_finish: true when the first slab is complete from the scan (every
  // view arrived once, as announced, none dropped, weights unchanged).
  bool finish_early(const ScanModel& model) {
    if (!early_started_ || !early_ || early_failed_ || dropped_.load()) return false;
    for (unsigned char a : model.arrived)
      if (!a) return false;
    if (model.view_weights != nominal_weights_) return false;
    launch_early_groups(model);
    return early_next_ * static_cast<size_t>(group_size_) >= orbits_.size();
  }

  // Worker: planes [y0, y1) from the compressed store into slab buffer
  // `buffer`; its event marks the end.
  void compute_slab(const ScanModel& model, int y0, int y1, int buffer) {
    const int planes = y1 - y0;
    const int rows = window_rows(planes);
    if (store_max_.size() == 0) upload_store_maxima(model);
    if (set_rows_ < rows) {
      check(cudaStreamSynchronize(bp_stream_.get()), "cudaStreamSynchronize");
      make_sets(group_size_, rows, true);
    }
    DeviceBuffer<float>& slab = slab_buffers_[static_cast<size_t>(buffer)];
    slab.resize(model.plane_floats() * static_cast<size_t>(std::max(planes, max_planes_)));
    check(cudaMemsetAsync(slab.get(), 0, model.plane_floats() * planes * sizeof(float), bp_stream_.get()),
          "cudaMemsetAsync (slab)");
    // Work items: complete orbits (pairs or quads), then the other views in
    // groups of four.
    std::vector<std::array<int, 4>> items;
    std::vector<int> singles;
    for (const auto& orbit : orbits_) {
      bool complete = true;
      for (int v : orbit) complete &= v < 0 || model.arrived[static_cast<size_t>(v)] != 0;
      if (complete) {
        items.push_back(orbit);
      } else {
        for (int v : orbit)
          if (v >= 0 && model.arrived[static_cast<size_t>(v)]) singles.push_back(v);
      }
    }
    const size_t orbit_items = items.size();
    for (int v : model.view_order)
      if (orbit_of_view_[static_cast<size_t>(v)] < 0) singles.push_back(v);
    for (size_t s = 0; s < singles.size(); s += 4) {
      std::array<int, 4> group{-1, -1, -1, -1};
      for (size_t c = 0; c < 4 && s + c < singles.size(); ++c) group[c] = singles[s + c];
      items.push_back(group);
    }
    const ItemKind orbit_kind = pairs_ ? ItemKind::Pairs : ItemKind::Quads;
    size_t first = 0;
    while (first < items.size()) {
      throw_if_cancelled(model);
      // Orbits and singles never share a launch.
      const bool orbit = first < orbit_items;
      const size_t per_launch = static_cast<size_t>(orbit ? group_size_ : std::min(kMaxBatchViews, window_slots_) / 4);
      size_t last = std::min(items.size(), first + per_launch);
      if (orbit && last > orbit_items) last = orbit_items;
      run_stream_batch(model, items, first, last, orbit ? orbit_kind : ItemKind::Singles, y0, planes, rows,
                       slab.get());
      first = last;
    }
    slab_ready_[static_cast<size_t>(buffer)].record(bp_stream_.get());
  }

  // Each stored view's largest |value| (ProjectionStore::max_abs), which
  // scales its packing whatever its window; 0 for a view never stored.
  void upload_store_maxima(const ScanModel& model) {
    std::vector<float> maxima(model.views.size(), 0.0f);
    for (size_t v = 0; v < maxima.size(); ++v)
      if (model.store->has(static_cast<int>(v))) maxima[v] = model.store->max_abs(static_cast<int>(v));
    store_max_.resize(maxima.size());
    check(cudaMemcpy(store_max_.get(), maxima.data(), maxima.size() * sizeof(float), cudaMemcpyHostToDevice),
          "cudaMemcpy (view maxima)");
  }

  void run_stream_batch(const ScanModel& model, const std::vector<std::array<int, 4>>& items, size_t first,
                        size_t last, ItemKind kind, int y0, int planes, int rows, float* slab) {
    BatchSet& set = next_set();
    const int count = static_cast<int>(last - first);
    const int width = kind == ItemKind::Pairs ? 2 : 4;  // windows per item
    auto view_at = [&](int s, int c) { return items[first + static_cast<size_t>(s)][static_cast<size_t>(c)]; };
    std::vector<std::array<int, 2>> window(static_cast<size_t>(count));
    for (int s = 0; s < count; ++s)
      window[static_cast<size_t>(s)] = item_window(model, items[first + static_cast<size_t>(s)], width, y0, planes, rows);
    // Decompress on CPU threads into pinned memory, then upload on the
    // upload stream while the GPU still runs the previous batch.
    const auto upload_start = std::chrono::steady_clock::now();
    decode_pool_->parallel_for(count * width, [&](int task, int) {
      const int v = view_at(task / width, task % width);
      if (v < 0) return;
      const auto& w = window[static_cast<size_t>(task / width)];
      float* dst = set.staging.get() + static_cast<size_t>(task) * columns_ * rows;
      model.store->read_rows(v, w[0], w[1] + 1, dst);
    });
    for (int task = 0; task < count * width; ++task) {
      if (view_at(task / width, task % width) < 0) continue;
      const auto& w = window[static_cast<size_t>(task / width)];
      check(cudaMemcpy2DAsync(set.windows.get() + window_stride_ * task, pitch_ * sizeof(float),
                              set.staging.get() + static_cast<size_t>(task) * columns_ * rows,
                              columns_ * sizeof(float), columns_ * sizeof(float), w[1] - w[0] + 1,
                              cudaMemcpyHostToDevice, upload_stream_.get()),
            "cudaMemcpy2DAsync (window upload)");
    }
    set.uploaded.record(upload_stream_.get());
    check(cudaStreamWaitEvent(bp_stream_.get(), set.uploaded.get(), 0), "cudaStreamWaitEvent (windows)");
    {
      std::lock_guard<std::mutex> lock(timing_mutex_);
      upload_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - upload_start).count();
    }
    const SlabGeometry g = slab_geometry(model, y0, planes);
    auto window_of = [&](int s, int c) { return set.windows.get() + window_stride_ * (width * s + c); };
    if (kind == ItemKind::Pairs) {
      launch_window_pairs(model, set, count, view_at, window_of, store_max_.get(), window, model.view_weights, g,
                          slab);
    } else if (kind == ItemKind::Quads) {
      QuadBatch batch{};
      batch.g = g;
      batch.count = count;
      prepare_quads(batch, set);
      for (int s = 0; s < count; ++s) {
        const float* src[4];
        const float* max_src[4];
        float scale[4];
        for (int c = 0; c < 4; ++c) {
          src[c] = window_of(s, c);
          max_src[c] = store_max_.get() + view_at(s, c);
          scale[c] = static_cast<float>(model.view_weights[static_cast<size_t>(view_at(s, c))]);
        }
        const auto& w = window[static_cast<size_t>(s)];
        pack_quad(src, max_src, scale, set, s, w[1] - w[0] + 1);
        const double sid = model.views[static_cast<size_t>(view_at(s, 0))].sid;
        fill_terms(batch.view[s], model.matrices[static_cast<size_t>(view_at(s, 0))], static_cast<float>(sid * sid),
                   w[0]);
        set_quad_textures(batch, set, s);
      }
      clock_.begin(bp_stream_.get());
      launch_quads(batch, slab, mask_.get(), bp_stream_.get());
      clock_.end(bp_stream_.get());
    } else {
      GenericBatch batch{};
      batch.g = g;
      for (int task = 0; task < count * width; ++task) {
        const int v = view_at(task / width, task % width);
        if (v < 0) continue;
        const auto& w = window[static_cast<size_t>(task / width)];
        launch_repeat_last_row(set.windows.get() + window_stride_ * task, pitch_, columns_, w[1] - w[0] + 1, set_rows_,
                               bp_stream_.get());
        const double sid = model.views[static_cast<size_t>(v)].sid;
        fill_terms(batch.view[batch.count], model.matrices[static_cast<size_t>(v)],
                   static_cast<float>(model.view_weights[static_cast<size_t>(v)] * sid * sid),
                   window[static_cast<size_t>(task / width)][0]);
        batch.tex[batch.count] = set.window_tex[static_cast<size_t>(task)].get();
        ++batch.count;
      }
      clock_.begin(bp_stream_.get());
      launch_generic(batch, slab, mask_.get(), bp_stream_.get());
      clock_.end(bp_stream_.get());
    }
    set.done.record(bp_stream_.get());
    set.used = true;
  }

  int device_;
  DeviceRole role_;
  DeviceScope scope_;  // our device is current while members are built and released
  ThreadPool pool_;
  // Filtering runs ahead of backprojection launches that are long (a batch
  // over the whole resident volume), so a push never waits for one.
  Stream filter_stream_{+1}, bp_stream_{-1}, store_stream_{0}, download_stream_{0}, upload_stream_{0};
  std::mutex store_copy_mutex_;
  GpuFilter filter_;
  // Resident: more filters on streams of their own (filter_share).
  std::vector<std::unique_ptr<Stream>> more_filter_streams_;
  std::vector<std::unique_ptr<GpuFilter>> more_filters_;
  size_t next_filter_ = 0;
  std::vector<int> filter_view_;  // the view each filter last took, until its upload is waited for
  std::vector<const DeviceBackend*> peers_;  // resident: devices whose filters copy views here
  TexelFormat format_;
  size_t tex_align_ = 32;
  uint64_t budget_ = 0;
  uint64_t resident_bytes_ = 0;  // resident: device memory counted against the budget
  int columns_ = 0, rows_ = 0;
  size_t pitch_ = 0, quad_pitch_ = 0;
  size_t base_align_ = 64;    // texture base addresses, in floats
  size_t view_stride_ = 0;    // resident projections, in floats
  size_t window_stride_ = 0;  // streaming row windows, in floats
  bool resident_ = false;
  int max_planes_ = 0;        // streaming: planes per slab buffer
  int window_slots_ = kStreamViews;  // streaming: row windows per batch set
  double rows_per_plane_ = 1;

  // Quads, or (resident only) mirror pairs {a, b, -1, -1}, a == b for a view
  // that is its own mirror.
  std::vector<std::array<int, 4>> orbits_;
  bool pairs_ = false;
  int group_size_ = kResidentQuads;  // orbits per resident launch
  std::vector<int> orbit_of_view_;
  std::vector<int> orbit_size_;      // distinct views per orbit
  std::vector<int> orbit_arrivals_;
  // Orbits complete (by kind) and views outside orbits, waiting for a group.
  std::array<std::vector<int>, kMirrorKinds> pending_orbits_;
  std::vector<int> pending_views_;
  std::vector<unsigned char> orbit_kind_;  // per orbit: its MirrorKind (quads: 0)
  std::vector<HeldItem> held_;  // in arrival order, not launched yet (the GPU was behind)
  // Resident: the items launched into the whole volume, in order (during
  // the scan, or all of them when finish started again), and the weights
  // they had when not the nominal ones: with held_, a chunk's recipe.
  std::vector<HeldItem> launched_items_;
  std::vector<double> final_weights_;
  // Resident: another device's chunk recomputed here (read_foreign_planes).
  std::mutex foreign_mutex_;
  DeviceBuffer<float> foreign_;
  int foreign_chunk_ = -1;
  Event foreign_ready_;
  std::atomic<int> views_seen_{0};  // resident: views filtered or accounted here (FaultPlan)
  std::atomic<int> reads_{0};       // resident: plane reads (FaultPlan)
  // Resident: the chunks this device holds, stored one after the other in
  // volume_ (slot_of_chunk_: a chunk's place there, -1 for another
  // device's), and all of them as one launch's planes (none: 0 planes).
  int chunk_planes_ = 8;
  std::vector<int> owned_;
  std::vector<int> slot_of_chunk_;
  Run all_chunks_{};
  std::vector<Event> chunk_ready_;       // resident: chunk c of the volume is final
  std::atomic<int> chunks_launched_{0};  // resident: owned_[0..n) have their event recorded
  std::mutex launch_mutex_;
  std::condition_variable launched_;
  std::exception_ptr launch_error_;
  bool launcher_done_ = false;
  std::atomic<bool> stop_launching_{false};
  std::thread launcher_;  // resident, from fdk_finish: launches the chunks
  bool finished_ = false;
  std::vector<double> nominal_weights_;
  std::vector<ViewGeometry> nominal_views_;
  bool geometry_changed_ = false, dirty_ = false;
  std::vector<unsigned char> counted_;  // views accumulated into the resident volume
  std::atomic<bool> dropped_{false};    // a view accumulated was then not stored

  DeviceBuffer<float> volume_, projections_, scratch_;
  std::array<DeviceBuffer<float>, kSlabBuffers> slab_buffers_;  // streaming
  DeviceBuffer<float> store_max_;     // streaming: each view's largest |value|, from the store
  DeviceBuffer<unsigned> early_max_;  // early slab: the same, as float bits, from the filtered views
  std::array<Event, kSlabBuffers> slab_ready_;
  DeviceBuffer<unsigned char> mask_;
  std::vector<TextureObject> view_tex_;
  std::array<BatchSet, 2> sets_;
  // Resident: a set per group of pairs, filled as the groups complete (the
  // first next_packed_ are).
  std::vector<std::unique_ptr<PackedGroup>> packed_groups_;
  size_t next_packed_ = 0;
  // Resident: the last two launches during the scan (gpu_behind).
  std::array<Event, 2> scan_launches_;
  int next_scan_launch_ = 0;
  mutable KernelClock clock_;
  size_t bounce_chunk_ = 0;           // floats per chunk of bounce_
  PinnedBuffer<float> bounce_;        // kBounceChunks chunks
  std::array<Event, kBounceChunks> bounce_done_;
  mutable std::mutex timing_mutex_;  // the worker adds upload time, the reader download time
  double upload_seconds_ = 0, download_seconds_ = 0;
  // Streaming, from fdk_finish: the worker computing slabs ahead of reads.
  ThreadPool* decode_pool_ = nullptr;  // streaming: shared by every device's worker (the coordinator's)
  std::atomic<int> slabs_computed_{0};
  std::atomic<bool> failed_{false};
  bool early_done_ = false;  // the first slab was completed during the scan
  // Early slab (streaming): the first slab backprojected during the scan.
  bool early_ = false, early_started_ = false, early_failed_ = false;
  size_t early_next_ = 0;                          // next group of pairs to launch
  int second_run_ = 0;                             // resident: the slot where owned_'s second run starts
  bool mirrored_slots_ = false;                    // resident: slot n-1-i holds the mirror image of slot i's chunk
  int plane_orbits_left_ = 0;                      // resident: plane pairs not yet arrived
  int plane_groups_ = 0;                           // resident: groups of plane pairs formed
  std::vector<std::array<int, 2>> early_windows_;  // per pair: its rows for the first slab
  Event early_copied_;                             // on the filter stream: windows cut so far
  std::thread worker_;  // last: joined first (in the destructor's body)
  int next_set_ = 0;
  int set_rows_ = 0;
};

}  // namespace

int resident_chunk_planes(int ny, int devices) {
  // Chunks cut along the threads' plane runs, so every voxel sees the same
  // arithmetic as in a whole-volume launch.
  static_assert(kPairPlanesPerThread % kPlanesPerThread == 0, "chunks must suit every kernel");
  const int chunks = kFinishChunks * std::max(1, devices);
  return static_cast<int>(
      round_up(static_cast<size_t>((ny + chunks - 1) / chunks), static_cast<size_t>(kPairPlanesPerThread)));
}

int aligned_slab_planes() { return kPairPlanesPerThread; }

// The process-wide FaultPlan (fault_plan_state.hpp): the default unless a
// test links the setter (test_seams.cpp, never part of libfdk.so).
namespace fault_plan_state {
std::mutex mutex;
FaultPlan plan;
}  // namespace fault_plan_state

FaultPlan current_fault_plan() {
  std::lock_guard<std::mutex> lock(fault_plan_state::mutex);
  return fault_plan_state::plan;
}

std::unique_ptr<DeviceBackend> make_device_backend(const ScanModel& model, const Settings& settings,
                                                   const DeviceRole& role) {
  return std::make_unique<OneDevice>(model, settings, role);
}

}  // namespace fdk::cuda
