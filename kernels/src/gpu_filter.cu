#include "gpu_filter.hpp"

#include <algorithm>
#include <vector>

#include "fdk/core/ramp_filter.hpp"
#include "fdk/core/vertical_window.hpp"
#include "fdk/core/weights.hpp"

namespace fdk::cuda {
namespace {

struct WeightParams {
  int in_width, width, rows, n, pad, column_offset;
  size_t in_pitch;  // floats
  float v_origin, v_spacing, sdd2;
};

// One padded row sample per thread: the weighted pixel, the truncation
// extension (edge value times a raised cosine) or zero.
__global__ void weight_and_pad(WeightParams p, const float* raw, const float* column_weight,
                               const float* column_u2, float* padded) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y;
  if (s >= p.n) return;
  int i = s - p.pad;
  float taper = 1.0f;
  if (i < 0 && i >= -p.pad) {
    taper = 0.5f * (1.0f + cospif(static_cast<float>(-i) / (p.pad + 1)));
    i = 0;
  } else if (i >= p.width && i < p.width + p.pad) {
    taper = 0.5f * (1.0f + cospif(static_cast<float>(i - p.width + 1) / (p.pad + 1)));
    i = p.width - 1;
  }
  float value = 0.0f;
  const int ii = i - p.column_offset;
  if (i >= 0 && i < p.width && ii >= 0 && ii < p.in_width) {
    const float v = p.v_origin + j * p.v_spacing;
    value = raw[j * p.in_pitch + ii] * column_weight[i] * rsqrtf(p.sdd2 + v * v + column_u2[i]) * taper;
  }
  padded[static_cast<size_t>(j) * p.n + s] = value;
}

__global__ void apply_response(cufftComplex* spectrum, const float* response, int bins, int rows) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y;
  if (k >= bins || j >= rows) return;
  cufftComplex& c = spectrum[static_cast<size_t>(j) * bins + k];
  const float r = response[k];
  c.x *= r;
  c.y *= r;
}

// Row j of the column spectra times the window's gain at bin j. Rows
// stride by the grid's height: 65536 detector rows make 65537 bins, one
// more than a grid may be high.
__global__ void apply_column_response(cufftComplex* spectrum, const float* response, int columns, int bins) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= columns) return;
  for (int j = blockIdx.y; j < bins; j += gridDim.y) {
    cufftComplex& z = spectrum[static_cast<size_t>(j) * columns + c];
    const float r = response[j];
    z.x *= r;
    z.y *= r;
  }
}

}  // namespace

uint64_t vertical_window_bytes(const ScanModel& model) {
  if (!(model.filter.hann_cutoff_v > 0)) return 0;
  const uint64_t n = static_cast<uint64_t>(VerticalWindow(model.detector.size[1], model.filter.hann_cutoff_v).padded_length());
  const uint64_t columns = static_cast<uint64_t>(model.detector.size[0]);
  return 4ull * columns * (n + (n / 2 + 1) * 2) + 4ull * (n / 2 + 1);
}

GpuFilter::GpuFilter(const ScanModel& model, cudaStream_t stream) : stream_(stream) {
  const RampFilter ramp(model.filter);
  n_ = ramp.padded_length();
  pad_ = ramp.pad_samples();
  const int rows = model.detector.size[1];
  const int bins = n_ / 2 + 1;
  std::vector<float> scaled(ramp.frequency_response());
  for (float& r : scaled) r /= static_cast<float>(n_);  // cuFFT's inverse is unnormalised
  response_.resize(static_cast<size_t>(bins));
  check(cudaMemcpy(response_.get(), scaled.data(), scaled.size() * sizeof(float), cudaMemcpyHostToDevice),
        "cudaMemcpy (filter response)");
  raw_.resize(static_cast<size_t>(model.input_detector.size[0]) * rows);
  padded_.resize(static_cast<size_t>(n_) * rows);
  spectrum_.resize(static_cast<size_t>(bins) * rows);
  column_weight_.resize(static_cast<size_t>(model.detector.size[0]));
  column_u2_.resize(static_cast<size_t>(model.detector.size[0]));
  host_columns_.resize(2 * static_cast<size_t>(model.detector.size[0]));
  forward_.make(n_, rows, CUFFT_R2C, stream_);
  inverse_.make(n_, rows, CUFFT_C2R, stream_);
  if (model.filter.hann_cutoff_v > 0) {
    const VerticalWindow window(rows, model.filter.hann_cutoff_v);
    vn_ = window.padded_length();
    std::vector<float> gains(window.frequency_response());
    for (float& g : gains) g /= static_cast<float>(vn_);  // cuFFT's inverse is unnormalised
    vresponse_.resize(gains.size());
    check(cudaMemcpy(vresponse_.get(), gains.data(), gains.size() * sizeof(float), cudaMemcpyHostToDevice),
          "cudaMemcpy (vertical window)");
    const size_t width = static_cast<size_t>(model.detector.size[0]);
    vpadded_.resize(static_cast<size_t>(vn_) * width);
    vspectrum_.resize(static_cast<size_t>(vn_ / 2 + 1) * width);
    vforward_.make_columns(vn_, static_cast<int>(width), CUFFT_R2C, stream_);
    vinverse_.make_columns(vn_, static_cast<int>(width), CUFFT_C2R, stream_);
  }
}

void GpuFilter::run(const ScanModel& model, const ViewGeometry& g, const float* pixels, size_t pitch_bytes,
                    std::array<int, 2> given, float* device_out, size_t device_pitch, float* host_out) {
  issue(model, g, pixels, pitch_bytes, given, device_out, device_pitch, host_out);
  wait();
}

