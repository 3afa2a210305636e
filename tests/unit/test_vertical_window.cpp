// fdk_config.hann_cutoff_v (rtkfdk's --hannY): the window's padded length
// and cut as RTK rounds them, its kernel against a direct DFT in double,
// and the CPU backend's filtered view against the unwindowed one convolved
// down its columns with that kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "fdk/core/cpu_backend.hpp"
#include "fdk/core/error.hpp"
#include "fdk/core/reconstruction.hpp"
#include "fdk/core/vertical_window.hpp"
#include "small_scan.hpp"

namespace {

constexpr double kPi = 3.14159265358979323846;

// RTK's gain at bin j of n (j < n/2 + 1), written out from its definition.
double rtk_gain(int n, double cutoff, int j) {
  const long ncut = std::lround((n / 2 + 1) * cutoff);
  return j < ncut ? 0.5 * (1 + std::cos(kPi * j / static_cast<double>(ncut))) : 0.0;
}

// The circular spatial kernel of the window at lag d, by a direct inverse DFT.
double kernel(int n, double cutoff, int d) {
  double sum = 0;
  for (int j = 0; j < n; ++j) {
    const int folded = j <= n / 2 ? j : n - j;
    sum += rtk_gain(n, cutoff, folded) * std::cos(2 * kPi * j * d / n);
  }
  return sum / n;
}

TEST(VerticalWindow, PadsToAPowerOfTwoAndCutsAsRtk) {
  EXPECT_EQ(fdk::VerticalWindow(100, 0.5).padded_length(), 256);
  EXPECT_EQ(fdk::VerticalWindow(128, 0.5).padded_length(), 256);
  EXPECT_EQ(fdk::VerticalWindow(129, 0.5).padded_length(), 512);
  const fdk::VerticalWindow w(100, 0.5);  // ncut = round(129 * 0.5) = 65
  const auto& r = w.frequency_response();
  ASSERT_EQ(r.size(), 129u);
  EXPECT_FLOAT_EQ(r[0], 1.0f);
  EXPECT_GT(r[64], 0.0f);
  EXPECT_EQ(r[65], 0.0f);
  for (int j = 0; j < 129; ++j) EXPECT_NEAR(r[static_cast<size_t>(j)], rtk_gain(256, 0.5, j), 1e-7) << j;
  EXPECT_THROW(fdk::VerticalWindow(100, 0.0), fdk::Error);
  EXPECT_THROW(fdk::VerticalWindow(100, std::nan("")), fdk::Error);
}

TEST(VerticalWindow, ABrightRowBecomesTheKernel) {
  const int rows = 40, cols = 3, bright = 13;
  for (double cutoff : {1.0, 0.5, 0.2}) {
    const fdk::VerticalWindow w(rows, cutoff);
    std::vector<float> view(static_cast<size_t>(rows * cols), 0.0f);
    for (int c = 0; c < cols; ++c) view[static_cast<size_t>(bright * cols + c)] = 1.0f + c;
    w.filter_columns(view.data(), 0, cols, cols);
    const int n = w.padded_length();
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c)
        EXPECT_NEAR(view[static_cast<size_t>(r * cols + c)], (1.0 + c) * kernel(n, cutoff, r - bright), 2e-6)
            << "cutoff " << cutoff << " row " << r << " column " << c;
  }
}

// The CPU backend's filter, driven directly on a reconstruction's model.
struct Filtered {
  std::vector<float> view;
  int rows = 0, cols = 0;
};

Filtered filter_first_view(const fdk_config& config, const std::vector<float>& pixels, size_t pitch) {
  const fdk::ScanModel* model = nullptr;
  fdk::Backend* backend = nullptr;
  fdk::Reconstruction recon(config, [&](const fdk::ScanModel& m, const fdk::Settings& s) {
    auto b = fdk::make_cpu_backend(m, s.num_threads);
    model = &m;
    backend = b.get();
    return b;
  });
  Filtered f;
  f.cols = model->detector.size[0];
  f.rows = model->detector.size[1];
  f.view.assign(static_cast<size_t>(f.rows) * f.cols, 0.0f);
  backend->filter(*model, 0, model->views[0], pixels.data(), pitch, f.view.data(), 0);
  return f;
}

TEST(VerticalWindow, CpuBackendConvolvesTheFilteredViewDownItsColumns) {
  fdk_test::SmallScan scan(16, 4, 48);
  scan.config.detector.size[1] = 37;  // rows unlike columns, padded to 128
  std::vector<float> pixels(static_cast<size_t>(37 * 48), 0.0f);
  for (int c = 0; c < 48; ++c) pixels[static_cast<size_t>(20 * 48 + c)] = 1.0f;  // one bright row
  for (int r = 0; r < 37; ++r) pixels[static_cast<size_t>(r * 48 + 30)] += 0.5f;  // and a column
  const Filtered plain = filter_first_view(scan.config, pixels, 48 * sizeof(float));
  scan.config.hann_cutoff_v = 0.4;
  const Filtered windowed = filter_first_view(scan.config, pixels, 48 * sizeof(float));
  const int n = fdk::VerticalWindow(37, 0.4).padded_length();
  ASSERT_EQ(n, 128);
  double largest = 0, worst = 0;
  for (int r = 0; r < 37; ++r)
    for (int c = 0; c < 48; ++c) {
      double expected = 0;
      for (int s = 0; s < 37; ++s) expected += kernel(n, 0.4, r - s) * plain.view[static_cast<size_t>(s * 48 + c)];
      largest = std::max(largest, std::abs(expected));
      worst = std::max(worst, std::abs(expected - windowed.view[static_cast<size_t>(r * 48 + c)]));
    }
  EXPECT_GT(largest, 0.0);
  EXPECT_LT(worst, 1e-5 * largest);
  // And the window did something: the bright row spread to its neighbours.
  double changed = 0;
  for (size_t i = 0; i < plain.view.size(); ++i) changed = std::max(changed, double(std::abs(plain.view[i] - windowed.view[i])));
  EXPECT_GT(changed, 0.05 * largest);
}

}  // namespace
