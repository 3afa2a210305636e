// The CUDA backend's own ramp filter (our FFT, no cuFFT) against the CPU
// backend's (KissFFT), view by view: every padded length the planner
// chooses for detectors up to 65536 columns, then whole views with each
// window, truncation padding, a column offset and the window along v. Per
// row, the largest difference stays within 1e-5 of the row's peak (float32
// round-off; a wrong twiddle or butterfly misses by orders of magnitude).
// Skips, saying "skipped: no GPU", where no CUDA device is usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <cstdio>
#include <vector>

#include "device_resources.hpp"
#include "driver/context.hpp"
#include "fdk/core/cpu_backend.hpp"
#include "fdk/core/ramp_filter.hpp"
#include "filter/gpu_filter.hpp"

namespace {

using namespace fdk;

bool gpu_usable() {
  const cuda::DriverApi* d = cuda::driver();
  int count = 0;
  return d && d->cuDeviceGetCount(&count) == CUDA_SUCCESS && count > 0;
}

#define SKIP_WITHOUT_GPU() \
  if (!gpu_usable()) GTEST_SKIP() << "skipped: no GPU"

struct Case {
  int width = 64, rows = 3;
  int window = FDK_WINDOW_RAM_LAK;
  double cutoff = 1.0, padding = 0.0, hann_v = 0.0;
  int column_offset = 0;  // input narrower than the filtered detector
};

ScanModel model_of(const Case& c) {
  ScanModel m;
  m.detector.size[0] = c.width;
  m.detector.size[1] = c.rows;
  m.detector.spacing[0] = 0.8;
  m.detector.spacing[1] = 0.7;
  m.detector.origin[0] = -0.4 * (c.width - 1);
  m.detector.origin[1] = -0.35 * (c.rows - 1);
  m.input_detector = m.detector;
  m.input_detector.size[0] = c.width - c.column_offset;
  m.input_column_offset = c.column_offset;
  m.filter.width = c.width;
  m.filter.pixel_spacing = m.detector.spacing[0];
  m.filter.window = c.window;
  m.filter.cutoff = c.cutoff;
  m.filter.truncation_padding = c.padding;
  m.filter.hann_cutoff_v = c.hann_v;
  return m;
}

ViewGeometry view_geometry() {
  ViewGeometry g;
  g.rot = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  g.sid = 500;
  g.sdd = 800;
  g.poy = 3;
  return g;
}

// Largest |gpu - cpu| of each row over the row's peak |cpu|.
double worst_row_error(const Case& c, unsigned seed) {
  const ScanModel model = model_of(c);
  const ViewGeometry g = view_geometry();
  const int in_width = model.input_detector.size[0];
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(0.0f, 2.0f);
  cuda::DeviceScope scope(0);
  cuda::PinnedBuffer<float> pixels;
  pixels.resize(static_cast<size_t>(in_width) * c.rows);
  for (size_t i = 0; i < static_cast<size_t>(in_width) * c.rows; ++i) pixels.get()[i] = value(rng);

  std::vector<float> cpu(static_cast<size_t>(c.width) * c.rows);
  make_cpu_backend(model, 1)->filter(model, 0, g, pixels.get(), in_width * sizeof(float), cpu.data(), 0);

  cuda::Stream stream;
  cuda::GpuFilter filter(model, stream.get());
  // Rows padded apart on the device, as the backend keeps them.
  const size_t pitch = static_cast<size_t>(c.width) + 7;
  cuda::DeviceBuffer<float> out(pitch * c.rows);
  cuda::PinnedBuffer<float> gpu;
  gpu.resize(static_cast<size_t>(c.width) * c.rows);
  filter.run(model, g, pixels.get(), in_width * sizeof(float), {0, c.rows}, out.get(), pitch, gpu.get());

  double worst = 0;
  for (int j = 0; j < c.rows; ++j) {
    double peak = 0, diff = 0;
    for (int i = 0; i < c.width; ++i) {
      const size_t k = static_cast<size_t>(j) * c.width + i;
      peak = std::max(peak, std::fabs(static_cast<double>(cpu[k])));
      diff = std::max(diff, std::fabs(static_cast<double>(gpu.get()[k]) - cpu[k]));
    }
    worst = std::max(worst, peak > 0 ? diff / peak : diff);
  }
  return worst;
}

// m made of 2, 3 and 5 only.
bool smooth(int m) {
  for (int f : {2, 3, 5})
    while (m % f == 0) m /= f;
  return m == 1;
}

TEST(GpuFilter, EveryPaddedLengthMatchesTheCpuFilter) {
  SKIP_WITHOUT_GPU();
  // The planner pads a row of w to 2m with m >= w the next number made of
  // 2, 3 and 5 (KissFFT's fast real lengths): a width of m gives exactly
  // 2m, so these widths cover every length for detectors up to 65536
  // columns.
  int tested = 0, longest = 0;
  double worst = 0;
  for (int m = 1; m <= 65536; ++m) {
    if (!smooth(m) || m < 2) continue;
    RampFilterParams p;
    p.width = m;
    const int n = RampFilter(p).padded_length();
    ASSERT_EQ(n, 2 * m) << "the planner's lengths changed: update this test";
    Case c;
    c.width = m;
    c.rows = 3;  // odd: the last transform holds one row
    const double e = worst_row_error(c, static_cast<unsigned>(m));
    EXPECT_LE(e, 1e-5) << "width " << m << ", padded length " << n;
    worst = std::max(worst, e);
    longest = n;
    ++tested;
  }
  std::printf("%d padded lengths (up to %d), worst row error %.3g of the row's peak\n", tested, longest, worst);
}

TEST(GpuFilter, WholeViewsWithWindowsPaddingOffsetsAndTheWindowAlongV) {
  SKIP_WITHOUT_GPU();
  std::vector<Case> cases;
  for (int window : {FDK_WINDOW_RAM_LAK, FDK_WINDOW_SHEPP_LOGAN, FDK_WINDOW_COSINE, FDK_WINDOW_HAMMING,
                     FDK_WINDOW_HANN}) {
    Case c;
    c.width = 512;
    c.rows = 384;
    c.window = window;
    c.cutoff = window == FDK_WINDOW_RAM_LAK ? 1.0 : 0.8;
    cases.push_back(c);
  }
  Case padded;
  padded.width = 1000;
  padded.rows = 101;
  padded.padding = 0.5;
  cases.push_back(padded);
  Case offset;
  offset.width = 777;
  offset.rows = 64;
  offset.column_offset = 100;
  cases.push_back(offset);
  Case vertical;
  vertical.width = 301;
  vertical.rows = 257;
  vertical.hann_v = 0.6;
  cases.push_back(vertical);
  Case large;
  large.width = 4096;
  large.rows = 33;
  large.padding = 1.0;  // a length past shared memory: the global workspace
  cases.push_back(large);
  for (const Case& c : cases) {
    const double e = worst_row_error(c, 7);
    EXPECT_LE(e, 1e-5) << "width " << c.width << " rows " << c.rows << " window " << c.window << " padding "
                       << c.padding << " offset " << c.column_offset << " hann_v " << c.hann_v;
  }
}

}  // namespace
