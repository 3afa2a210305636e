// One GPU's part of the CUDA backend. The multi-GPU backend (cuda_backend.cpp)
// drives one DeviceBackend per configured GPU:
// - resident: each view is filtered once, by the devices in turn, and
//   copied to the others; every device backprojects it into the y chunks it
//   holds (chunks dealt round robin, so that reads in y
//   order take from every device in turn and no device's downloads wait for
//   another's part to be read);
// - streaming: the first device filters the views for the store; during
//   the scan every device backprojects one of the first slabs (its early
//   slab) from row windows the first device sends it from each filtered
//   view; after fdk_finish every device runs a worker that takes slabs from
//   one shared SlabPrefetch and computes them into its own two slab
//   buffers.
// The arithmetic of a voxel does not depend on which device computes it, so
// the volume is the same bits whatever the number of GPUs.
#pragma once
#include <cuda.h>

#include <memory>
#include <string>
#include <vector>

#include "fdk/core/backend.hpp"
#include "fdk/core/reconstruction.hpp"
#include "fdk/core/slab_prefetch.hpp"
#include "fdk/core/thread_pool.hpp"
#include "fdk/kernels/test_seams.hpp"

namespace fdk::cuda {

// Streamed slabs alternate between two buffers per device: one downloads
// while the next one computes.
constexpr int kSlabBuffers = 2;

// Threads that copy slab downloads out of the pinned bounce chunks into
// pageable memory, in all: on a 64-core H200 host a plain copy peaked at 32
// threads (58 GB/s, 43 with 64), and (c) read on four GPUs took 1.65 s
// after the last push with 64 tasks per chunk, 1.48 s with 32.
constexpr int kMaxCopyTasks = 32;

struct DeviceRole {
  int ordinal = 0;                  // CUDA device
  int worker = 0;                   // its position among the devices in use
  int chunk_planes = 0;             // resident: planes per chunk (resident_chunk_planes)
  std::vector<int> chunks;          // resident: the chunks it holds, ascending
  bool allow_resident = true;       // false: stream even when the volume fits
  int early_slab = -1;              // streaming: the slab it computes during the scan (-1: none)
  uint64_t reserved_bytes = 0;      // device memory held outside its plan (the live preview)
  FaultPlan fault;                  // tests only (test_seams.hpp): the default plan ships
};

// The coordinator answers the Backend questions about the whole (keeps_volume,
// keeps_filtered, caches_slabs); a device answers for itself only.
class DeviceBackend : public Backend {
 public:
  virtual int ordinal() const = 0;
  virtual bool resident() const = 0;
  // Resident: each view is filtered once, on the devices in turn.
  // filter_share() issues the upload and filtering of `view` here and the
  // copies of the result to every device in `to` (over NVLink where there is
  // one), and returns at once: wait_uploaded(view) tells when `pixels` is
  // free again. The work that reads filtered views, here and on the devices
  // in `to`, waits for it on the GPU (set_peers).
  virtual void filter_share(const ScanModel& model, int view, const ViewGeometry& geometry, const float* pixels,
                            size_t pitch_bytes, const std::vector<DeviceBackend*>& to) = 0;
  virtual float* filtered_view(int view) = 0;  // resident: where view `view` is kept
  virtual size_t filtered_pitch() const = 0;   // its rows' distance, in floats
  // The devices whose filters copy views here.
  virtual void set_peers(const std::vector<const DeviceBackend*>& peers) = 0;
  // Makes `stream` (another device's) wait for everything this device's
  // filters have issued so far, copies included.
  virtual void order_after_filters(CUstream stream) const = 0;
  // Waits until this device's filters are done, copies to peers included
  // (before any device is released).
  virtual void wait_filters() = 0;
  // Resident, after finish: a thread issues the remaining launches chunk by
  // chunk; reads wait only for the chunks they copy.
  virtual void launch_all_chunks(const ScanModel& model) = 0;
  // Streaming, after finish: true when this device's early slab (the
  // plan's slab early_slab()) was completed during the scan, in its buffer 0.
  virtual bool early_slab_done() const = 0;
  // A slab is meant to be computed here during the scan (it may still
  // fall back to the store: early_slab_done says whether it did).
  virtual bool early_slab_planned() const = 0;
  virtual int early_slab() const = 0;
  // Streaming, on the lane that filtered it: the device that filtered `view`
  // offers it to each device of `to` (itself included), which copies the
  // rows its early slab needs, with the view's largest |value|, on a
  // stream of its own; the next views are filtered into another buffer
  // until those copies are done.
  virtual void share_early_view(const ScanModel& model, int view, const std::vector<DeviceBackend*>& to) = 0;
  // The receiving side. takes_early_windows: false once this device's
  // early slab is off or fell back to the store. receive_early_window:
  // copies its window of `view` from `from` once `from.filtered` is done,
  // launches the groups of pairs complete with it, and returns in `done`
  // the event that the sender waits for before it overwrites the view
  // (false: it took none).
  struct EarlySource {
    const float* pixels;      // the filtered view on the sender, rows pitch floats apart
    size_t pitch;
    const unsigned* view_max;  // its largest |value|, as float bits
    CUevent filtered;          // on the sender's stream: both are written
    int slot;                  // the sender's buffer (0 or 1)
    int sender;                // the sender (its DeviceRole::worker)
  };
  virtual bool takes_early_windows() const = 0;
  virtual bool receive_early_window(const ScanModel& model, int view, const EarlySource& from, CUevent& done) = 0;
  // Streaming: starts the worker computing slabs from `prefetch` into this
  // device's buffers (global indices first_buffer + 0..kSlabBuffers-1),
  // decompressing on `decode`, the pool every device's worker shares.
  virtual void start_worker(const ScanModel& model, SlabPrefetch& prefetch, int first_buffer, ThreadPool& decode) = 0;
  // Streaming: copies `planes` planes of this device's slab buffer `buffer`
  // (0..kSlabBuffers-1) to `out`, once its computation is done.
  virtual void download_slab(const ScanModel& model, int buffer, int planes, float* out) = 0;
  // Resident: true when planes [y0, y1), within its chunks, are computed
  // (never blocks).
  virtual bool planes_ready(int y0, int y1) const = 0;
  // Resident: copies planes [y0, y1), within its chunks, to `out` once
  // computed, with `copy_tasks` threads (at most the pool's) when `out` is
  // pageable: a read that spans several devices shares kMaxCopyTasks among
  // them. backproject() is this with kMaxCopyTasks.
  virtual void read_planes(const ScanModel& model, int y0, int y1, float* out, int copy_tasks) = 0;
  // Resident, after finish: planes [y0, y1) within one chunk of another
  // device (one that failed), computed here from the filtered views this
  // device holds, with the same bits, then copied to `out`.
  virtual void read_foreign_planes(const ScanModel& model, int y0, int y1, float* out, int copy_tasks) = 0;
  // Resident: true when every chunk of this device is computed (never blocks).
  virtual bool all_chunks_ready() const = 0;
  // The live preview reads view `view` right after it was filtered (on
  // the filter thread): where it lies here (rows filtered_pitch() floats
  // apart), the stream to read it on, and whether it stays. Resident: it
  // stays, `reader` is ordered after every filter here and on the peers
  // that copy views here, and is the stream. Streaming: it is the scratch
  // that the next view's filtering overwrites: read on the filter's stream.
  struct PreviewSource {
    const float* pixels;
    CUstream stream;
    bool kept;
  };
  virtual PreviewSource preview_source(int view, CUstream reader) = 0;
  virtual double busy_seconds() const = 0;
  virtual bool failed() const = 0;  // a worker met a device failure
  virtual int slabs_computed() const = 0;
};

// Throws fdk::Error (OUT_OF_MEMORY, DEVICE, ...) when the device cannot be
// set up.
std::unique_ptr<DeviceBackend> make_device_backend(const ScanModel& model, const Settings& settings,
                                                   const DeviceRole& role);

// Resident volumes are held and finished in chunks of this many planes, a
// multiple of every kernel's planes per thread, so that the chunk size does
// not change any voxel's arithmetic. With more devices the chunks are
// thinner, so that a slab read spans several devices.
int resident_chunk_planes(int ny, int devices);
// For one rank's planes [y0, y1) of ny (libfdk_mpi): chunks of the whole
// volume's grid that tile the range exactly and suit every kernel, near
// resident_chunk_planes(y1 - y0, devices); 0 when the range's ends allow
// none (the rank then streams its slabs).
int partial_chunk_planes(int y0, int y1, int ny, int devices);

// Slabs starting on multiples of this many planes (every kernel's planes per
// thread) take the kernels' faster variant (PlaneRun's Aligned): (c) with
// an 8 GiB GPU budget in slabs of 205 planes spent 12% more kernel time
// than in slabs of 208. The bits are the same either way.
int aligned_slab_planes();

}  // namespace fdk::cuda
