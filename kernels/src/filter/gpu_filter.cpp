#include "gpu_filter.hpp"

#include <algorithm>
#include <vector>

#include "driver/kernel_library.hpp"
#include "fdk/core/ramp_filter.hpp"
#include "fdk/core/vertical_window.hpp"
#include "fdk/core/weights.hpp"
#include "filter_params.hpp"
#include "kernel_shapes.hpp"

namespace fdk::cuda {
namespace {

// The most dynamic shared memory one block may have on the current device
// (a kernel opts in above the default 48 KiB: kernel_library.hpp).
size_t device_shared_bytes() {
  int bytes = 0;
  check(cu().cuDeviceGetAttribute(&bytes, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, current_device()),
        "cuDeviceGetAttribute (shared memory per block)");
  return static_cast<size_t>(bytes);
}

}  // namespace

uint64_t vertical_window_bytes(const ScanModel& model) {
  if (!(model.filter.hann_cutoff_v > 0)) return 0;
  const uint64_t n =
      static_cast<uint64_t>(VerticalWindow(model.detector.size[1], model.filter.hann_cutoff_v).padded_length());
  // Its gains and twiddles (the columns are filtered in place).
  return 4ull * (n / 2 + 1) + 8ull * n;
}

GpuFilter::GpuFilter(const ScanModel& model, CUstream stream) : stream_(stream) {
  const RampFilter ramp(model.filter);
  n_ = ramp.padded_length();
  pad_ = ramp.pad_samples();
  const int rows = model.detector.size[1];
  rows_plan_ = make_fft_plan(n_);
  prepare(rows_, rows_plan_, ramp.frequency_response(), (rows + 1) / 2);
  allow_shared_bytes(Kernel::filter_rows, rows_.launch.shared_bytes);
  raw_.resize(static_cast<size_t>(model.input_detector.size[0]) * rows);
  column_weight_.resize(static_cast<size_t>(model.detector.size[0]));
  column_u2_.resize(static_cast<size_t>(model.detector.size[0]));
  host_columns_.resize(2 * static_cast<size_t>(model.detector.size[0]));
  if (model.filter.hann_cutoff_v > 0) {
    const VerticalWindow window(rows, model.filter.hann_cutoff_v);
    columns_plan_ = make_fft_plan(window.padded_length());
    prepare(columns_, columns_plan_, window.frequency_response(), (model.detector.size[0] + 1) / 2);
    allow_shared_bytes(Kernel::filter_columns, columns_.launch.shared_bytes);
  }
}

// The gains scaled by 1/n (the inverse transform is unnormalised), the
// twiddles, and, for a length too long for shared memory, each block's
// workspace in device memory.
void GpuFilter::prepare(Transform& t, const FftPlan& plan, const std::vector<float>& gains, int pairs) {
  t.launch = filter_launch(plan, device_shared_bytes());
  // Blocks loop over the pairs. On the global path (lengths past shared
  // memory: 16 n bytes of workspace a block, 2 MiB at n = 131072) one block
  // per multiprocessor, which is all that fits at once (512 threads of
  // about 128 registers), bounds the workspace to a few hundred MiB.
  int multiprocessors = 1;
  check(cu().cuDeviceGetAttribute(&multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, current_device()),
        "cuDeviceGetAttribute (multiprocessors)");
  t.blocks = static_cast<unsigned>(t.launch.scratch_bytes_per_block > 0 ? std::min(pairs, std::max(1, multiprocessors))
                                                                        : pairs);
  std::vector<float> scaled(gains);
  for (float& g : scaled) g /= static_cast<float>(plan.n);
  t.response.resize(scaled.size());
  copy_now(t.response.get(), scaled.data(), scaled.size() * sizeof(float), "cuMemcpyAsync (filter response)");
  t.twiddles.resize(plan.twiddles.size());
  copy_now(t.twiddles.get(), plan.twiddles.data(), plan.twiddles.size() * sizeof(float),
           "cuMemcpyAsync (FFT twiddles)");
  if (t.launch.scratch_bytes_per_block > 0) t.scratch.resize(t.launch.scratch_bytes_per_block * t.blocks);
}

void GpuFilter::run(const ScanModel& model, const ViewGeometry& g, const float* pixels, size_t pitch_bytes,
                    std::array<int, 2> given, float* device_out, size_t device_pitch, float* host_out) {
  issue(model, g, pixels, pitch_bytes, given, device_out, device_pitch, host_out);
  wait();
}

void GpuFilter::wait() { synchronize(stream_, "cuStreamSynchronize (filter)"); }

void GpuFilter::wait_upload() { uploaded_.synchronize(); }

void GpuFilter::issue(const ScanModel& model, const ViewGeometry& g, const float* pixels, size_t pitch_bytes,
                      std::array<int, 2> given, float* device_out, size_t device_pitch, float* host_out) {
  const int width = model.detector.size[0], rows = model.detector.size[1];
  const int in_width = model.input_detector.size[0];
  // The per-column weights are the CPU's own (one code for both backends).
  std::vector<double> weight(static_cast<size_t>(width)), u2(static_cast<size_t>(width));
  column_weights(model.redundancy, g, model.detector, weight.data(), u2.data());
  // host_columns_ is free again once the previous upload, which follows
  // its copies on the upload stream, is done (so are that issue's pixels).
  uploaded_.synchronize();
  float* cols = host_columns_.get();
  for (int i = 0; i < width; ++i) {
    cols[i] = static_cast<float>(weight[static_cast<size_t>(i)]);
    cols[width + i] = static_cast<float>(u2[static_cast<size_t>(i)]);
  }
  // The device buffers are free once the previous filter has read them.
  const CUstream up = upload_stream_.get();
  wait_event(up, consumed_.get(), "cuStreamWaitEvent (raw buffer)");
  copy_async(column_weight_.get(), cols, width * sizeof(float), up, "cuMemcpyAsync (column weights)");
  copy_async(column_u2_.get(), cols + width, width * sizeof(float), up, "cuMemcpyAsync (column u2)");
  const size_t in_row = static_cast<size_t>(in_width);
  const int g0 = std::clamp(given[0], 0, rows), g1 = std::clamp(given[1], g0, rows);
  if (g0 > 0)
    zero_async(raw_.get(), static_cast<size_t>(g0) * in_row * sizeof(float), up, "cuMemsetD8Async (rows not given)");
  if (g1 < rows)
    zero_async(raw_.get() + static_cast<size_t>(g1) * in_row, static_cast<size_t>(rows - g1) * in_row * sizeof(float),
               up, "cuMemsetD8Async (rows not given)");
  if (g1 > g0)
    copy_2d_async(raw_.get() + static_cast<size_t>(g0) * in_row, in_row * sizeof(float),
                  reinterpret_cast<const char*>(pixels) + static_cast<size_t>(g0) * pitch_bytes, pitch_bytes,
                  in_row * sizeof(float), static_cast<size_t>(g1 - g0), up, "cuMemcpy2DAsync (projection upload)");
  uploaded_.record(up);
  wait_event(stream_, uploaded_.get(), "cuStreamWaitEvent (upload)");

  RowFilterParams p{};
  p.raw = dptr(raw_.get());
  p.column_weight = dptr(column_weight_.get());
  p.column_u2 = dptr(column_u2_.get());
  p.response = dptr(rows_.response.get());
  p.twiddles = dptr(rows_.twiddles.get());
  p.out = dptr(device_out);
  p.scratch = dptr(rows_.scratch.get());
  p.in_pitch = in_row;
  p.out_pitch = device_pitch;
  p.in_width = in_width;
  p.width = width;
  p.rows = rows;
  p.pad = pad_;
  p.column_offset = model.input_column_offset;
  p.v_origin = static_cast<float>(model.detector.origin[1] - g.principal_v());
  p.v_spacing = static_cast<float>(model.detector.spacing[1]);
  p.sdd2 = static_cast<float>(g.sdd * g.sdd);
  set_plan(p, rows_plan_);
  launch(Kernel::filter_rows, Dim3{rows_.blocks}, Dim3{static_cast<unsigned>(rows_.launch.threads)},
         rows_.launch.shared_bytes, stream_, "filter_rows", p);
  consumed_.record(stream_);
  if (columns_plan_.n > 0) {
    // The window along v (VerticalWindow) on the filtered rows, in place.
    ColumnFilterParams c{};
    c.data = dptr(device_out);
    c.response = dptr(columns_.response.get());
    c.twiddles = dptr(columns_.twiddles.get());
    c.scratch = dptr(columns_.scratch.get());
    c.pitch = device_pitch;
    c.columns = width;
    c.rows = rows;
    set_plan(c, columns_plan_);
    launch(Kernel::filter_columns, Dim3{columns_.blocks}, Dim3{static_cast<unsigned>(columns_.launch.threads)},
           columns_.launch.shared_bytes, stream_, "filter_columns", c);
  }
  if (store_band_rows_ > 0) {
    const unsigned bands = static_cast<unsigned>((rows + store_band_rows_ - 1) / store_band_rows_);
    launch(Kernel::round_store_bands, Dim3{bands}, Dim3{static_cast<unsigned>(kRoundBandThreads)}, 0, stream_,
           "round_store_bands", device_out, uint64_t{device_pitch}, int32_t{width}, int32_t{rows},
           int32_t{store_band_rows_});
  }
  if (host_out)
    copy_2d_async(host_out, width * sizeof(float), device_out, device_pitch * sizeof(float), width * sizeof(float),
                  rows, stream_, "cuMemcpy2DAsync (filtered download)");
  done_.record(stream_);
}

}  // namespace fdk::cuda
