// The early slab (one_device.hpp): a streamed volume's first slab
// backprojected during the scan, from row windows cut out of each view as
// it is filtered, with the same groups and weights as a slab from the
// store (so the same bits). Apart because it is the one streaming job that
// runs on the ingest thread, before fdk_finish.

#include <algorithm>
#include <array>
#include <vector>

#include "one_device.hpp"

namespace fdk::cuda {

// Early slab, on the filter thread: the first slab's window of `view` is
// cut from the filtered view into the second slab buffer; groups of
// pairs go to the GPU in order as they complete.
void OneDevice::early_view(const ScanModel& model, int view) {
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
  copy_2d_async(slab_buffers_[1].get() + window_stride_ * v, pitch_ * sizeof(float),
                scratch_.get() + static_cast<size_t>(w[0]) * pitch_, pitch_ * sizeof(float), columns_ * sizeof(float),
                w[1] - w[0] + 1, filter_stream_.get(), "cuMemcpy2DAsync (early window)");
  early_copied_.record(filter_stream_.get());
  counted_[v] = 1;
  ++orbit_arrivals_[static_cast<size_t>(q)];
  launch_early_groups(model);
}

// The first early view: sizes the batch sets for the first slab, clears
// it, and finds each pair's window. False (and early off) when the
// windows of all views do not fit the second slab buffer.
bool OneDevice::start_early(const ScanModel& model) {
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
  zero_async(slab_buffers_[0].get(), model.plane_floats() * planes * sizeof(float), bp_stream_.get(),
             "cuMemsetD8Async (early slab)");
  early_max_.resize(model.views.size());
  zero_async(early_max_.get(), early_max_.bytes(), filter_stream_.get(), "cuMemsetD8Async (maxima)");
  compute_mask(model, true);
  early_windows_.clear();
  for (const auto& orbit : orbits_) early_windows_.push_back(item_window(model, orbit, 2, range[0], planes, rows));
  return true;
}

// Launches the complete groups of pairs, in order, into the first slab.
void OneDevice::launch_early_groups(const ScanModel& model) {
  const auto range = model.slabs.front();
  const size_t total = orbits_.size(), group = static_cast<size_t>(group_size_);
  while (early_next_ * group < total) {
    const size_t first = early_next_ * group, last = std::min(total, first + group);
    for (size_t q = first; q < last; ++q)
      if (orbit_arrivals_[q] < orbit_size_[q]) return;
    wait_event(bp_stream_.get(), early_copied_.get(), "cuStreamWaitEvent (early windows)");
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
    if (model.meter) {
      int views = 0;
      for (size_t q = first; q < last; ++q)
        for (int v : orbits_[q]) views += v >= 0 ? 1 : 0;
      model.meter->add(range[0], range[1], views);
    }
  }
}

// fdk_finish: true when the first slab is complete from the scan (every
// view arrived once, as announced, none dropped, weights unchanged).
bool OneDevice::finish_early(const ScanModel& model) {
  if (!early_started_ || !early_ || early_failed_ || dropped_.load()) return false;
  for (unsigned char a : model.arrived)
    if (!a) return false;
  if (model.view_weights != nominal_weights_) return false;
  launch_early_groups(model);
  return early_next_ * static_cast<size_t>(group_size_) >= orbits_.size();
}

}  // namespace fdk::cuda
