// The CUDA backend over every GPU it may use: one DeviceBackend per GPU (see
// device_backend.hpp). A resident volume is cut into chunks of y planes
// dealt round robin to the GPUs; each view is filtered once, by the GPUs in
// turns of several views, and copied to the others, and every GPU
// backprojects it into its chunks as the views arrive; a read copies from
// every GPU it spans at once. A resident GPU that fails retires: the others
// go on with the scan, and its chunks are recomputed, when read, by a GPU
// left (each holds every filtered view), with the same bits.
// Streamed slabs: each GPU filters its lane's views, and during the scan
// each GPU computes one of the first slabs from windows of every view,
// sent by the GPU that filtered it (early_slab.cpp); the
// others come from one queue (SlabPrefetch) that every GPU's worker takes
// from after fdk_finish, so a faster GPU computes more of them, and a GPU
// that fails hands its slabs to the others.
#include "fdk/kernels/cuda_backend.hpp"

#include <algorithm>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "device_backend.hpp"
#include "device_preview.hpp"
#include "device_resources.hpp"
#include "fault_plan_state.hpp"
#include "gpu_code.hpp"
#include "fdk/core/error.hpp"

namespace fdk::cuda {
namespace {

// Runs job(i) for i in [0, n): the first on this thread, the others on
// threads of their own (one after the other where no thread is to be had).
template <class Job>
void side_by_side(size_t n, const Job& job) {
  std::vector<std::thread> helpers;
  for (size_t i = 1; i < n; ++i) {
    try {
      helpers.emplace_back(job, i);
    } catch (...) {
      job(i);
    }
  }
  if (n > 0) job(0);
  for (auto& t : helpers) t.join();
}

// Devices the driver shows; 0 without a usable driver (driver_error()
// says why).
int device_count() noexcept {
  const DriverApi* d = driver();
  int count = 0;
  if (!d || d->cuDeviceGetCount(&count) != CUDA_SUCCESS) return 0;
  return count;
}

// Why CUDA cannot be used at all: no driver (or one too old), or no device.
std::string why_no_devices() {
  if (!driver()) return driver_error();
  return "no CUDA device: the NVIDIA driver found no GPU";
}

// The configured ordinals, or every device for an empty list. A device
// listed twice gets two workers (tests use that to exercise several
// workers on one GPU).
std::vector<int> configured_ordinals(const Settings& s, int count) {
  std::vector<int> ordinals;
  if (s.config.num_devices > 0) {
    for (int d = 0; d < s.config.num_devices; ++d) ordinals.push_back(s.config.devices[d]);
  } else {
    // Every device this build has code for: a GPU older than its oldest
    // architecture is left to the others (or the CPU, under AUTO).
    for (int d = 0; d < count; ++d)
      if (probe_gpu_code(d).code != FDK_GPU_CODE_NONE) ordinals.push_back(d);
  }
  return ordinals;
}

// Why the device cannot run this build's kernels, in words a user can act on.
std::string no_code_message(int device, const GpuCode& found) {
  auto list = [](const std::vector<int>& archs) {
    std::string text;
    for (int a : archs) text += (text.empty() ? "" : ", ") + std::to_string(a);
    return text.empty() ? std::string("none") : text;
  };
  return "CUDA device " + std::to_string(device) + " (compute capability " +
         std::to_string(found.compute_capability / 10) + "." + std::to_string(found.compute_capability % 10) +
         ") has no code in this build of fdk (machine code for sm " + list(sass_architectures()) + "; PTX " +
         list(ptx_architectures()) + (found.why.empty() ? "" : "; " + found.why) +
         "): use the CPU backend, or a build for that architecture";
}

// Chunk c's GPU among k: in turn, or, for plane pairs (FaultPlan::
// plane_pairs) when the chunks lie in mirror images about the volume's
// middle and share out evenly, chunks c and last - c on one GPU, so that a
// plane pair's kernel finds both its planes there (backprojection_launch.hpp,
// kind 3). Either way at most two evenly spaced runs per GPU.
std::vector<int> deal_chunks(int ny, int chunk_planes, int k, bool plane_pairs) {
  const int chunks = (ny + chunk_planes - 1) / chunk_planes;
  const bool mirrored = plane_pairs && chunks * chunk_planes == ny && chunks % (2 * k) == 0;
  std::vector<int> owner(static_cast<size_t>(chunks));
  for (int c = 0; c < chunks; ++c) owner[static_cast<size_t>(c)] = (mirrored ? std::min(c, chunks - 1 - c) : c) % k;
  return owner;
}

// The chunks within planes [y0, y1) in turn among k GPUs, the others none
// (-1: another rank's).
std::vector<int> deal_range(int ny, int chunk_planes, int k, int y0, int y1) {
  const int chunks = (ny + chunk_planes - 1) / chunk_planes;
  std::vector<int> owner(static_cast<size_t>(chunks), -1);
  int next = 0;
  for (int c = 0; c < chunks; ++c)
    if (c * chunk_planes >= y0 && c * chunk_planes < y1) owner[static_cast<size_t>(c)] = next++ % k;
  return owner;
}

bool is_device_failure(const Error& e) {
  return e.code() == FDK_ERROR_DEVICE || e.code() == FDK_ERROR_OUT_OF_MEMORY;
}

class CudaBackend final : public Backend {
 public:
  CudaBackend(const ScanModel& model, const Settings& settings) : num_threads_(std::max(1, settings.num_threads)) {
    for (int ordinal : configured_ordinals(settings, device_count())) {
      slots_.emplace_back();
      slots_.back().ordinal = ordinal;
    }
    const FaultPlan fault = current_fault_plan();
    const int ny = model.volume.size[1];
    bool allow_resident = true;
    for (;;) {
      live_.clear();
      live_slot_.clear();
      for (Slot& s : slots_) s.backend.reset();
      std::vector<size_t> candidates;
      for (size_t i = 0; i < slots_.size(); ++i)
        if (!slots_[i].failed) candidates.push_back(i);
      if (candidates.empty()) every_device_failed();
      const int k = static_cast<int>(candidates.size());
      if (model.partial()) {
        // One rank's planes (libfdk_mpi): its chunks, dealt in turn; a
        // range no chunk size tiles streams.
        chunk_planes_ = partial_chunk_planes(model.plane_begin, model.plane_end, ny, k);
        if (chunk_planes_ == 0) {
          allow_resident = false;
          chunk_planes_ = resident_chunk_planes(ny, k);
        }
        owner_ = deal_range(ny, chunk_planes_, k, model.plane_begin, model.plane_end);
      } else {
        chunk_planes_ = resident_chunk_planes(ny, k);
        owner_ = deal_chunks(ny, chunk_planes_, k, fault.plane_pairs);
      }
      const int chunks = (ny + chunk_planes_ - 1) / chunk_planes_;
      bool retry = false;
      for (int j = 0; j < k && !retry; ++j) {
        Slot& slot = slots_[candidates[static_cast<size_t>(j)]];
        DeviceRole role;
        role.ordinal = slot.ordinal;
        role.worker = static_cast<int>(candidates[static_cast<size_t>(j)]);
        role.chunk_planes = chunk_planes_;
        for (int c = 0; c < chunks; ++c)
          if (owner_[static_cast<size_t>(c)] == j) role.chunks.push_back(c);
        role.allow_resident = allow_resident;
        // Streaming: each GPU computes one of the first slabs during the
        // scan, so that they are all busy while the views arrive.
        role.early_slab = j;
        // The live preview lives on the GPU that sees every filtered view.
        if (j == 0 && settings.config.preview) role.reserved_bytes = preview_device_bytes(preview_grid(settings.config));
        role.fault = fault;
        try {
          slot.backend = make_device_backend(model, settings, role);
          live_.push_back(slot.backend.get());
          live_slot_.push_back(candidates[static_cast<size_t>(j)]);
        } catch (const Error& e) {
          if (!is_device_failure(e)) throw;
          // This GPU cannot take part: the others share the work.
          slot.failed = true;
          slot.why = e.what();
          slot.code = e.code();
          retry = true;
        }
      }
      if (retry) continue;
      // One mode on every GPU (so the same bits as on one): a GPU that
      // cannot hold the whole volume makes them all stream.
      const bool all = std::all_of(live_.begin(), live_.end(), [](DeviceBackend* d) { return d->resident(); });
      const bool any = std::any_of(live_.begin(), live_.end(), [](DeviceBackend* d) { return d->resident(); });
      if (any && !all) {
        allow_resident = false;
        continue;
      }
      resident_ = all;
      break;
    }
    for (size_t j = 0; j < live_.size(); ++j) active_.push_back(j);
    filter_failed_.assign(live_.size(), 0);
    filter_turn_ = std::make_unique<std::mutex[]>(live_.size());
    // Filtered views (resident) or their windows for the early slabs
    // (streaming) go from GPU to GPU.
    enable_peer_access();
    if (resident_) {
      share_filtered_views();
      filterer_.assign(model.views.size(), 0);
    }
  }

