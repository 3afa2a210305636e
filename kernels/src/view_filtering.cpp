// Filtering a view on one GPU (one_device.hpp): into the resident
// projections or a scratch view for the store, on several filters in turn,
// with copies to the peers that hold every filtered view, and copies back
// for the store. Kept apart from what is done with the filtered views.

#include <mutex>
#include <vector>

#include "one_device.hpp"

namespace fdk::cuda {

void OneDevice::filter(const ScanModel& model, int view, const ViewGeometry& geometry, const float* pixels,
                       size_t pitch_bytes, float* filtered, int /*lane: CudaBackend's*/) {
  DeviceGuard guard(device_);
  float* target;
  if (resident_) {
    target = projections_.get() + static_cast<size_t>(view) * view_stride_;
  } else {
    if (!scratch_readers_[static_cast<size_t>(scratch_at_)].empty()) {
      // The GPUs may still be copying the previous view's windows: this
      // one goes into the other buffer, once the copies that read it (two
      // views ago) are done.
      scratch_at_ ^= 1;
      auto& readers = scratch_readers_[static_cast<size_t>(scratch_at_)];
      for (CUevent e : readers) wait_event(filter_stream_.get(), e, "cuStreamWaitEvent (windows copied)");
      readers.clear();
    }
    DeviceBuffer<float>& scratch = scratch_[static_cast<size_t>(scratch_at_)];
    scratch.resize(pitch_ * rows_);
    target = scratch.get();
  }
  filter_.run(model, geometry, pixels, pitch_bytes, model.rows_of(view), target, pitch_,
              filtered);
}

// Store workers fetch resident filtered views (one copy at a time: they
// share the bus with the uploads anyway).
void OneDevice::read_filtered(const ScanModel& model, int view, float* out) {
  DeviceGuard guard(device_);
  std::lock_guard<std::mutex> lock(store_copy_mutex_);
  after_filters(store_stream_.get());
  copy_2d_async(out, columns_ * sizeof(float), projections_.get() + static_cast<size_t>(view) * view_stride_,
                pitch_ * sizeof(float), columns_ * sizeof(float), rows_, store_stream_.get(),
                "cuMemcpy2DAsync (filtered view for the store)");
  synchronize(store_stream_.get(), "cuStreamSynchronize (store copy)");
}

// Resident: views go to the filters in turn, each on its own stream and
// upload stream, so that one view's kernels wait for room on the GPU (the
// backprojection fills it) while the next ones are uploaded and filtered.
void OneDevice::filter_share(const ScanModel& model, int view, const ViewGeometry& geometry, const float* pixels,
                             size_t pitch_bytes, const std::vector<DeviceBackend*>& to) {
  inject_fault(FaultPlan::Scan, views_seen_);
  DeviceGuard guard(device_);
  const size_t n = 1 + more_filters_.size();
  const size_t i = next_filter_;
  next_filter_ = (next_filter_ + 1) % n;
  GpuFilter& f = i == 0 ? filter_ : *more_filters_[i - 1];
  // A filter's next issue waits for its previous upload: that view's
  // pixels are free once this returns.
  filter_view_[i] = -1;
  f.issue(model, geometry, pixels, pitch_bytes, model.rows_of(view), filtered_view(view),
          pitch_, nullptr);
  filter_view_[i] = view;
  for (DeviceBackend* d : to)
    copy_2d_async(d->filtered_view(view), d->filtered_pitch() * sizeof(float), filtered_view(view),
                  pitch_ * sizeof(float), static_cast<size_t>(columns_) * sizeof(float), rows_, f.stream(),
                  "cuMemcpy2DAsync (filtered view to another GPU)");
  f.mark_done();
}

void OneDevice::wait_uploaded(int view) noexcept {
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

void OneDevice::wait_filters() {
  DeviceGuard guard(device_);
  cu().cuStreamSynchronize(filter_stream_.get());
  for (const auto& st : more_filter_streams_) cu().cuStreamSynchronize(st->get());
}

void OneDevice::order_after_filters(CUstream stream) const {
  wait_event(stream, filter_.done(), "cuStreamWaitEvent (filtered)");
  for (const auto& f : more_filters_)
    wait_event(stream, f->done(), "cuStreamWaitEvent (filtered)");
}

// Work issued on `stream` from now on waits for every view filtered so
// far, here or on a peer that copies its views here.
void OneDevice::after_filters(CUstream stream) {
  order_after_filters(stream);
  for (const DeviceBackend* p : peers_) p->order_after_filters(stream);
}

}  // namespace fdk::cuda
