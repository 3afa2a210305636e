// The FDK ramp filter along detector rows, by FFT with zero padding (no
// circular wrap-around), apodised by a window, with optional truncation
// padding. CPU reference; the CUDA backend reuses frequency_response().
#pragma once
#include <fdk/fdk.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace fdk {

struct RampFilterParams {
  int width = 0;              // pixels per row (detector columns)
  double pixel_spacing = 1;   // du, physical units
  int32_t window = FDK_WINDOW_RAM_LAK;  // fdk_window, kept as an int until validated
  double cutoff = 1.0;        // fraction of Nyquist, (0, 1]
  double truncation_padding = 0;  // fraction of width added on each side
  double hann_cutoff_v = 0;   // fdk_config.hann_cutoff_v: 0 = off, else a VerticalWindow after the ramp
};

// Scaling: out[i] = du * sum_j h(i - j) * in[j] (the discrete counterpart of
// convolving with the |omega| kernel in physical units), where h is the
// band-limited ramp kernel of Kak & Slaney: h(0) = 1/(4 du^2),
// h(n odd) = -1/(pi n du)^2, h(n even, != 0) = 0; then the window W(f)
// multiplies in frequency (f in cycles/sample, Nyquist 0.5, zero above
// cutoff * 0.5): Ram-Lak 1, Shepp-Logan sinc(f / (2 fc)), cosine
// cos(pi f / (2 fc)), Hamming 0.54 + 0.46 cos(pi f / fc), Hann
// 0.5 + 0.5 cos(pi f / fc), fc = cutoff * 0.5.
//
// Truncation padding extends each row by round(truncation_padding * width)
// samples on each side: the edge value times a raised-cosine taper that falls
// to zero, so objects wider than the detector do not cup.
class RampFilter {
 public:
  explicit RampFilter(const RampFilterParams& params);
  ~RampFilter();
  RampFilter(const RampFilter&) = delete;
  RampFilter& operator=(const RampFilter&) = delete;

  int width() const;
  int pad_samples() const;     // samples added on each side
  int padded_length() const;   // FFT length N >= 2 * (width + 2 * pad)
  // Real response of the kernel (window and du included) at FFT bins
  // 0..N/2: filtering equals multiplying the row's spectrum by it.
  const std::vector<float>& frequency_response() const;

  // Filters `rows` rows in place (row r at data + r * row_stride floats).
  // Thread-safe: each call uses its own scratch space.
  void filter_rows(float* data, int rows, size_t row_stride) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fdk
