#include "device_preview.hpp"

#include <vector>

#include "driver/context.hpp"
#include "driver/kernel_library.hpp"
#include "kernel_shapes.hpp"

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
    if (any_launched_) launched_.synchronize();
  } catch (...) {
    // Released anyway; a failed device has no launch left to wait for.
  }
}

void DevicePreview::add(const ScanModel& model, int view, const IndexMatrix& matrix, double weight, const float*) {
  DeviceGuard guard(ordinal_);
  const DeviceBackend::PreviewSource src = device_.preview_source(view, stream_.get());
  ViewTerms& t = batch_.view[batch_.count];
  for (int e = 0; e < 12; ++e) t.m[e] = static_cast<float>(matrix.m[static_cast<size_t>(e)]);
  t.weight = static_cast<float>(weight * matrix.sid * matrix.sid);
  t.row_offset = 0.0f;
  batch_.src[batch_.count] = src.pixels;
  ++batch_.count;
  // A streamed view is overwritten by the next one: it goes at once, on
  // the filter's stream.
  if (!src.kept || batch_.count == kPreviewBatchViews) launch(src.stream);
}

void DevicePreview::launch(CUstream stream) {
  SlabGeometry& g = batch_.g;
  g = SlabGeometry{};
  g.nx = grid_.size[0];
  g.ny = grid_.size[1];
  g.nz = grid_.size[2];
  g.planes = g.chunk = g.stride = g.split = grid_.size[1];
  g.columns = columns_;
  g.rows = rows_;
  batch_.pitch = device_.filtered_pitch();
  auto blocks = [](int n, int per) { return static_cast<unsigned>((n + per - 1) / per); };
  const Dim3 grid{blocks(g.nx, kBlockX), blocks(g.nz, kBlockZ), blocks(g.ny, kPlanesPerThread)};
  const Dim3 block{static_cast<unsigned>(kBlockX), static_cast<unsigned>(kBlockZ)};
  fdk::cuda::launch(Kernel::preview_views, grid, block, 0, stream, "live preview", batch_, volume_.get(),
                    static_cast<const unsigned char*>(mask_.get()));
  launched_.record(stream);
  any_launched_ = true;
  batch_.count = 0;
}

void DevicePreview::read(float* out) {
  DeviceGuard guard(ordinal_);
  if (batch_.count > 0) launch(stream_.get());
  if (any_launched_) wait_event(stream_.get(), launched_.get(), "cuStreamWaitEvent (preview)");
  copy_async(out, volume_.get(), volume_.bytes(), stream_.get(), "cuMemcpyAsync (preview read)");
  stream_.synchronize();
}

}  // namespace fdk::cuda