  ~CudaBackend() override {
    // The workers wait on the shared queue: stop it before the devices
    // (declared after it) join them.
    if (prefetch_) prefetch_->stop();
    // A GPU's filters may still be copying views into another's memory.
    for (DeviceBackend* d : live_) d->wait_filters();
    for (Slot& s : slots_) s.backend.reset();
  }

  fdk_backend kind() const override { return FDK_BACKEND_CUDA; }

  std::unique_ptr<StagingBuffer> make_staging(size_t floats) const override {
    // Pinned host memory is usable by every device (unified addressing).
    return live_.front()->make_staging(floats);
  }

  // Streaming: each GPU filters a lane's views, uploads and copies back for
  // the store on its own link, side by side (one GPU filtering every view
  // of (d) had its thread busy 17 s of a 19-21 s push, though much of that
  // was the wait for the early slab's batch sets that launch_early_groups
  // no longer does: docs/PERFORMANCE.md). Resident: one lane (the GPUs'
  // turns keep every view's order, below).
  int filter_lanes() const override { return resident_ ? 1 : static_cast<int>(live_.size()); }

  void filter(const ScanModel& model, int view, const ViewGeometry& geometry, const float* pixels,
              size_t pitch_bytes, float* filtered, int lane) override {
    if (!resident_) return filter_streamed(model, view, geometry, pixels, pitch_bytes, filtered, lane);
    // Every GPU needs every view whole for its chunks. One GPU filters it
    // (filter_gpu) and copies it to the others; the call returns at once,
    // so that uploads to several GPUs overlap (wait_uploaded), and the GPUs'
    // work on filtered views waits for the filtering and the copies on the
    // GPU.
    std::lock_guard<std::mutex> lock(active_mutex_);
    for (;;) {
      const size_t j = filter_gpu(view);
      filterer_[static_cast<size_t>(view)] = j;
      try {
        live_[j]->filter_share(model, view, geometry, pixels, pitch_bytes, others_[j]);
        return;
      } catch (const Error& e) {
        live_[j]->wait_uploaded(view);  // the caller frees `pixels` on a failure
        if (!is_device_failure(e) || !retire(j, e)) throw;
        // Filtered again by a GPU left.
      } catch (...) {
        live_[j]->wait_uploaded(view);
        throw;
      }
    }
  }

