// fdk-bench's synthetic projections: deterministic on every machine, so that
// runs on different hosts reconstruct the same data.
#include "synthetic_projections.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace fdk_bench {
namespace {

constexpr double kPi = 3.14159265358979323846;

uint32_t hash3(uint32_t a, uint32_t b, uint32_t c) {
  // A small integer mix (after Bob Jenkins' final()); deterministic everywhere.
  a -= c; a ^= (c << 4) | (c >> 28); c += b;
  b -= a; b ^= (a << 6) | (a >> 26); a += c;
  c -= b; c ^= (b << 8) | (b >> 24); b += a;
  a -= c; a ^= (c << 16) | (c >> 16); c += b;
  b -= a; b ^= (a << 19) | (a >> 13); a += c;
  c -= b; c ^= (b << 4) | (b >> 28); b += a;
  return c;
}

struct Blob {
  double amplitude;  // peak line integral
  double orbit;      // radius of its sinusoid, as a fraction of the width
  double phase;      // radians
  double centre_v;   // row centre, as a fraction of the height
  double sigma_u;    // as a fraction of the width
  double sigma_v;    // as a fraction of the height
};

constexpr Blob kBlobs[] = {
    {1.60, 0.00, 0.0, 0.50, 0.28, 0.30},  // the body: wide, on the axis
    {0.55, 0.18, 0.3, 0.40, 0.06, 0.08},
    {0.40, 0.25, 2.1, 0.62, 0.04, 0.05},
    {0.30, 0.10, 4.0, 0.55, 0.09, 0.04},
    {0.25, 0.30, 5.2, 0.35, 0.03, 0.10},
};

}  // namespace

// One view: rows x cols floats, contiguous. Separable blobs, so the cost is a
// multiply-add per blob and pixel.
void make_projection(int view, int num_views, int cols, int rows, float* out) {
  const double angle = 2.0 * kPi * view / num_views;
  constexpr int kNumBlobs = sizeof(kBlobs) / sizeof(kBlobs[0]);
  std::vector<float> gu(static_cast<size_t>(kNumBlobs) * cols);
  std::vector<float> gv(static_cast<size_t>(kNumBlobs) * rows);
  for (int b = 0; b < kNumBlobs; ++b) {
    const Blob& blob = kBlobs[b];
    const double cu = cols * (0.5 + blob.orbit * std::sin(angle + blob.phase));
    const double cv = rows * blob.centre_v;
    const double su = blob.sigma_u * cols, sv = blob.sigma_v * rows;
    for (int u = 0; u < cols; ++u) {
      const double d = (u + 0.5 - cu) / su;
      gu[static_cast<size_t>(b) * cols + u] =
          static_cast<float>(blob.amplitude * std::exp(-0.5 * d * d));
    }
    for (int v = 0; v < rows; ++v) {
      const double d = (v + 0.5 - cv) / sv;
      gv[static_cast<size_t>(b) * rows + v] = static_cast<float>(std::exp(-0.5 * d * d));
    }
  }
  constexpr float kBase = 0.05f;      // never zero
  constexpr float kNoise = 0.004f;    // hash noise amplitude
  for (int v = 0; v < rows; ++v) {
    float* row = out + static_cast<size_t>(v) * cols;
    for (int u = 0; u < cols; ++u) row[u] = kBase;
    for (int b = 0; b < kNumBlobs; ++b) {
      const float wv = gv[static_cast<size_t>(b) * rows + v];
      if (wv < 1e-7f) continue;
      const float* g = &gu[static_cast<size_t>(b) * cols];
      for (int u = 0; u < cols; ++u) row[u] += wv * g[u];
    }
    for (int u = 0; u < cols; ++u) {
      const uint32_t h = hash3(static_cast<uint32_t>(view), static_cast<uint32_t>(v),
                               static_cast<uint32_t>(u) ^ 0x9e3779b9u);
      row[u] += kNoise * (static_cast<float>(h >> 8) * (1.0f / 16777216.0f));
    }
  }
}

}  // namespace fdk_bench
