#include "fdk/core/ramp_filter.hpp"

#include <fdk/core/error.hpp>

#include <kiss_fftr.h>  // include dir .../kissfft, as Debian's kissfft-float.pc gives it

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>

namespace fdk {
namespace {

constexpr double kPi = 3.14159265358979323846;
// Keeps the FFT length (about 6 * width at full padding) well inside int.
constexpr int kMaxWidth = 1 << 24;

struct FftrFree {
  void operator()(kiss_fftr_state* cfg) const { kiss_fftr_free(cfg); }
};
using FftrPtr = std::unique_ptr<kiss_fftr_state, FftrFree>;

FftrPtr make_fftr(int n, bool inverse) {
  FftrPtr cfg(kiss_fftr_alloc(n, inverse ? 1 : 0, nullptr, nullptr));
  if (!cfg) fail(FDK_ERROR_OUT_OF_MEMORY, "ramp filter: cannot allocate an FFT plan");
  return cfg;
}

// Band-limited ramp of Kak & Slaney for du = 1.
double ramp_kernel(long n) {
  if (n == 0) return 0.25;
  if (n % 2 == 0) return 0.0;
  const double d = kPi * static_cast<double>(n);
  return -1.0 / (d * d);
}

double window_gain(fdk_window window, double f, double fc) {
  if (f > fc) return 0.0;
  switch (window) {
    case FDK_WINDOW_RAM_LAK:
      return 1.0;
    case FDK_WINDOW_SHEPP_LOGAN: {
      const double x = kPi * f / (2.0 * fc);
      return x == 0.0 ? 1.0 : std::sin(x) / x;
    }
    case FDK_WINDOW_COSINE:
      return std::cos(kPi * f / (2.0 * fc));
    case FDK_WINDOW_HAMMING:
      return 0.54 + 0.46 * std::cos(kPi * f / fc);
    case FDK_WINDOW_HANN:
      return 0.5 + 0.5 * std::cos(kPi * f / fc);
  }
  return 0.0;
}

void validate(const RampFilterParams& p) {
  if (p.width < 1 || p.width > kMaxWidth)
    fail(FDK_ERROR_INVALID_ARGUMENT,
         "ramp filter: width must be in [1, " + std::to_string(kMaxWidth) + "]");
  if (!std::isfinite(p.pixel_spacing) || p.pixel_spacing <= 0)
    fail(FDK_ERROR_INVALID_ARGUMENT, "ramp filter: pixel spacing must be finite and > 0");
  if (!std::isfinite(p.cutoff) || p.cutoff <= 0 || p.cutoff > 1)
    fail(FDK_ERROR_INVALID_ARGUMENT, "ramp filter: cutoff must be in (0, 1]");
  if (!std::isfinite(p.truncation_padding) || p.truncation_padding < 0 ||
      p.truncation_padding > 1)
    fail(FDK_ERROR_INVALID_ARGUMENT, "ramp filter: truncation padding must be in [0, 1]");
  if (p.window >= FDK_WINDOW_RAM_LAK && p.window <= FDK_WINDOW_HANN) return;
  fail(FDK_ERROR_INVALID_ARGUMENT, "ramp filter: unknown window");
}

// kiss_fftr keeps a scratch buffer inside its plan, so a plan serves one
// transform at a time: each concurrent call borrows a whole workspace.
struct Workspace {
  FftrPtr forward, inverse;
  std::vector<float> signal;
  std::vector<kiss_fft_cpx> spectrum;

  explicit Workspace(int n)
      : forward(make_fftr(n, false)),
        inverse(make_fftr(n, true)),
        signal(static_cast<size_t>(n)),
        spectrum(static_cast<size_t>(n / 2 + 1)) {}
};

}  // namespace

struct RampFilter::Impl {
  RampFilterParams params;
  int pad = 0;
  int n = 0;
  std::vector<float> response;
  std::vector<float> scaled_response;  // response / n: kissfft does not normalise
  std::vector<float> taper;            // taper[k - 1] for k = 1..pad

  mutable std::mutex pool_mutex;
  mutable std::vector<std::unique_ptr<Workspace>> pool;

  std::unique_ptr<Workspace> acquire() const {
    {
      std::lock_guard<std::mutex> lock(pool_mutex);
      if (!pool.empty()) {
        std::unique_ptr<Workspace> ws = std::move(pool.back());
        pool.pop_back();
        return ws;
      }
    }
    return std::make_unique<Workspace>(n);
  }