  int uploads_in_flight() const override {
    int n = 0;
    if (resident_)
      for (DeviceBackend* d : live_) n += d->uploads_in_flight();
    return n;
  }

  void wait_uploaded(int view) noexcept override {
    if (resident_) live_[filterer_[static_cast<size_t>(view)]]->wait_uploaded(view);
  }

  bool keeps_filtered() const override { return resident_; }

  // Resident only (keeps_filtered): the store fetches the views from the GPUs.
  void read_filtered(const ScanModel& model, int view, float* out) override {
    for (;;) {
      size_t j;
      {
        // Spread over the GPUs' links.
        std::lock_guard<std::mutex> lock(active_mutex_);
        j = active_[static_cast<size_t>(view) % active_.size()];
      }
      try {
        return live_[j]->read_filtered(model, view, out);
      } catch (const Error& e) {
        std::lock_guard<std::mutex> lock(active_mutex_);
        if (!is_device_failure(e) || !retire(j, e)) throw;
      }
    }
  }

  void view_filtered(const ScanModel& model, int view) override {
    if (!resident_) return;  // filter_streamed sent the early slabs their windows
    std::lock_guard<std::mutex> lock(active_mutex_);
    // Resident: each GPU counts its launches into fdk_progress as they
    // complete (ProgressCredit), not the views as they are filtered.
    on_active([&](DeviceBackend* d) { d->view_filtered(model, view); });
  }

