// One GPU of the CUDA backend (see device_backend.hpp for how several share
// the work). Projections are weighted and filtered on the device. When the
// volume, the filtered projections and the batch buffers fit the GPU
// budget, the volume stays resident and views are backprojected as they
// arrive ("resident" mode: the volume is done when the scan ends), by
// symmetric quads where they serve as many views as mirror pairs (a quad's
// lookup serves four views), else by pairs (complete within each half of
// the scan). Otherwise slabs are computed from the compressed
// store ("streaming" mode): from fdk_finish on, a worker thread takes slabs
// from the shared SlabPrefetch and computes them into two device slab
// buffers, ahead of the reader, which copies a finished slab out while the
// next one computes. CPU threads decompress each view's row window into
// pinned memory while the GPU works on the previous batch, and the windows
// upload on their own stream.
//
// One class holds a device's state; its members are defined in one file
// per job, so that each can be read (and compiled) on its own:
//   one_device.cpp         set-up: the mode, the budget, the batch sets
//   view_filtering.cpp     filtering views, copies to peers and the store
//   resident_scan.cpp      resident: groups launched as views complete, finish
//   resident_launches.cpp  resident: packing and launching a group into a run
//   resident_chunks.cpp    resident: the chunks a device holds, their reads
//   progress_credit.cpp    resident: the progress counted as launches complete
//   streamed_slabs.cpp     streaming: the worker, row windows from the store
//   early_slab.cpp         streaming: a slab per GPU computed during the scan
//   slab_download.cpp      device to host: DMA or the ring of bounce chunks
//   device_faults.cpp      the test seams (FaultPlan) as a device meets them
// Internal to kernels/: not a header of the library's interface.
#pragma once
#include <cuda.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <future>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "backprojection_launch.hpp"
#include "device_backend.hpp"
#include "device_resources.hpp"
#include "fdk/core/slab_prefetch.hpp"
#include "fdk/core/thread_pool.hpp"
#include "filter/gpu_filter.hpp"
#include "progress_credit.hpp"
#include "symmetry.hpp"

