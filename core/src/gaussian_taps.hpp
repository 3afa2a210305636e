// Normalised Gaussian interpolation weights, from a table: the reading
// along v that both tilt fits use (conjugate_rays.cpp says why a reading
// exact on the rows is wrong there), and the conjugate rays' smooth
// reading along u. Internal to core/.
#pragma once
#include <algorithm>
#include <cmath>

namespace fdk {

// N taps from -(N/2 - 1) at fraction t in [0, 1] of a Gaussian of `sigma`
// taps, normalised, with their derivatives in t; interpolated linearly in a
// table of 256 fractions (off by about 1e-6 of a weight): the
// exponentials were most of a sample's cost.
template <int N>
class GaussianTaps {
 public:
  explicit GaussianTaps(double sigma) {
    for (int j = 0; j <= kSteps; ++j) {
      const double t = static_cast<double>(j) / kSteps;
      double g[N], dg[N], sum = 0, dsum = 0;
      for (int k = 0; k < N; ++k) {
        const double d = (k - (N / 2 - 1)) - t;
        g[k] = std::exp(-0.5 * d * d / (sigma * sigma));
        dg[k] = g[k] * d / (sigma * sigma);  // dg/dt
        sum += g[k];
        dsum += dg[k];
      }
      for (int k = 0; k < N; ++k) {
        w_[j][k] = g[k] / sum;
        dw_[j][k] = (dg[k] * sum - g[k] * dsum) / (sum * sum);
      }
    }
  }

  // The weights at t, and (dw not null) their derivatives.
  void weights(double t, double* w, double* dw = nullptr) const {
    const double x = std::min(std::max(t, 0.0), 1.0) * kSteps;
    const int j = std::min(static_cast<int>(x), kSteps - 1);
    const double f = x - j;
    for (int k = 0; k < N; ++k) w[k] = w_[j][k] + f * (w_[j + 1][k] - w_[j][k]);
    if (dw)
      for (int k = 0; k < N; ++k) dw[k] = dw_[j][k] + f * (dw_[j + 1][k] - dw_[j][k]);
  }

 private:
  static constexpr int kSteps = 256;
  double w_[kSteps + 1][N], dw_[kSteps + 1][N];
};

// The reading along v of both tilt fits: 0.8 row over 6 taps (its noise
// gain, the sum of w^2, varies 0.8 % with the fraction; linear's from 0.5
// to 1, Keys' from 0.64 to 1).
constexpr int kRowTaps = 6;
constexpr double kRowSigma = 0.8;

inline const GaussianTaps<kRowTaps>& row_taps_table() {
  static const GaussianTaps<kRowTaps> table(kRowSigma);
  return table;
}

}  // namespace fdk