  void view_dropped(const ScanModel& model, int view) override {
    for (DeviceBackend* d : live_) d->view_dropped(model, view);
  }

  void finish(const ScanModel& model) override {
    if (resident_) {
      std::lock_guard<std::mutex> lock(active_mutex_);
      on_active([&](DeviceBackend* d) { d->finish(model); });
      // The last groups are launched now, over spans of chunks, on every
      // GPU: a chunk downloads while the next ones compute, no GPU waits for
      // the reads to reach its part, and fdk_slab_ready can tell when a slab
      // is done.
      for (size_t j : active_) live_[j]->launch_all_chunks(model);
      return;
    }
    // A GPU's finish waits for its early slab's last groups, launched late
    // when the views came faster than it computed: side by side, so that no
    // GPU idles while another finishes. The first GPU's failure is the one
    // reported, as when they finished one after the other.
    std::vector<std::exception_ptr> errors(live_.size());
    side_by_side(live_.size(), [&](size_t j) {
      try {
        live_[j]->finish(model);
      } catch (...) {
        errors[j] = std::current_exception();
      }
    });
    for (const auto& e : errors)
      if (e) std::rethrow_exception(e);
    if (prefetch_) return;
    const int n = static_cast<int>(live_.size());
    prefetch_ = std::make_unique<SlabPrefetch>(model.slabs, n * kSlabBuffers, n);
    for (int j = 0; j < n; ++j) {
      const DeviceBackend* d = live_[static_cast<size_t>(j)];
      if (d->early_slab_done()) prefetch_->preset_ready(d->early_slab(), j * kSlabBuffers);
    }
    // One pool of decompression threads feeds every GPU's worker.
    decode_pool_ = std::make_unique<ThreadPool>(num_threads_);
    for (int j = 0; j < n; ++j)
      live_[static_cast<size_t>(j)]->start_worker(model, *prefetch_, j * kSlabBuffers, *decode_pool_);
  }

  void backproject(const ScanModel& model, int y0, int y1, float* out) override {
    if (resident_) return read_resident(model, y0, y1, out);
    stream_slab(model, y0, y1, out);
  }

  int slab_ready(const ScanModel& model, int y0, int y1) override {
    if (!resident_) return prefetch_ && prefetch_->ready_or_request(prefetch_->slab_of(y0, y1)) ? 1 : 0;
    // A failed GPU's chunk is ready once the GPU that recomputes it has
    // computed its own (the read then waits for the recomputation only).
    for (const Piece& p : pieces(y0, y1, active()))
      if (p.foreign ? !live_[p.device]->all_chunks_ready() : !live_[p.device]->planes_ready(p.y0, p.y1)) return 0;
    return 1;
  }