namespace fdk::cuda {

// Quads per launch when resident (16 measured 1550 GUPS on (b) against
// 1800 for 32: each launch reads and writes the whole volume).
constexpr int kResidentQuads = 32;
// Mirror pairs per launch when resident: the same 128 views as the quads.
constexpr int kResidentPairs = kMaxBatchPairs;
// Quads per launch when streaming: as many views as a resident launch
// (each launch reads and writes its whole slab; 8 quads a launch did so
// for 32 views).
constexpr int kStreamQuads = kResidentQuads;
constexpr int kStreamViews = 4 * kStreamQuads;
constexpr int kStreamPairs = kMaxBatchPairs;  // mirror pairs per launch when streaming
// Slab downloads into pageable memory go through a ring of pinned chunks.
constexpr int kBounceChunks = 4;
constexpr size_t kTexelBytes = 8;      // a packed quad texel (half4)
constexpr size_t kPairTexelBytes = 4;  // a packed pair texel (half2)

inline size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

inline void fill_terms(ViewTerms& t, const IndexMatrix& m, float weight, int row_offset) {
  for (int e = 0; e < 12; ++e) t.m[e] = static_cast<float>(m.m[e]);
  t.weight = weight;
  t.row_offset = static_cast<float>(row_offset);
}

// A set of buffers one launch uses; two sets alternate so the host prepares
// one while the GPU works on the other.
struct BatchSet {
  // Every slot's texels in one allocation (one cuMemAlloc per slot cost
  // about 1.3 ms each on an H200 host: 0.1 s per group of 64 pairs).
  // Packed values are half precision, one half per value for both storage
  // precisions (a quad's four views a half4 texel, 8 bytes, which the
  // texture unit filters at several times the rate of float4; a pair's two
  // a half2): a second half with the rounding remainder (hi + lo, ~22 bits)
  // cost 16 % of the kernels' time on one H200 and moved the GPU's distance
  // to the CPU backend by 1e-6 (7.71e-4 -> 7.72e-4), which the texture
  // unit's 8-bit interpolation weights set (docs/DECISIONS.md, "One half
  // per texel value").
  DeviceBuffer<unsigned char> slots;
  size_t slot_stride = 0;  // bytes from one slot to the next
  unsigned char* slot(size_t q) const { return slots.get() + q * slot_stride; }
  std::vector<TextureObject> quad_tex;
  DeviceBuffer<unsigned> quad_max;  // per slot, for the packing scale
  DeviceBuffer<float> windows;            // streaming: window_slots_ row windows
  std::vector<TextureObject> window_tex;  // streaming: one per window
  PinnedWindows staging;                  // streaming: decompressed windows (OneDevice::reserve_staging)
  Event uploaded;                         // streaming: the windows are on the device
  Event done;
  bool used = false;
  void wait() {
    if (used) done.synchronize();
  }
  bool free() const { return !used || done.ready(); }
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

// The device's ordinal, unless a test injects a set-up failure into it
// (device_faults.cpp).
int checked_ordinal(const DeviceRole& role);

class OneDevice final : public DeviceBackend {
 public:
  // one_device.cpp: set-up (the mode, the budget) and the sizing answers.
  OneDevice(const ScanModel& model, const Settings& settings, const DeviceRole& role);
  ~OneDevice() override;
  fdk_backend kind() const override { return FDK_BACKEND_CUDA; }
  void add_timings(fdk_timings& t) const override;
  uint64_t preferred_slab_bytes(const ScanModel& model) const override;
  int max_slab_planes(const ScanModel& model) const override;
  uint64_t host_work_bytes(const ScanModel& model, int planes) const override;
  std::unique_ptr<StagingBuffer> make_staging(size_t floats) const override;
  double busy_seconds() const override;
  bool early_slab_done() const override { return early_done_; }
  bool early_slab_planned() const override { return early_; }
  int early_slab() const override { return role_.early_slab; }
  int ordinal() const override { return device_; }
  bool resident() const override { return resident_; }
  int slabs_computed() const override { return slabs_computed_.load(); }
  bool failed() const override { return failed_.load(); }

  // view_filtering.cpp: filtering views, sharing them with the peers.
  void filter(const ScanModel& model, int view, const ViewGeometry& geometry, const float* pixels,
              size_t pitch_bytes, float* filtered, int lane) override;
  void read_filtered(const ScanModel& model, int view, float* out) override;
  void filter_share(const ScanModel& model, int view, const ViewGeometry& geometry, const float* pixels,
                    size_t pitch_bytes, const std::vector<DeviceBackend*>& to) override;
  int uploads_in_flight() const override { return resident_ ? static_cast<int>(1 + more_filters_.size()) : 0; }
  void wait_uploaded(int view) noexcept override;
  void wait_filters() override;
  PreviewSource preview_source(int view, CUstream reader) override {
    if (resident_) {
      after_filters(reader);
      return {filtered_view(view), reader, true};
    }
    return {scratch_[scratch_at_].get(), filter_stream_.get(), false};
  }
  float* filtered_view(int view) override { return projections_.get() + static_cast<size_t>(view) * view_stride_; }
  size_t filtered_pitch() const override { return pitch_; }
  void set_peers(const std::vector<const DeviceBackend*>& peers) override { peers_ = peers; }
  void order_after_filters(CUstream stream) const override;

  // resident_scan.cpp: groups launched as the views complete; the finish.
  void view_filtered(const ScanModel& model, int view) override;
  void view_dropped(const ScanModel&, int) override { dropped_.store(true); }
  void finish(const ScanModel& model) override;

  // resident_chunks.cpp: the chunks after the scan and their reads.
  void launch_all_chunks(const ScanModel& model) override;
  bool planes_ready(int y0, int y1) const override;
  void wait_launched(const ScanModel& model, int chunk);
  void backproject(const ScanModel& model, int y0, int y1, float* out) override {
    read_planes(model, y0, y1, out, kMaxCopyTasks);
  }
  void read_planes(const ScanModel& model, int y0, int y1, float* out, int copy_tasks) override;
  void read_foreign_planes(const ScanModel& model, int y0, int y1, float* out, int copy_tasks) override;
  bool all_chunks_ready() const override;

