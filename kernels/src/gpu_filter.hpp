// FDK weighting and the padded ramp filter on the GPU: weights and padding in
// one kernel, batched cuFFT over the rows, the CPU filter's response.
#pragma once
#include <array>
#include "device_resources.hpp"
#include "fdk/core/backend.hpp"

namespace fdk::cuda {

class GpuFilter {
 public:
  GpuFilter(const ScanModel& model, cudaStream_t stream);

  // Uploads one raw projection (`pixels`, pinned), weights and filters it,
  // and leaves the result (detector.size[1] rows of detector.size[0]
  // floats, rows `device_pitch` floats apart) in `device_out`, and a
  // contiguous copy in `host_out` (pinned; null: none). Returns once done.
  // Only rows `given` of `pixels` are uploaded (a libfdk_mpi rank's band;
  // the others are zero in staging, and are zeroed on the device instead).
  void run(const ScanModel& model, const ViewGeometry& geometry, const float* pixels, size_t pitch_bytes,
           std::array<int, 2> given, float* device_out, size_t device_pitch, float* host_out);
  // run() in two: issue the work (returns at once), then wait for it. An
  // issue first waits until the previous one's `pixels` are uploaded.
  void issue(const ScanModel& model, const ViewGeometry& geometry, const float* pixels, size_t pitch_bytes,
             std::array<int, 2> given, float* device_out, size_t device_pitch, float* host_out);
  void wait();
  // After issue(): waits only until `pixels` is uploaded (the caller may
  // reuse it); the filtering goes on, and done() marks its end.
  void wait_upload();
  cudaEvent_t done() const { return done_.get(); }
  // For work added after issue() on the filter's stream (copies of the
  // result): done() then marks its end too.
  cudaStream_t stream() const { return stream_; }
  void mark_done() { done_.record(stream_); }

 private:
  cudaStream_t stream_;
  // The upload has a stream of its own: the next view's upload waits only
  // until this one's weighting has read the raw buffer, not for the whole
  // filter (whose kernels wait for room on a busy GPU).
  Stream upload_stream_{+1};
  Event uploaded_, consumed_, done_;
  int n_ = 0, pad_ = 0;
  DeviceBuffer<float> raw_, padded_, response_, column_weight_, column_u2_;
  DeviceBuffer<cufftComplex> spectrum_;
  PinnedBuffer<float> host_columns_;
  FftPlan forward_, inverse_;
  // fdk_config.hann_cutoff_v (VerticalWindow): the row-filtered view, its
  // columns zero-padded to vn_ rows, transformed down the columns.
  int vn_ = 0;  // 0: no window along v
  DeviceBuffer<float> vpadded_, vresponse_;
  DeviceBuffer<cufftComplex> vspectrum_;
  FftPlan vforward_, vinverse_;
};

// Device bytes a filter's window along v adds (0 when it is off).
uint64_t vertical_window_bytes(const ScanModel& model);

}  // namespace fdk::cuda
