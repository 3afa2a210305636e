// The live preview on a GPU (fdk/core/preview.hpp): each view, where the
// GPU that filtered it holds it, backprojected into a coarse volume on that
// GPU (fdk_preview_views: pixels interpolated in float, as the CPU does), on
// the stream that keeps it ordered after the filtering and before the
// view's buffer is reused. Resident views stay, so they are launched
// kPreviewBatchViews at a time; a streamed view is the filter's scratch,
// launched at once on the filter's stream. The filter thread never waits
// for the GPU here.
#pragma once
#include <cstdint>

#include "device_backend.hpp"
#include "device_resources.hpp"
#include "fdk/core/preview.hpp"
#include "kernel_params.hpp"

namespace fdk::cuda {

// Device bytes a preview of `grid` takes.
uint64_t preview_device_bytes(const fdk_volume& grid);

class DevicePreview final : public PreviewSink {
 public:
  // On `device`, which sees every filtered view; its context must be
  // current (the members' streams and events are made in it).
  DevicePreview(const ScanModel& model, const fdk_volume& grid, DeviceBackend& device);
  ~DevicePreview() override;
  void add(const ScanModel& model, int view, const IndexMatrix& matrix, double weight, const float* filtered) override;
  void read(float* out) override;
  bool on_gpu() const override { return true; }
  uint64_t memory_bytes() const override { return preview_device_bytes(grid_); }

 private:
  void launch(CUstream stream);

  DeviceBackend& device_;
  const int ordinal_;
  const fdk_volume grid_;
  const int columns_, rows_;
  DeviceBuffer<float> volume_;
  DeviceBuffer<unsigned char> mask_;
  // High priority: the preview keeps pace with the scan on a GPU busy with
  // the volume's backprojection.
  Stream stream_{+1};
  // The views not yet launched (the launch copies them: nothing to keep).
  PreviewBatch batch_{};
  // After the last launch, on whichever stream it went (a mode's launches
  // all go on one stream, in order): a read waits for it.
  Event launched_;
  bool any_launched_ = false;
};

}  // namespace fdk::cuda