 private:
  // A group of pairs packed once, as it completed, into a set of its own.
  struct PackedGroup {
    BatchSet set;
    PairBatch batch{};
  };
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
  // The packing scales start at 0 (the pack kernels take maxima into them).
  void clear_scales(BatchSet& set, CUstream stream) {
    zero_async(set.quad_max.get(), set.quad_max.bytes(), stream, "cuMemsetD8Async (scales)");
  }
  // True when two launches of the scan are still queued: a new one would
  // wait for the GPU (an event never recorded is ready).
  bool gpu_behind() const { return !scan_launches_[static_cast<size_t>(next_scan_launch_)].ready(); }
  // Resident: where `run`'s planes are written.
  float* run_target(const ScanModel& model, const Run& run) { return run.dest ? run.dest : planes_at(model, run.y0); }

  // one_device.cpp
  uint64_t filter_bytes(const ScanModel& model) const;
  void make_sets(int quads, int rows, bool streaming);
  void make_set(BatchSet& set, int quads, int rows, bool streaming);
  void reserve_staging(int rows);
  void reserve_staging_in_background(int rows);
  void pin_staging(int rows, bool paced);
  void compute_mask(const ScanModel& model, bool nominal);
  SlabGeometry slab_geometry(const ScanModel& model, int y0, int planes) const;
  SlabGeometry slab_geometry(const ScanModel& model, const Run& run) const;
  void reserve_packed_groups();

  // view_filtering.cpp
  void after_filters(CUstream stream);

  // resident_scan.cpp
  void flush_orbits(const ScanModel& model, int kind, const std::vector<double>& weights);
  void throw_if_failed() const;
  int group_target(int kind, int index) const;
  void add_view(const ScanModel& model, int view, const std::vector<double>& weights);
  void flush_views(const ScanModel& model, const std::vector<double>& weights);

  // resident_launches.cpp
  BatchSet& next_set();
  bool next_set_free() const;
  void pack_quad(const float* const src[4], const float* const max_src[4], const float scale[4], BatchSet& set,
                 int slot, int rows);
  void prepare_quads(QuadBatch& batch, BatchSet& set);
  void set_quad_textures(QuadBatch& batch, const BatchSet& set, int slot);
  void launch_group(const ScanModel& model, const std::vector<int>& group, const std::vector<double>& weights,
                    const Run& run);
  void launch_pair_group(const ScanModel& model, const std::vector<int>& group, const std::vector<double>& weights,
                         const Run& run);
  void pack_pairs(const ScanModel& model, const std::vector<int>& group, const std::vector<double>& weights,
                  BatchSet& set, PairBatch& batch, CUstream stream);
  PackPairBatch pack_batch(BatchSet& set, int count) const;
  void launch_packed_pairs(const ScanModel& model, PairBatch& batch, const Run& run);
  void pack_on_completion(const ScanModel& model, HeldItem& item);
  void launch_item(const ScanModel& model, const HeldItem& item, const std::vector<double>& weights,
                   const Run& run);
  void launch_views(const ScanModel& model, const std::vector<int>& views, const std::vector<double>& weights,
                    const Run& run);

  // resident_chunks.cpp
  void hold_chunks(const ScanModel& model, int chunk_planes, const std::vector<int>& chunks);
  Run mirrored_span(const ScanModel& model, int i, int m) const;
  size_t held_plane_groups() const;
  Run owned_run(const ScanModel& model, int first, int count) const;
  int finish_span(const ScanModel& model, int left) const;
  Run chunk_run(const ScanModel& model, int chunk) const;
  std::vector<std::array<int, 2>> slot_planes(const ScanModel& model, int first, int count) const;
  int64_t item_views(const HeldItem& item) const;
  void credit_items(const ScanModel& model, CUevent done, const std::vector<std::array<int, 2>>& planes,
                    const std::vector<HeldItem>& items, size_t first, size_t last);
  float* planes_at(const ScanModel& model, int y);