  uint64_t host_work_bytes(const ScanModel& model, int planes) const override {
    uint64_t bytes = 0;
    for (DeviceBackend* d : live_) bytes += d->host_work_bytes(model, planes);
    return bytes;
  }
  // On the first GPU: streaming, it filters every view; resident, every
  // GPU holds every view.
  std::unique_ptr<PreviewSink> make_preview_sink(const ScanModel& model, const fdk_volume& grid) override {
    // Its streams and events are made in that GPU's context.
    DeviceGuard guard(live_.front()->ordinal());
    return std::make_unique<DevicePreview>(model, grid, *live_.front());
  }
  int slab_alignment() const override { return aligned_slab_planes(); }
  int slab_workers() const override { return resident_ ? 1 : static_cast<int>(live_.size()); }
  int slabs_during_scan() const override {
    if (resident_) return 0;
    return static_cast<int>(
        std::count_if(live_.begin(), live_.end(), [](const DeviceBackend* d) { return d->early_slab_planned(); }));
  }
  bool caches_slabs() const override { return false; }
  bool keeps_volume() const override { return resident_; }
  uint64_t preferred_slab_bytes(const ScanModel& model) const override {
    return live_.front()->preferred_slab_bytes(model);
  }
  int max_slab_planes(const ScanModel& model) const override {
    int planes = model.volume.size[1];
    for (DeviceBackend* d : live_) planes = std::min(planes, d->max_slab_planes(model));
    return planes;
  }

  void add_timings(fdk_timings& t) const override {
    for (DeviceBackend* d : live_) d->add_timings(t);
  }

  void add_device_stats(fdk_device_stats& stats) const override {
    std::lock_guard<std::mutex> lock(active_mutex_);  // retire() marks slots failed
    stats.num_devices = static_cast<int32_t>(std::min<size_t>(slots_.size(), FDK_MAX_DEVICES));
    for (int i = 0; i < stats.num_devices; ++i) {
      const Slot& s = slots_[static_cast<size_t>(i)];
      stats.ordinal[i] = s.ordinal;
      stats.failed[i] = s.failed || (s.backend && s.backend->failed()) ? 1 : 0;
      stats.busy_seconds[i] = s.backend ? s.backend->busy_seconds() : 0.0;
      stats.slabs_computed[i] = s.backend ? s.backend->slabs_computed() : 0;
    }
  }

 private:
  struct Slot {
    int ordinal = 0;
    std::unique_ptr<DeviceBackend> backend;  // null when it failed at set-up
    bool failed = false;
    std::string why;
    fdk_status code = FDK_OK;
  };

  // Streaming: lane `lane`'s view on the lane's GPU, or, once that GPU
  // failed to filter, on the next one still filtering (shared, in turns,
  // with that GPU's own lane); the last GPU filtering is never given up
  // (each view then fails on it, as on one GPU). Right after, the GPU sends
  // every GPU its early slab's window of the view, from the buffer the
  // filter wrote.
  void filter_streamed(const ScanModel& model, int view, const ViewGeometry& geometry, const float* pixels,
                       size_t pitch_bytes, float* filtered, int lane) {
    for (;;) {
      size_t j;
      {
        std::lock_guard<std::mutex> lock(lanes_mutex_);
        j = static_cast<size_t>(lane) % live_.size();
        while (filter_failed_[j]) j = (j + 1) % live_.size();
      }
      std::lock_guard<std::mutex> turn(filter_turn_[j]);
      try {
        live_[j]->filter(model, view, geometry, pixels, pitch_bytes, filtered, 0);
        live_[j]->share_early_view(model, view, live_);
        return;
      } catch (const Error& e) {
        if (!is_device_failure(e)) throw;
        std::lock_guard<std::mutex> lock(lanes_mutex_);
        if (std::count(filter_failed_.begin(), filter_failed_.end(), 0) < 2) throw;
        filter_failed_[j] = 1;
      }
    }
  }

  // Resident: the GPU that uploads and filters `view`. The GPUs take turns
  // of several views in a row, each GPU once in kFilterCycle views. Dealt
  // one by one, views kept every link uploading at once, and the host's
  // copies into staging slowed while they did: a push's copy of (b)'s 4 MiB
  // projection took 0.08 ms beside one GPU's uploads, 0.10-0.15 ms beside
  // two or four GPUs' (four H200s of one host; a plain host copy there ran
  // at 97 GB/s beside one link's uploads, 67 GB/s beside four). End to end,
  // (b) on four H200s took 0.28 s dealt one by one, 0.25 s in turns of 8,
  // 0.27 s in turns of 16 and 0.29 s in turns of 32; on two, 0.42 s one by
  // one or in turns of 8, 0.41 s in turns of 16 or 32.
  // Under active_mutex_.
  size_t filter_gpu(int view) const {
    const int turn = std::max(1, kFilterCycle / static_cast<int>(active_.size()));
    return active_[static_cast<size_t>(view / turn) % active_.size()];
  }
  static constexpr int kFilterCycle = 32;

