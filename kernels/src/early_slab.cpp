// The early slabs (one_device.hpp): during the scan every GPU backprojects
// one of a streamed volume's first slabs, from row windows cut out of each
// view as it is filtered, with the same groups and weights as a slab from
// the store (so the same bits). The GPU that filtered a view for the store
// sends each GPU its window (over NVLink or PCIe where the GPUs are peers),
// so that the GPUs are busy during the scan and share the rest evenly after
// it. Every GPU filters (a lane of views each), so a GPU receives from all
// of them, on a stream per sender, and its early slab's state is behind a
// lock. Groups are launched in order once complete, whatever order the
// views arrive in: the same bits. Apart because it is the one streaming
// job that runs on the ingest threads, before fdk_finish.

#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <vector>

#include "fdk/core/projection_store.hpp"
#include "one_device.hpp"

namespace fdk::cuda {

// The sender, on its filter lane, right after `view` was filtered into
// the current scratch_ buffer: its largest |value| is taken on the filter
// stream, then each GPU copies what it needs on a stream of its own while
// the next view is filtered into the other buffer (filter), so that no
// copy waits on the filter thread's path. Even so a second GPU's early
// slab adds about 0.3 ms to each view of c8 on two H100s (the filter
// thread's time 1.73-1.97 s against 1.39-1.58 s), as much as when the
// sender issued the copies on its filter stream: the cause is not known
// (docs/PERFORMANCE.md).
// The packing scales by the whole view's maximum, as a slab from the store
// does (ProjectionStore::max_abs): the same bits.
void OneDevice::share_early_view(const ScanModel& model, int view, const std::vector<DeviceBackend*>& to) {
  if (std::none_of(to.begin(), to.end(), [](const DeviceBackend* d) { return d->takes_early_windows(); })) return;
  DeviceGuard guard(device_);
  const size_t v = static_cast<size_t>(view), at = static_cast<size_t>(scratch_at_);
  const float* scratch = scratch_[at].get();
  if (shared_max_.size() == 0) {
    shared_max_.resize(model.views.size());
    zero_async(shared_max_.get(), shared_max_.bytes(), filter_stream_.get(), "cuMemsetD8Async (maxima)");
  }
  launch_window_max(scratch, pitch_, columns_, rows_, shared_max_.get() + v, filter_stream_.get());
  early_filtered_.record(filter_stream_.get());
  const EarlySource from{scratch, pitch_, shared_max_.get() + v, early_filtered_.get(), static_cast<int>(at),
                        role_.worker};
  for (DeviceBackend* d : to) {
    CUevent done = nullptr;
    if (d->receive_early_window(model, view, from, done)) scratch_readers_[at].push_back(done);
  }
}

// The receiver: copies its window of `view` into the second slab buffer on
// the sender's link, and launches the groups it completes. A view that comes
// with another geometry, or twice, turns the early slab off (finish
// computes it from the store), and so does a GPU that cannot hold it (it
// computes the slab after the scan, or fails then and hands it on:
// SlabPrefetch::retire): the scan goes on.
bool OneDevice::receive_early_window(const ScanModel& model, int view, const EarlySource& from, CUevent& done) {
  std::lock_guard<std::mutex> lock(early_mutex_);
  if (!early_ || early_failed_) return false;
  const size_t v = static_cast<size_t>(view);
  if (!same_geometry(model.views[v], nominal_views_[v]) || counted_[v]) {
    early_failed_ = true;
    return false;
  }
  DeviceGuard guard(device_);
  if (!early_started_) {
    try {
      if (!start_early(model)) return false;
    } catch (const Error&) {
      early_failed_ = true;
      return false;
    }
  }
  const auto& w = early_windows_[static_cast<size_t>(orbit_of_view_[v])];
  EarlyLink* link;
  try {
    link = early_link(from.sender);
  } catch (const Error&) {
    early_failed_ = true;
    return false;
  }
  const CUstream s = link->stream.get();
  Event& received = link->received[static_cast<size_t>(from.slot)];
  try {
    wait_event(s, from.filtered, "cuStreamWaitEvent (filtered view)");
    float* dst = slab_buffers_[1].get() + window_stride_ * v;
    const float* src = from.pixels + static_cast<size_t>(w[0]) * from.pitch;
    const size_t count = static_cast<size_t>(w[1] - w[0] + 1);
    if (from.pitch == pitch_)  // one block
      copy_async(dst, src, count * pitch_ * sizeof(float), s, "cuMemcpyAsync (early window)");
    else
      copy_2d_async(dst, pitch_ * sizeof(float), src, from.pitch * sizeof(float), columns_ * sizeof(float), count,
                    s, "cuMemcpy2DAsync (early window)");
    copy_async(early_max_.get() + v, from.view_max, sizeof(unsigned), s, "cuMemcpyAsync (early window's maximum)");
    received.record(s);
  } catch (const Error&) {
    early_failed_ = true;  // a GPU failing here fails its slabs after the scan, not the push
    return false;
  }
  done = link->last = received.get();
  counted_[v] = 1;
  ++orbit_arrivals_[static_cast<size_t>(orbit_of_view_[v])];
  try {
    launch_early_groups(model, WhenBusy::defer);
  } catch (const Error&) {
    early_failed_ = true;
  }
  return true;
}

// The first early view: sizes the batch sets for the early slab, clears
// it, and finds each orbit's window. False (and early off) when the plan
// has no such slab or the windows of all views do not fit the second slab
// buffer.
bool OneDevice::start_early(const ScanModel& model) {
  early_started_ = true;
  const size_t index = static_cast<size_t>(role_.early_slab);
  if (index >= model.slabs.size()) {
    early_ = false;
    return false;
  }
  const auto range = model.slabs[index];
  const int planes = range[1] - range[0];
  const int rows = window_rows(planes);
  make_sets(group_size_, rows, true);
  reserve_staging_in_background(rows);
  const size_t buffer_floats = model.plane_floats() * static_cast<size_t>(max_planes_);
  if (window_stride_ * model.views.size() > buffer_floats) {
    early_ = false;
    return false;
  }
  for (auto& b : slab_buffers_) b.resize(buffer_floats);
  zero_async(slab_buffers_[0].get(), model.plane_floats() * planes * sizeof(float), bp_stream_.get(),
             "cuMemsetD8Async (early slab)");
  // Cleared before any maximum is copied in (on early_stream_).
  early_max_.resize(model.views.size());
  zero_async(early_max_.get(), early_max_.bytes(), bp_stream_.get(), "cuMemsetD8Async (maxima)");
  synchronize(bp_stream_.get(), "cuStreamSynchronize (early slab)");
  compute_mask(model, true);
  early_windows_.clear();
  for (const auto& orbit : orbits_)
    early_windows_.push_back(item_window(model, orbit, orbit_width(), range[0], planes, rows));
  return true;
}

// Launches the complete groups of orbits (pairs or quads), in order, into
// the early slab.
// During the scan (`defer`) a group whose batch set is still in use waits
// for a later view, or for fdk_finish (`wait`): the caller is a filter
// lane, and waiting there for the backprojection held every lane to the
// early slab's pace (in (d) on two H200s the push took 18.6-19.3 s, as long
// as an early slab's backprojection; deferred, 15.0-18.3 s). Two sets
// alternate, so a group deferred while the other runs is launched before
// the GPU idles, as long as views arrive.
void OneDevice::launch_early_groups(const ScanModel& model, WhenBusy busy) {
  const auto range = model.slabs[static_cast<size_t>(role_.early_slab)];
  const size_t total = orbits_.size(), group = static_cast<size_t>(group_size_);
  while (early_next_ * group < total) {
    const size_t first = early_next_ * group, last = std::min(total, first + group);
    for (size_t q = first; q < last; ++q)
      if (orbit_arrivals_[q] < orbit_size_[q]) return;
    if (busy == WhenBusy::defer && !next_set_free()) return;
    for (const auto& link : early_links_)
      if (link && link->last) wait_event(bp_stream_.get(), link->last, "cuStreamWaitEvent (early windows)");
    BatchSet& set = next_set();
    hold_early_group();
    const std::vector<std::array<int, 2>> window(early_windows_.begin() + static_cast<std::ptrdiff_t>(first),
                                                 early_windows_.begin() + static_cast<std::ptrdiff_t>(last));
    auto view_at = [&](int s, int c) { return orbits_[first + static_cast<size_t>(s)][static_cast<size_t>(c)]; };
    auto src_of = [&](int s, int c) {
      return slab_buffers_[1].get() + window_stride_ * static_cast<size_t>(view_at(s, c));
    };
    const auto* maxima = reinterpret_cast<const float*>(early_max_.get());
    const SlabGeometry g = slab_geometry(model, range[0], range[1] - range[0]);
    launch_window_orbits(model, set, static_cast<int>(last - first), view_at, src_of, maxima, window,
                         nominal_weights_, g, slab_buffers_[0].get());
    set.done.record(bp_stream_.get());
    set.used = true;
    ++early_next_;
    if (model.meter) {
      int views = 0;
      for (size_t q = first; q < last; ++q)
        for (int v : orbits_[q]) views += v >= 0 ? 1 : 0;
      model.meter->add(range[0], range[1], views);
    }
  }
}

// The link from sender `sender` (early_mutex_ held, our device current):
// made at its first window.
OneDevice::EarlyLink* OneDevice::early_link(int sender) {
  const size_t at = static_cast<size_t>(sender);
  if (early_links_.size() <= at) early_links_.resize(at + 1);
  if (!early_links_[at]) early_links_[at] = std::make_unique<EarlyLink>();
  return early_links_[at].get();
}

// fdk_finish: true when the early slab is complete from the scan (every
// view arrived once, as announced, none dropped, weights unchanged).
bool OneDevice::finish_early(const ScanModel& model) {
  std::lock_guard<std::mutex> lock(early_mutex_);
  if (!early_started_ || !early_ || early_failed_ || dropped_.load()) return false;
  for (unsigned char a : model.arrived)
    if (!a) return false;
  if (model.view_weights != nominal_weights_) return false;
  // A view the store kept at float16 to fit its budget
  // (FDK_STORE_REDUCE_PRECISION) came here as filtered, so the slab from
  // the store would have other bits.
  if (model.store && model.store->views_reduced() > 0) return false;
  // The groups deferred during the scan: a GPU failing to launch them
  // leaves the slab to the store, as one failing during the scan does.
  try {
    launch_early_groups(model, WhenBusy::wait);
  } catch (const Error&) {
    early_failed_ = true;
    return false;
  }
  return early_next_ * static_cast<size_t>(group_size_) >= orbits_.size();
}

}  // namespace fdk::cuda