  // slab_download.cpp
  void download(const float* src, size_t count, float* out, CUstream stream, int copy_tasks);
  void download_slab(const ScanModel& model, int buffer, int planes, float* out) override;

  // streamed_slabs.cpp
  void start_worker(const ScanModel& model, SlabPrefetch& prefetch, int first_buffer, ThreadPool& decode) override;
  void worker_loop(const ScanModel& model, SlabPrefetch& prefetch, int first_buffer, int worker);
  std::array<int, 2> item_window(const ScanModel& model, const std::array<int, 4>& item, int width, int y0, int planes,
                                 int rows) const;
  void compute_slab(const ScanModel& model, int y0, int y1, int buffer);
  void upload_store_maxima(const ScanModel& model);
  void run_stream_batch(const ScanModel& model, const std::vector<std::array<int, 4>>& items, size_t first,
                        size_t last, bool orbits, int y0, int planes, int rows, float* slab);

  // early_slab.cpp
  void share_early_view(const ScanModel& model, int view, const std::vector<DeviceBackend*>& to) override;
  bool takes_early_windows() const override {
    std::lock_guard<std::mutex> lock(early_mutex_);
    return early_ && !early_failed_;
  }
  bool receive_early_window(const ScanModel& model, int view, const EarlySource& from, CUevent& done) override;
  struct EarlyLink;
  EarlyLink* early_link(int sender);
  bool start_early(const ScanModel& model);
  enum class WhenBusy { defer, wait };
  void launch_early_groups(const ScanModel& model, WhenBusy busy);
  bool finish_early(const ScanModel& model);

  // device_faults.cpp
  void inject_fault(FaultPlan::Kind kind, int count);
  void inject_slab_fault();
  void hold_early_group();
  void hold_staging() const;

  // one_device.hpp, below
  template <class ViewAt, class SrcOf>
  void launch_window_pairs(const ScanModel& model, BatchSet& set, int count, ViewAt view_at, SrcOf src_of,
                           const float* view_max, const std::vector<std::array<int, 2>>& window,
                           const std::vector<double>& weights, const SlabGeometry& g, float* slab);
  template <class ViewAt, class SrcOf>
  void launch_window_quads(const ScanModel& model, BatchSet& set, int count, ViewAt view_at, SrcOf src_of,
                           const float* view_max, const std::vector<std::array<int, 2>>& window,
                           const std::vector<double>& weights, const SlabGeometry& g, float* slab);
  // The volume's orbits, pairs or quads (pairs_), as the streamed slabs
  // and the early slab launch them; orbit_width() views each.
  template <class ViewAt, class SrcOf>
  void launch_window_orbits(const ScanModel& model, BatchSet& set, int count, ViewAt view_at, SrcOf src_of,
                            const float* view_max, const std::vector<std::array<int, 2>>& window,
                            const std::vector<double>& weights, const SlabGeometry& g, float* slab) {
    if (pairs_)
      launch_window_pairs(model, set, count, view_at, src_of, view_max, window, weights, g, slab);
    else
      launch_window_quads(model, set, count, view_at, src_of, view_max, window, weights, g, slab);
  }
  int orbit_width() const { return pairs_ ? 2 : 4; }

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
  std::vector<std::array<int, 2>> owned_planes_;  // our chunks' planes, as ranges of y (fdk_progress)
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

