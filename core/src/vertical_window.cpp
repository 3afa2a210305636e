#include "fdk/core/vertical_window.hpp"

#include <fdk/fdk.h>
#include <kiss_fftr.h>

#include <algorithm>
#include <cmath>
#include <new>
#include <string>

#include "fdk/core/error.hpp"

namespace fdk {
namespace {

constexpr double kPi = 3.14159265358979323846;

struct FftrFree {
  void operator()(kiss_fftr_state* cfg) const { kiss_fftr_free(cfg); }
};
using FftrPtr = std::unique_ptr<kiss_fftr_state, FftrFree>;

FftrPtr make_fftr(int n, bool inverse) {
  FftrPtr cfg(kiss_fftr_alloc(n, inverse ? 1 : 0, nullptr, nullptr));
  if (!cfg) fail(FDK_ERROR_OUT_OF_MEMORY, "vertical Hann window: cannot allocate an FFT plan");
  return cfg;
}

}  // namespace

struct VerticalWindow::Impl {
  int rows = 0, n = 0;
  std::vector<float> response, scaled;  // scaled: response / n (kissfft does not normalise)
};

VerticalWindow::VerticalWindow(int rows, double cutoff) {
  if (rows < 1 || rows > (1 << 24))
    fail(FDK_ERROR_INVALID_ARGUMENT, "vertical Hann window: rows must lie within [1, 2^24]");
  if (!(cutoff > 0 && cutoff <= 1))
    fail(FDK_ERROR_INVALID_ARGUMENT, "vertical Hann window: cutoff must lie within (0, 1]");
  try {
    auto impl = std::make_unique<Impl>();
    impl->rows = rows;
    int n = 1;
    while (n < 2 * rows) n *= 2;
    impl->n = n;
    const int bins = n / 2 + 1;
    const long ncut = std::lround(static_cast<double>(bins) * cutoff);
    impl->response.assign(static_cast<size_t>(bins), 0.0f);
    impl->scaled.assign(static_cast<size_t>(bins), 0.0f);
    for (long j = 0; j < std::min<long>(ncut, bins); ++j) {
      const double w = 0.5 * (1.0 + std::cos(kPi * static_cast<double>(j) / static_cast<double>(ncut)));
      impl->response[static_cast<size_t>(j)] = static_cast<float>(w);
      impl->scaled[static_cast<size_t>(j)] = static_cast<float>(w / n);
    }
    impl_ = std::move(impl);
  } catch (const std::bad_alloc&) {
    fail(FDK_ERROR_OUT_OF_MEMORY, "vertical Hann window: out of memory");
  }
}

VerticalWindow::~VerticalWindow() = default;

int VerticalWindow::padded_length() const { return impl_->n; }
const std::vector<float>& VerticalWindow::frequency_response() const { return impl_->response; }

void VerticalWindow::filter_columns(float* data, int col0, int col1, size_t row_stride) const {
  if (col1 <= col0) return;
  const Impl& w = *impl_;
  try {
    // A plan holds scratch space, so each call makes its own: planning is
    // cheap beside the columns it then serves.
    FftrPtr forward = make_fftr(w.n, false), inverse = make_fftr(w.n, true);
    // Columns go kGroup at a time: gathering a row's neighbouring columns
    // together reads whole cache lines of the row-major view.
    constexpr int kGroup = 16;
    const size_t n = static_cast<size_t>(w.n);
    std::vector<float> signal(n * kGroup);
    std::vector<kiss_fft_cpx> spectrum(n / 2 + 1);
    for (int c0 = col0; c0 < col1; c0 += kGroup) {
      const int g = std::min(kGroup, col1 - c0);
      for (int r = 0; r < w.rows; ++r) {
        const float* row = data + static_cast<size_t>(r) * row_stride + c0;
        for (int k = 0; k < g; ++k) signal[static_cast<size_t>(k) * n + static_cast<size_t>(r)] = row[k];
      }
      for (int k = 0; k < g; ++k) {
        float* sig = signal.data() + static_cast<size_t>(k) * n;
        std::fill(sig + w.rows, sig + n, 0.0f);
        kiss_fftr(forward.get(), sig, spectrum.data());
        for (size_t b = 0; b < spectrum.size(); ++b) {
          spectrum[b].r *= w.scaled[b];
          spectrum[b].i *= w.scaled[b];
        }
        kiss_fftri(inverse.get(), spectrum.data(), sig);
      }
      for (int r = 0; r < w.rows; ++r) {
        float* row = data + static_cast<size_t>(r) * row_stride + c0;
        for (int k = 0; k < g; ++k) row[k] = signal[static_cast<size_t>(k) * n + static_cast<size_t>(r)];
      }
    }
  } catch (const std::bad_alloc&) {
    fail(FDK_ERROR_OUT_OF_MEMORY, "vertical Hann window: out of memory");
  }
}

}  // namespace fdk