  // Resident: each GPU's work on filtered views waits for the others'
  // filters (which copy views to it).
  void share_filtered_views() {
    copy_targets();
    for (size_t j = 0; j < live_.size(); ++j) live_[j]->set_peers({others_[j].begin(), others_[j].end()});
  }

  // Copies go GPU to GPU directly where the hardware allows (NVLink, PCIe
  // peer to peer), else through host memory. Peer access once enabled
  // stays so for the host application too (it only speeds its own copies
  // up); it is never turned off.
  void enable_peer_access() {
    for (DeviceBackend* a : live_) {
      for (DeviceBackend* b : live_) {
        int can = 0;
        if (a->ordinal() == b->ordinal()) continue;
        CUdevice da = 0, db = 0;
        const DriverApi& d = cu();
        if (d.cuDeviceGet(&da, a->ordinal()) != CUDA_SUCCESS || d.cuDeviceGet(&db, b->ordinal()) != CUDA_SUCCESS ||
            d.cuDeviceCanAccessPeer(&can, da, db) != CUDA_SUCCESS || !can)
          continue;
        DeviceGuard guard(a->ordinal());
        d.cuCtxEnablePeerAccess(primary_context(b->ordinal()), 0);  // fails harmlessly when already enabled
      }
    }
  }

  // Resident: each GPU's filters copy views to every other GPU still working.
  void copy_targets() {
    others_.assign(live_.size(), {});
    for (size_t a : active_)
      for (size_t b : active_)
        if (b != a) others_[a].push_back(live_[b]);
  }

  // Resident, under active_mutex_: GPU live_[j] failed with `e`. False when
  // it was the last one working (the error is then the caller's); true, with
  // nothing to do, when another thread retired it first. The GPUs left wait
  // on its filters for the views it filtered before (set_peers stays), but
  // no longer copy views to it.
  bool retire(size_t j, const Error& e) {
    const auto at = std::find(active_.begin(), active_.end(), j);
    if (at == active_.end()) return true;
    if (active_.size() < 2) return false;
    active_.erase(at);
    Slot& slot = slots_[live_slot_[j]];
    slot.failed = true;
    slot.why = e.what();
    slot.code = e.code();
    copy_targets();
    return true;
  }

  // Resident, under active_mutex_: `f` on every GPU still working; one that
  // fails retires, unless it is the last.
  template <class F>
  void on_active(F&& f) {
    for (size_t i = 0; i < active_.size();) {
      const size_t j = active_[i];
      try {
        f(live_[j]);
        ++i;
      } catch (const Error& e) {
        if (!is_device_failure(e) || !retire(j, e)) throw;  // active_[i] is the next GPU now
      }
    }
  }

  std::vector<size_t> active() const {
    std::lock_guard<std::mutex> lock(active_mutex_);
    return active_;
  }

  [[noreturn]] void every_device_failed() const {
    std::string message = "every GPU failed:";
    fdk_status code = FDK_ERROR_DEVICE;
    for (const Slot& s : slots_) {
      message += " [GPU " + std::to_string(s.ordinal) + "] " + s.why;
      code = s.code;
    }
    fail(code, message);
  }

  // Resident: planes [y0, y1) as pieces within one chunk each, on the GPU
  // that holds the chunk or, when that one failed, on the GPU of `active`
  // (those working) that recomputes it (foreign).
  struct Piece {
    size_t device;
    int y0, y1;
    bool foreign;
  };
  std::vector<Piece> pieces(int y0, int y1, const std::vector<size_t>& active) const {
    std::vector<Piece> out;
    for (int y = y0; y < y1;) {
      const int c = y / chunk_planes_, end = std::min(y1, (c + 1) * chunk_planes_);
      const size_t owner = static_cast<size_t>(owner_[static_cast<size_t>(c)]);
      if (std::find(active.begin(), active.end(), owner) != active.end())
        out.push_back({owner, y, end, false});
      else
        out.push_back({active[static_cast<size_t>(c) % active.size()], y, end, true});
      y = end;
    }
    return out;
  }