  DeviceBuffer<float> volume_, projections_;
  // Streaming: the view just filtered, in one of two buffers, so that the
  // GPUs copy their early slabs' windows of a view while the next view is
  // filtered into the other buffer; scratch_readers_ are those copies'
  // events, which a buffer's next filtering waits for.
  std::array<DeviceBuffer<float>, 2> scratch_;
  std::array<std::vector<CUevent>, 2> scratch_readers_;
  int scratch_at_ = 0;
  std::array<DeviceBuffer<float>, kSlabBuffers> slab_buffers_;  // streaming
  DeviceBuffer<float> store_max_;     // streaming: each view's largest |value|, from the store
  DeviceBuffer<unsigned> early_max_;  // early slab: the same, as float bits, from the filtered views
  DeviceBuffer<unsigned> shared_max_;  // the early slabs' sender: each view's, as it computed them
  std::array<Event, kSlabBuffers> slab_ready_;
  DeviceBuffer<unsigned char> mask_;
  std::vector<TextureObject> view_tex_;
  std::array<BatchSet, 2> sets_;
  // Streaming: the sets' staging being pinned off the filter lanes (early
  // slab), until reserve_staging.
  std::future<void> staging_;
  // Resident: a set per group of pairs, filled as the groups complete (the
  // first next_packed_ are).
  std::vector<std::unique_ptr<PackedGroup>> packed_groups_;
  size_t next_packed_ = 0;
  // Resident: the last two launches during the scan (gpu_behind).
  std::array<Event, 2> scan_launches_;
  int next_scan_launch_ = 0;
  ProgressCredit credit_;  // resident: fdk_progress counts launches once run
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
  bool early_done_ = false;  // the early slab was completed during the scan
  // Early slab (streaming): the slab role_.early_slab backprojected during the scan.
  bool early_ = false, early_started_ = false, early_failed_ = false;
  size_t early_next_ = 0;                          // next group of orbits to launch
  int second_run_ = 0;                             // resident: the slot where owned_'s second run starts
  bool mirrored_slots_ = false;                    // resident: slot n-1-i holds the mirror image of slot i's chunk
  int plane_orbits_left_ = 0;                      // resident: plane pairs not yet arrived
  std::array<int, kMirrorKinds> groups_formed_{};  // resident: groups of each kind formed during the scan
  std::vector<std::array<int, 2>> early_windows_;  // per orbit: its rows for the early slab
  Event early_filtered_;                           // sender, on its filter stream: the view and its maximum
  // Receiver: the windows from one sender, copied on a stream of their own
  // (a copy waiting for one GPU's filter holds up no other GPU's), an
  // event per sender's buffer, and the last of those recorded.
  struct EarlyLink {
    Stream stream{+1};
    std::array<Event, 2> received;
    CUevent last = nullptr;
  };
  std::vector<std::unique_ptr<EarlyLink>> early_links_;  // by sender (DeviceRole::worker)
  // Receiver: the early slab's state, which every sender's filter lane changes.
  mutable std::mutex early_mutex_;
  std::thread worker_;  // last: joined first (in the destructor's body)
  int next_set_ = 0;
  int set_rows_ = 0;
};

// Shared by the streamed slabs and the early slab.
// Packs `count` mirror pairs (views view_at(s, 0..1), row windows at
// src_of(s, c), each view's largest |value| at view_max + view) and
// backprojects them into `slab`.
template <class ViewAt, class SrcOf>
void OneDevice::launch_window_pairs(const ScanModel& model, BatchSet& set, int count, ViewAt view_at, SrcOf src_of,
                                    const float* view_max, const std::vector<std::array<int, 2>>& window,
                                    const std::vector<double>& weights, const SlabGeometry& g, float* slab) {
  PairBatch batch{};
  batch.g = g;
  batch.count = count;
  batch.pair_max = set.quad_max.get();
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

// The same for `count` quads (views view_at(s, 0..3)).
template <class ViewAt, class SrcOf>
void OneDevice::launch_window_quads(const ScanModel& model, BatchSet& set, int count, ViewAt view_at, SrcOf src_of,
                                    const float* view_max, const std::vector<std::array<int, 2>>& window,
                                    const std::vector<double>& weights, const SlabGeometry& g, float* slab) {
  QuadBatch batch{};
  batch.g = g;
  batch.count = count;
  prepare_quads(batch, set);
  for (int s = 0; s < count; ++s) {
    const float* src[4];
    const float* max_src[4];
    float scale[4];
    for (int c = 0; c < 4; ++c) {
      src[c] = src_of(s, c);
      max_src[c] = view_max + view_at(s, c);
      scale[c] = static_cast<float>(weights[static_cast<size_t>(view_at(s, c))]);
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
}

}  // namespace fdk::cuda
