// The live preview on a GPU (fdk/core/preview.hpp): each view, where the
// GPU that filtered it holds it, backprojected into a coarse volume on that
// GPU by the generic kernel (one float texture per view), on the stream
// that keeps it ordered after the filtering and before the view's buffer is
// reused. Resident views stay, so they are launched in batches; a streamed
// view is the filter's scratch, launched at once on the filter's stream.
#pragma once
#include <array>
#include <cstddef>
#include <memory>
#include <vector>

#include "device_backend.hpp"
#include "device_resources.hpp"
#include "fdk/core/preview.hpp"
#include "kernel_params.hpp"

namespace fdk::cuda {

// Views per launch when they stay on the GPU: the volume is read and
// written once per batch.
constexpr int kPreviewBatch = 16;

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
  // A launch's views: their textures live until the launch is done.
  struct Batch {
    std::array<TextureObject, kPreviewBatch> tex;
    GenericBatch params{};
    int count = 0;
    Event done;
  };
  // The batch being filled: a free one whose launch is done, or a new one.
  // The filter thread never waits for the GPU here: a preview that falls
  // behind the scan holds more batches (at most one per kPreviewBatch views).
  Batch& filling();
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
  std::unique_ptr<Batch> current_;
  std::vector<std::unique_ptr<Batch>> in_flight_, free_;
};

}  // namespace fdk::cuda