  // Resident: each GPU the read spans copies its chunks, all at once (each
  // has its own download stream, bounce buffers and copying threads).
  // A GPU that fails during the read retires, and the read starts again
  // on the GPUs left.
  void read_resident(const ScanModel& model, int y0, int y1, float* out) {
    for (;;) {
      std::vector<std::exception_ptr> errors = try_read_resident(model, y0, y1, out);
      bool retired = false;
      for (size_t j = 0; j < errors.size(); ++j) {
        if (!errors[j]) continue;
        try {
          std::rethrow_exception(errors[j]);
        } catch (const Error& e) {
          std::lock_guard<std::mutex> lock(active_mutex_);
          if (!is_device_failure(e) || !retire(j, e)) throw;
          retired = true;
        }
      }
      if (!retired) return;
    }
  }

  // One attempt of read_resident: the errors met, by GPU.
  std::vector<std::exception_ptr> try_read_resident(const ScanModel& model, int y0, int y1, float* out) {
    const size_t plane = model.plane_floats();
    std::vector<std::vector<Piece>> mine(live_.size());
    for (const Piece& p : pieces(y0, y1, active())) mine[p.device].push_back(p);
    std::vector<size_t> spanned;
    for (size_t j = 0; j < live_.size(); ++j)
      if (!mine[j].empty()) spanned.push_back(j);
    // The copy threads are shared: more than kMaxCopyTasks at once only
    // contend for the memory bus.
    const int tasks = std::max(1, kMaxCopyTasks / std::max<int>(1, static_cast<int>(spanned.size())));
    std::vector<std::exception_ptr> errors(live_.size());
    auto copy = [&](size_t j) {
      try {
        for (const Piece& p : mine[j]) {
          float* to = out + plane * static_cast<size_t>(p.y0 - y0);
          if (p.foreign)
            live_[j]->read_foreign_planes(model, p.y0, p.y1, to, tasks);
          else
            live_[j]->read_planes(model, p.y0, p.y1, to, tasks);
        }
      } catch (...) {
        errors[j] = std::current_exception();
      }
    };
    side_by_side(spanned.size(), [&](size_t i) { copy(spanned[i]); });
    return errors;
  }

  // Streaming: waits for the slab's computation on whichever GPU took it,
  // then copies it out while the GPUs go on. A GPU that fails while its
  // slab is copied out retires, and the slab is computed again elsewhere.
  void stream_slab(const ScanModel& model, int y0, int y1, float* out) {
    const int slab = prefetch_->slab_of(y0, y1);
    for (;;) {
      const int buffer = prefetch_->acquire(slab, [&] { throw_if_cancelled(model); });
      if (buffer < 0) fail(FDK_ERROR_INVALID_STATE, "the reconstruction is being released");
      const int worker = prefetch_->worker_of(buffer);
      try {
        live_[static_cast<size_t>(worker)]->download_slab(model, buffer % kSlabBuffers, y1 - y0, out);
      } catch (const Error& e) {
        prefetch_->release(slab);
        if (!is_device_failure(e)) throw;
        prefetch_->retire(worker, std::current_exception());
        continue;
      } catch (...) {
        prefetch_->release(slab);
        throw;
      }
      prefetch_->release(slab);
      return;
    }
  }

