// Streamed slabs (one_device.hpp): after fdk_finish a worker per GPU takes
// slabs from the shared SlabPrefetch and computes each from the compressed
// store: the rows of every view the slab needs are decompressed on CPU
// threads into pinned memory, uploaded on their own stream and
// backprojected while the next batch is prepared. Apart from the resident
// path, with which it shares only the packing kernels.

#include <algorithm>
#include <array>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "one_device.hpp"

namespace fdk::cuda {

// Streaming, from fdk_finish: the worker thread that computes slabs ahead
// of the reader into this device's buffers, decompressing on the pool all
// devices' workers share (pool_ copies the reader's downloads). A device
// failure retires the worker: its slabs go to the other devices.
void OneDevice::start_worker(const ScanModel& model, SlabPrefetch& prefetch, int first_buffer, ThreadPool& decode) {
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

void OneDevice::worker_loop(const ScanModel& model, SlabPrefetch& prefetch, int first_buffer, int worker) {
  SlabPrefetch::Task task;
  while (prefetch.next_task(task, worker)) {
    try {
      inject_slab_fault();
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

// Rows [lo, hi] of the detector that planes [y0, y0 + planes) need from
// the views of `item` (their union: an orbit shares one texture).
std::array<int, 2> OneDevice::item_window(const ScanModel& model, const std::array<int, 4>& item, int width, int y0,
                                          int planes, int rows) const {
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

// Worker: planes [y0, y1) from the compressed store into slab buffer
// `buffer`; its event marks the end.
void OneDevice::compute_slab(const ScanModel& model, int y0, int y1, int buffer) {
  const int planes = y1 - y0;
  const int rows = window_rows(planes);
  if (store_max_.size() == 0) upload_store_maxima(model);
  if (set_rows_ < rows) {
    synchronize(bp_stream_.get(), "cuStreamSynchronize");
    make_sets(group_size_, rows, true);
  }
  reserve_staging(rows);
  DeviceBuffer<float>& slab = slab_buffers_[static_cast<size_t>(buffer)];
  slab.resize(model.plane_floats() * static_cast<size_t>(std::max(planes, max_planes_)));
  zero_async(slab.get(), model.plane_floats() * planes * sizeof(float), bp_stream_.get(), "cuMemsetD8Async (slab)");
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
  size_t first = 0;
  while (first < items.size()) {
    throw_if_cancelled(model);
    // Orbits and singles never share a launch.
    const bool orbit = first < orbit_items;
    const size_t per_launch = static_cast<size_t>(orbit ? group_size_ : std::min(kMaxBatchViews, window_slots_) / 4);
    size_t last = std::min(items.size(), first + per_launch);
    if (orbit && last > orbit_items) last = orbit_items;
    run_stream_batch(model, items, first, last, orbit, y0, planes, rows,
                     slab.get());
    first = last;
  }
  slab_ready_[static_cast<size_t>(buffer)].record(bp_stream_.get());
}

// Each stored view's largest |value| (ProjectionStore::max_abs), which
// scales its packing whatever its window; 0 for a view never stored.
void OneDevice::upload_store_maxima(const ScanModel& model) {
  std::vector<float> maxima(model.views.size(), 0.0f);
  for (size_t v = 0; v < maxima.size(); ++v)
    if (model.store->has(static_cast<int>(v))) maxima[v] = model.store->max_abs(static_cast<int>(v));
  store_max_.resize(maxima.size());
  copy_now(store_max_.get(), maxima.data(), maxima.size() * sizeof(float), "cuMemcpyAsync (view maxima)");
}

void OneDevice::run_stream_batch(const ScanModel& model, const std::vector<std::array<int, 4>>& items, size_t first,
                                 size_t last, bool orbits, int y0, int planes, int rows, float* slab) {
  BatchSet& set = next_set();
  const int count = static_cast<int>(last - first);
  const int width = orbits ? orbit_width() : 4;  // windows per item (singles: four a group)
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
    float* dst = set.staging.window(static_cast<size_t>(task));
    model.store->read_rows(v, w[0], w[1] + 1, dst);
  });
  for (int task = 0; task < count * width; ++task) {
    if (view_at(task / width, task % width) < 0) continue;
    const auto& w = window[static_cast<size_t>(task / width)];
    copy_2d_async(set.windows.get() + window_stride_ * task, pitch_ * sizeof(float),
                  set.staging.window(static_cast<size_t>(task)), columns_ * sizeof(float),
                  columns_ * sizeof(float), w[1] - w[0] + 1, upload_stream_.get(), "cuMemcpy2DAsync (window upload)");
  }
  set.uploaded.record(upload_stream_.get());
  wait_event(bp_stream_.get(), set.uploaded.get(), "cuStreamWaitEvent (windows)");
  {
    std::lock_guard<std::mutex> lock(timing_mutex_);
    upload_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - upload_start).count();
  }
  const SlabGeometry g = slab_geometry(model, y0, planes);
  auto window_of = [&](int s, int c) { return set.windows.get() + window_stride_ * (width * s + c); };
  if (orbits) {
    launch_window_orbits(model, set, count, view_at, window_of, store_max_.get(), window, model.view_weights, g,
                         slab);
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
  if (model.meter) {
    int views = 0;
    for (int task = 0; task < count * width; ++task) views += view_at(task / width, task % width) >= 0 ? 1 : 0;
    model.meter->add(y0, y0 + planes, views);  // issued: two batch sets keep it at most two batches ahead
  }
}

int aligned_slab_planes() { return kPairPlanesPerThread; }

}  // namespace fdk::cuda
