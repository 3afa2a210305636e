// FDK weighting and the padded ramp filter on the GPU: one kernel per view
// weights, pads, filters (our own batched FFT, two rows per transform) and
// crops the rows into place; the optional window along v is a second,
// down the columns. No cuFFT: fft_plan.hpp says why and which lengths.
#pragma once
#include <array>

#include "device_resources.hpp"
#include "fdk/core/backend.hpp"
#include "fft_plan.hpp"

namespace fdk::cuda {

class GpuFilter {
 public:
  GpuFilter(const ScanModel& model, CUstream stream);

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
  CUevent done() const { return done_.get(); }
  // For work added after issue() on the filter's stream (copies of the
  // result): done() then marks its end too.
  CUstream stream() const { return stream_; }
  void mark_done() { done_.record(stream_); }
  // From now on each filtered view is rounded in place as a float16 store
  // of bands of `band_rows` rows keeps it, before it leaves the GPU (0:
  // left as filtered). The store then keeps the same values, and work that
  // reads the view on the GPU (the early slabs) gets a slab's bits from
  // the store.
  void round_like_store(int band_rows) { store_band_rows_ = band_rows; }

 private:
  // One transform's constants on the device and how it is launched.
  struct Transform {
    FilterLaunch launch;
    unsigned blocks = 0;  // the grid: a block per pair, or fewer on the global path
    DeviceBuffer<float> response, twiddles;
    DeviceBuffer<unsigned char> scratch;
  };
  void prepare(Transform& t, const FftPlan& plan, const std::vector<float>& gains, int pairs);

  CUstream stream_;
  // The upload has a stream of its own: the next view's upload waits only
  // until this one's weighting has read the raw buffer, not for the whole
  // filter (whose kernels wait for room on a busy GPU).
  Stream upload_stream_{+1};
  Event uploaded_, consumed_, done_;
  int n_ = 0, pad_ = 0;
  int store_band_rows_ = 0;
  FftPlan rows_plan_;
  Transform rows_;
  DeviceBuffer<float> raw_, column_weight_, column_u2_;
  PinnedBuffer<float> host_columns_;
  // fdk_config.hann_cutoff_v (VerticalWindow): the row-filtered view's
  // columns, zero-padded to vn rows, filtered down their length in place.
  FftPlan columns_plan_;  // n == 0: no window along v
  Transform columns_;
};

// Device bytes a filter's window along v adds (0 when it is off).
uint64_t vertical_window_bytes(const ScanModel& model);

}  // namespace fdk::cuda
