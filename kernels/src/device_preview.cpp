#include "device_preview.hpp"

#include <algorithm>

#include "backprojection_launch.hpp"
#include "driver/context.hpp"

namespace fdk::cuda {

uint64_t preview_device_bytes(const fdk_volume& grid) {
  const uint64_t columns = static_cast<uint64_t>(grid.size[0]) * static_cast<uint64_t>(grid.size[2]);
  return 4 * columns * static_cast<uint64_t>(grid.size[1]) + columns;
}

DevicePreview::DevicePreview(const ScanModel& model, const fdk_volume& grid, DeviceBackend& device)
    : device_(device),
      ordinal_(device.ordinal()),
      grid_(grid),
      columns_(model.detector.size[0]),
      rows_(model.detector.size[1]) {
  DeviceGuard guard(ordinal_);
  const size_t voxels = static_cast<size_t>(grid_voxels(grid));
  volume_.resize(voxels);
  zero_async(volume_.get(), volume_.bytes(), stream_.get(), "cuMemsetD8Async (preview)");
  const std::vector<unsigned char> mask = preview_fov_mask(model, grid);
  mask_.resize(mask.size());
  copy_async(mask_.get(), mask.data(), mask.size(), stream_.get(), "cuMemcpyAsync (preview mask)");
  stream_.synchronize();
}

DevicePreview::~DevicePreview() {
  try {
    DeviceGuard guard(ordinal_);
    for (auto& b : in_flight_) b->done.synchronize();
  } catch (...) {
    // Released anyway; a failed device has no launch left to wait for.
  }
}

DevicePreview::Batch& DevicePreview::filling() {
  if (current_) return *current_;
  for (size_t i = 0; i < in_flight_.size();) {
    if (in_flight_[i]->done.ready()) {
      free_.push_back(std::move(in_flight_[i]));
      in_flight_.erase(in_flight_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  if (free_.empty()) {
    current_ = std::make_unique<Batch>();
  } else {
    current_ = std::move(free_.back());
    free_.pop_back();
  }
  current_->count = 0;
  return *current_;
}

void DevicePreview::add(const ScanModel& model, int view, const IndexMatrix& matrix, double weight, const float*) {
  DeviceGuard guard(ordinal_);
  Batch& b = filling();
  const DeviceBackend::PreviewSource src = device_.preview_source(view, stream_.get());
  b.tex[static_cast<size_t>(b.count)].make_pitch2d(const_cast<float*>(src.pixels), kFloat1,
                                                   static_cast<size_t>(columns_), static_cast<size_t>(rows_),
                                                   device_.filtered_pitch() * sizeof(float));
  ViewTerms& t = b.params.view[b.count];
  for (int e = 0; e < 12; ++e) t.m[e] = static_cast<float>(matrix.m[static_cast<size_t>(e)]);
  t.weight = static_cast<float>(weight * matrix.sid * matrix.sid);
  t.row_offset = 0.0f;
  b.params.tex[b.count] = b.tex[static_cast<size_t>(b.count)].get();
  ++b.count;
  // A streamed view is overwritten by the next one: it goes at once, on
  // the filter's stream.
  if (!src.kept || b.count == kPreviewBatch) launch(src.stream);
}

void DevicePreview::launch(CUstream stream) {
  Batch& b = *current_;
  SlabGeometry& g = b.params.g;
  g = SlabGeometry{};
  g.nx = grid_.size[0];
  g.ny = grid_.size[1];
  g.nz = grid_.size[2];
  g.y0 = 0;
  g.planes = g.chunk = g.stride = g.split = grid_.size[1];
  g.columns = columns_;
  g.rows = rows_;
  b.params.count = b.count;
  launch_generic(b.params, volume_.get(), mask_.get(), stream);
  b.done.record(stream);
  in_flight_.push_back(std::move(current_));
}

void DevicePreview::read(float* out) {
  DeviceGuard guard(ordinal_);
  if (current_ && current_->count > 0) launch(stream_.get());
  // After every launch, on whichever stream it went.
  for (auto& b : in_flight_) wait_event(stream_.get(), b->done.get(), "cuStreamWaitEvent (preview)");
  copy_async(out, volume_.get(), volume_.bytes(), stream_.get(), "cuMemcpyAsync (preview read)");
  stream_.synchronize();
}

}  // namespace fdk::cuda