  std::unique_ptr<SlabPrefetch> prefetch_;  // streaming: first, so it outlives the workers
  std::unique_ptr<ThreadPool> decode_pool_;  // streaming: every worker's decompression threads
  int num_threads_ = 1;
  std::vector<Slot> slots_;                 // every configured GPU, in order
  std::vector<DeviceBackend*> live_;        // those in use
  std::vector<size_t> live_slot_;           // for each of live_, its index in slots_
  // Resident: indices in live_ of the GPUs still working (a GPU that fails
  // retires), and for each view the one that filtered it.
  mutable std::mutex active_mutex_;
  std::vector<size_t> active_;
  std::vector<size_t> filterer_;
  // Streaming: per GPU, whether it failed to filter (under lanes_mutex_),
  // and the lock a lane holds while the GPU filters its view.
  std::mutex lanes_mutex_;
  std::vector<unsigned char> filter_failed_;
  std::unique_ptr<std::mutex[]> filter_turn_;
  int chunk_planes_ = 0;                     // resident: planes per chunk
  std::vector<int> owner_;                  // resident: chunk -> its GPU's index in live_
  std::vector<std::vector<DeviceBackend*>> others_;  // resident: for each GPU in live_, the others
  bool resident_ = false;
};

}  // namespace

BuildAndDevices describe_build_and_devices() {
  BuildAndDevices r;
  r.sass = sass_architectures();
  r.ptx = ptx_architectures().empty() ? 0 : ptx_architectures().back();
  r.driver_version = driver_version();
  r.driver_required = driver_required();
  const int count = device_count();
  for (int d = 0; d < count; ++d) {
    const GpuCode found = probe_gpu_code(d);
    r.devices.push_back({found.compute_capability, found.code, found.arch});
    if (found.code != FDK_GPU_CODE_NONE) r.usable = true;
    else if (r.why.empty()) r.why = no_code_message(d, found);
  }
  if (count == 0) r.why = why_no_devices();
  if (r.usable) r.why.clear();
  return r;
}

// Why the configuration's GPUs cannot run this build, or "" when they can:
// each listed ordinal exists and has code, or, for an empty list, some
// device has (configured_ordinals then takes those). The one test behind
// the AUTO choice and the CUDA backend's refusal.
namespace {
std::string why_devices_unusable(const Settings& settings, int count) {
  for (int d = 0; d < settings.config.num_devices; ++d) {
    const int ordinal = settings.config.devices[d];
    if (ordinal >= count)
      return "CUDA device " + std::to_string(ordinal) + " does not exist (" + std::to_string(count) + " found)";
    const GpuCode found = probe_gpu_code(ordinal);
    if (found.code == FDK_GPU_CODE_NONE) return no_code_message(ordinal, found);
  }
  if (settings.config.num_devices > 0) return "";
  for (int d = 0; d < count; ++d)
    if (probe_gpu_code(d).code != FDK_GPU_CODE_NONE) return "";
  return no_code_message(0, probe_gpu_code(0));
}
}  // namespace

bool backend_available(const Settings& settings) noexcept {
  const int count = device_count();
  if (count == 0) return false;
  try {
    return why_devices_unusable(settings, count).empty();
  } catch (...) {
    return false;
  }
}

void* alloc_page_locked(size_t bytes) noexcept {
  if (bytes == 0 || device_count() == 0) return nullptr;
  // Pinned memory belongs to a context: device 0's primary one, made
  // portable so every device's copies use it by DMA.
  try {
    DeviceGuard guard(0);
    void* p = nullptr;
    if (cu().cuMemHostAlloc(&p, bytes, CU_MEMHOSTALLOC_PORTABLE) != CUDA_SUCCESS) return nullptr;
    return p;
  } catch (...) {
    return nullptr;
  }
}

void free_page_locked(void* p) noexcept {
  if (!p) return;
  try {
    DeviceGuard guard(0);
    cu().cuMemFreeHost(p);
  } catch (...) {
  }
}

std::unique_ptr<Backend> make_cuda_backend(const ScanModel& model, const Settings& settings) {
  const int count = device_count();
  if (count == 0) fail(FDK_ERROR_BACKEND_UNAVAILABLE, why_no_devices());
  const std::string why = why_devices_unusable(settings, count);
  if (!why.empty()) fail(FDK_ERROR_BACKEND_UNAVAILABLE, why);
  return std::make_unique<CudaBackend>(model, settings);
}

}  // namespace fdk::cuda