  void release(std::unique_ptr<Workspace> ws) const noexcept {
    try {
      std::lock_guard<std::mutex> lock(pool_mutex);
      pool.push_back(std::move(ws));
    } catch (...) {
      // Dropping the workspace only costs a re-plan on a later call.
    }
  }

  void build_response() {
    const size_t half = static_cast<size_t>(n / 2);
    Workspace ws(n);
    std::vector<float>& kernel = ws.signal;
    // Laid out circularly over (-n/2, n/2]: since n >= 2 * padded row length,
    // every lag a row can see is represented once, so nothing wraps.
    kernel[0] = static_cast<float>(ramp_kernel(0));
    for (size_t k = 1; k <= half; ++k) {
      const float h = static_cast<float>(ramp_kernel(static_cast<long>(k)));
      kernel[k] = h;
      if (k < half) kernel[static_cast<size_t>(n) - k] = h;
    }
    kiss_fftr(ws.forward.get(), kernel.data(), ws.spectrum.data());

    // The kernel was built for du = 1: h scales as 1/du^2, the sum as du.
    const double gain = 1.0 / params.pixel_spacing;
    const double fc = 0.5 * params.cutoff;
    response.resize(half + 1);
    scaled_response.resize(half + 1);
    for (size_t k = 0; k <= half; ++k) {
      const double f = static_cast<double>(k) / n;
      const double r = ws.spectrum[k].r * gain * window_gain(static_cast<fdk_window>(params.window), f, fc);
      response[k] = static_cast<float>(r);
      scaled_response[k] = static_cast<float>(r / n);
    }
  }

  void build_taper() {
    taper.resize(static_cast<size_t>(pad));
    for (int k = 1; k <= pad; ++k)
      taper[static_cast<size_t>(k - 1)] =
          static_cast<float>(0.5 * (1.0 + std::cos(kPi * k / (pad + 1))));
  }

  void filter_row(Workspace& ws, float* row) const {
    const int width = params.width;
    float* buf = ws.signal.data();
    for (int k = 1; k <= pad; ++k) {
      const float t = taper[static_cast<size_t>(k - 1)];
      buf[pad - k] = row[0] * t;
      buf[pad + width - 1 + k] = row[width - 1] * t;
    }
    std::copy(row, row + width, buf + pad);
    std::fill(buf + width + 2 * pad, buf + n, 0.0f);

    kiss_fftr(ws.forward.get(), buf, ws.spectrum.data());
    const size_t bins = ws.spectrum.size();
    for (size_t k = 0; k < bins; ++k) {
      ws.spectrum[k].r *= scaled_response[k];
      ws.spectrum[k].i *= scaled_response[k];
    }
    kiss_fftri(ws.inverse.get(), ws.spectrum.data(), buf);
    std::copy(buf + pad, buf + pad + width, row);
  }
};

RampFilter::RampFilter(const RampFilterParams& params) {
  validate(params);
  try {
    auto impl = std::make_unique<Impl>();
    impl->params = params;
    impl->pad = static_cast<int>(std::lround(params.truncation_padding * params.width));
    impl->n = kiss_fftr_next_fast_size_real(2 * (params.width + 2 * impl->pad));
    impl->build_response();
    impl->build_taper();
    impl_ = std::move(impl);
  } catch (const std::bad_alloc&) {
    fail(FDK_ERROR_OUT_OF_MEMORY, "ramp filter: out of memory");
  }
}

RampFilter::~RampFilter() = default;

int RampFilter::width() const { return impl_->params.width; }
int RampFilter::pad_samples() const { return impl_->pad; }
int RampFilter::padded_length() const { return impl_->n; }
const std::vector<float>& RampFilter::frequency_response() const {
  return impl_->response;
}

void RampFilter::filter_rows(float* data, int rows, size_t row_stride) const {
  if (rows < 0) fail(FDK_ERROR_INVALID_ARGUMENT, "ramp filter: negative row count");
  if (rows == 0) return;
  if (!data) fail(FDK_ERROR_INVALID_ARGUMENT, "ramp filter: null data");
  if (rows > 1 && row_stride < static_cast<size_t>(impl_->params.width))
    fail(FDK_ERROR_INVALID_ARGUMENT, "ramp filter: row stride shorter than a row");
  std::unique_ptr<Workspace> ws;
  try {
    ws = impl_->acquire();
  } catch (const std::bad_alloc&) {
    fail(FDK_ERROR_OUT_OF_MEMORY, "ramp filter: out of memory");
  }
  for (int r = 0; r < rows; ++r)
    impl_->filter_row(*ws, data + static_cast<size_t>(r) * row_stride);
  impl_->release(std::move(ws));
}

}  // namespace fdk