void GpuFilter::wait() { check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (filter)"); }

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
  // The device buffers are free once the previous weighting has read them.
  const cudaStream_t up = upload_stream_.get();
  check(cudaStreamWaitEvent(up, consumed_.get(), 0), "cudaStreamWaitEvent (raw buffer)");
  check(cudaMemcpyAsync(column_weight_.get(), cols, width * sizeof(float), cudaMemcpyHostToDevice, up),
        "cudaMemcpyAsync (column weights)");
  check(cudaMemcpyAsync(column_u2_.get(), cols + width, width * sizeof(float), cudaMemcpyHostToDevice, up),
        "cudaMemcpyAsync (column u2)");
  const size_t in_row = static_cast<size_t>(in_width);
  const int g0 = std::clamp(given[0], 0, rows), g1 = std::clamp(given[1], g0, rows);
  if (g0 > 0)
    check(cudaMemsetAsync(raw_.get(), 0, static_cast<size_t>(g0) * in_row * sizeof(float), up),
          "cudaMemsetAsync (rows not given)");
  if (g1 < rows)
    check(cudaMemsetAsync(raw_.get() + static_cast<size_t>(g1) * in_row, 0,
                          static_cast<size_t>(rows - g1) * in_row * sizeof(float), up),
          "cudaMemsetAsync (rows not given)");
  if (g1 > g0)
    check(cudaMemcpy2DAsync(raw_.get() + static_cast<size_t>(g0) * in_row, in_row * sizeof(float),
                            reinterpret_cast<const char*>(pixels) + static_cast<size_t>(g0) * pitch_bytes, pitch_bytes,
                            in_row * sizeof(float), static_cast<size_t>(g1 - g0), cudaMemcpyHostToDevice, up),
          "cudaMemcpy2DAsync (projection upload)");
  uploaded_.record(up);
  check(cudaStreamWaitEvent(stream_, uploaded_.get(), 0), "cudaStreamWaitEvent (upload)");
  WeightParams p{};
  p.in_width = in_width;
  p.width = width;
  p.rows = rows;
  p.n = n_;
  p.pad = pad_;
  p.column_offset = model.input_column_offset;
  p.in_pitch = static_cast<size_t>(in_width);
  p.v_origin = static_cast<float>(model.detector.origin[1] - g.principal_v());
  p.v_spacing = static_cast<float>(model.detector.spacing[1]);
  p.sdd2 = static_cast<float>(g.sdd * g.sdd);
  const dim3 block(256);
  weight_and_pad<<<dim3((n_ + 255) / 256, rows), block, 0, stream_>>>(p, raw_.get(), column_weight_.get(),
                                                                      column_u2_.get(), padded_.get());
  check_launch("weight_and_pad");
  consumed_.record(stream_);
  const CufftApi* fft = cufft_api();  // non-null: the plans were made with it
  check(fft->exec_r2c(forward_.get(), padded_.get(), spectrum_.get()), "cufftExecR2C");
  const int bins = n_ / 2 + 1;
  apply_response<<<dim3((bins + 255) / 256, rows), block, 0, stream_>>>(spectrum_.get(), response_.get(), bins,
                                                                        rows);
  check_launch("apply_response");
  check(fft->exec_c2r(inverse_.get(), spectrum_.get(), padded_.get()), "cufftExecC2R");
  // The row's own samples sit after the padding.
  const float* filtered = padded_.get() + pad_;
  size_t filtered_pitch = static_cast<size_t>(n_);
  if (vn_ > 0) {
    // The window along v (VerticalWindow): the columns, zero-padded below
    // the view, filtered down their length, as the CPU does.
    const size_t w = static_cast<size_t>(width);
    check(cudaMemcpy2DAsync(vpadded_.get(), w * sizeof(float), filtered, filtered_pitch * sizeof(float),
                            w * sizeof(float), rows, cudaMemcpyDeviceToDevice, stream_),
          "cudaMemcpy2DAsync (columns for the vertical window)");
    check(cudaMemsetAsync(vpadded_.get() + static_cast<size_t>(rows) * w, 0,
                          static_cast<size_t>(vn_ - rows) * w * sizeof(float), stream_),
          "cudaMemsetAsync (vertical padding)");
    check(fft->exec_r2c(vforward_.get(), vpadded_.get(), vspectrum_.get()), "cufftExecR2C (columns)");
    const int vbins = vn_ / 2 + 1;
    apply_column_response<<<dim3((width + 255) / 256, std::min(vbins, 65535)), block, 0, stream_>>>(vspectrum_.get(),
                                                                                   vresponse_.get(), width, vbins);
    check_launch("apply_column_response");
    check(fft->exec_c2r(vinverse_.get(), vspectrum_.get(), vpadded_.get()), "cufftExecC2R (columns)");
    filtered = vpadded_.get();
    filtered_pitch = w;
  }
  check(cudaMemcpy2DAsync(device_out, device_pitch * sizeof(float), filtered, filtered_pitch * sizeof(float),
                          width * sizeof(float), rows, cudaMemcpyDeviceToDevice, stream_),
        "cudaMemcpy2DAsync (filtered)");
  if (host_out)
    check(cudaMemcpy2DAsync(host_out, width * sizeof(float), device_out, device_pitch * sizeof(float),
                            width * sizeof(float), rows, cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpy2DAsync (filtered download)");
  done_.record(stream_);
}

}  // namespace fdk::cuda
