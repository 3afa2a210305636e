#include <fdk/core/error.hpp>
#include <fdk/core/ramp_filter.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

namespace {

constexpr double kPi = 3.14159265358979323846;

// du * h(n) with h the band-limited ramp of Kak & Slaney in physical units.
double analytic(long n, double du) {
  if (n == 0) return 0.25 / du;
  if (n % 2 == 0) return 0.0;
  const double d = kPi * static_cast<double>(n);
  return -1.0 / (d * d * du);
}

fdk::RampFilterParams params(int width, double du = 1.0, fdk_window window = FDK_WINDOW_RAM_LAK,
                             double cutoff = 1.0, double padding = 0.0) {
  fdk::RampFilterParams p;
  p.width = width;
  p.pixel_spacing = du;
  p.window = window;
  p.cutoff = cutoff;
  p.truncation_padding = padding;
  return p;
}

double window_formula(fdk_window w, double f, double fc) {
  if (f > fc) return 0.0;
  switch (w) {
    case FDK_WINDOW_RAM_LAK: return 1.0;
    case FDK_WINDOW_SHEPP_LOGAN: {
      const double x = f / (2 * fc);
      return x == 0 ? 1.0 : std::sin(kPi * x) / (kPi * x);
    }
    case FDK_WINDOW_COSINE: return std::cos(kPi * f / (2 * fc));
    case FDK_WINDOW_HAMMING: return 0.54 + 0.46 * std::cos(kPi * f / fc);
    case FDK_WINDOW_HANN: return 0.5 + 0.5 * std::cos(kPi * f / fc);
  }
  return -1;
}

std::vector<float> random_rows(int rows, int width, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(rows) * width);
  for (auto& x : v) x = dist(rng);
  return v;
}

bool only_factors_235(int n) {
  for (int f : {2, 3, 5})
    while (n % f == 0) n /= f;
  return n == 1;
}

TEST(RampFilter, PaddedLengthAvoidsWrapAndIsFastSize) {
  for (int width : {1, 7, 64, 100, 511}) {
    for (double pad : {0.0, 0.1, 0.5, 1.0}) {
      fdk::RampFilter f(params(width, 1.0, FDK_WINDOW_RAM_LAK, 1.0, pad));
      EXPECT_EQ(f.width(), width);
      EXPECT_EQ(f.pad_samples(), static_cast<int>(std::lround(pad * width)));
      const int n = f.padded_length();
      EXPECT_GE(n, 2 * (width + 2 * f.pad_samples()));
      EXPECT_EQ(n % 2, 0);
      EXPECT_TRUE(only_factors_235(n)) << n;
      EXPECT_EQ(f.frequency_response().size(), static_cast<size_t>(n / 2 + 1));
    }
  }
}

// An impulse must come back as du * h(n) at every lag a row holds, far tails
// included; a wrapped (circular) convolution would put h(1) at column 63.
TEST(RampFilter, RamLakImpulseResponseIsAnalyticKernel) {
  const int width = 64;
  for (double du : {1.0, 0.37}) {
    fdk::RampFilter f(params(width, du));
    for (int at : {0, 31, 63}) {
      std::vector<float> row(width, 0.0f);
      row[at] = 1.0f;
      f.filter_rows(row.data(), 1, width);
      for (int i = 0; i < width; ++i) {
        const double want = analytic(i - at, du);
        EXPECT_NEAR(row[i], want, 2e-7 / du) << "du " << du << " impulse " << at << " col " << i;
      }
    }
    std::vector<float> row(width, 0.0f);
    row[0] = 1.0f;
    f.filter_rows(row.data(), 1, width);
    EXPECT_NEAR(row[63] / analytic(63, du), 1.0, 0.02);  // tiny tail, but right
    EXPECT_GT(std::fabs(row[63] - analytic(1, du)), 0.09 / du);
  }
}

// The ramp in physical units: |nu| = f / du cycles per unit length.
TEST(RampFilter, RamLakResponseIsPhysicalRamp) {
  for (double du : {1.0, 0.25}) {
    fdk::RampFilter f(params(96, du));
    const auto& r = f.frequency_response();
    const int n = f.padded_length();
    for (size_t k = 0; k < r.size(); ++k) {
      const double ramp = static_cast<double>(k) / n / du;
      // Truncating the kernel to n samples costs about 2 / (pi^2 n) near DC.
      EXPECT_NEAR(r[k], ramp, 0.5 / n / du) << "bin " << k;
    }
    EXPECT_GT(r[0], 0.0f);  // the discrete band-limited kernel has a small DC term
  }
}

TEST(RampFilter, WindowsFollowTheirFormulas) {
  const int width = 80;
  const double du = 0.8;
  fdk::RampFilter ramlak(params(width, du));
  const auto& ref = ramlak.frequency_response();
  const int n = ramlak.padded_length();
  for (fdk_window w : {FDK_WINDOW_RAM_LAK, FDK_WINDOW_SHEPP_LOGAN, FDK_WINDOW_COSINE,
                       FDK_WINDOW_HAMMING, FDK_WINDOW_HANN}) {
    for (double cutoff : {1.0, 0.6, 0.25}) {
      fdk::RampFilter f(params(width, du, w, cutoff));
      ASSERT_EQ(f.padded_length(), n);
      const auto& r = f.frequency_response();
      const double fc = 0.5 * cutoff;
      int zeroed = 0;
      for (size_t k = 0; k < r.size(); ++k) {
        const double freq = static_cast<double>(k) / n;
        if (freq > fc) {
          EXPECT_EQ(r[k], 0.0f) << "window " << w << " cutoff " << cutoff << " bin " << k;
          ++zeroed;
        } else {
          const double want = ref[k] * window_formula(w, freq, fc);
          EXPECT_NEAR(r[k], want, 1e-6 * std::fabs(want) + 1e-9)
              << "window " << w << " cutoff " << cutoff << " bin " << k;
        }
      }
      if (cutoff < 1) {
        EXPECT_GT(zeroed, 0);
      } else {
        EXPECT_EQ(zeroed, 0);
      }
    }
  }
}

// Anchors independent of the formulas above: each window's value at fc.
TEST(RampFilter, WindowValuesAtCutoff) {
  const int width = 64;  // n = 128: bin 32 sits exactly at f = 0.25
  fdk::RampFilter ramlak(params(width));
  ASSERT_EQ(ramlak.padded_length(), 128);
  const float base = ramlak.frequency_response()[32];
  auto at_fc = [&](fdk_window w) {
    fdk::RampFilter f(params(width, 1.0, w, 0.5));
    return f.frequency_response()[32] / base;
  };
  EXPECT_NEAR(at_fc(FDK_WINDOW_RAM_LAK), 1.0, 1e-6);
  EXPECT_NEAR(at_fc(FDK_WINDOW_SHEPP_LOGAN), 2.0 / kPi, 1e-6);
  EXPECT_NEAR(at_fc(FDK_WINDOW_COSINE), 0.0, 1e-6);
  EXPECT_NEAR(at_fc(FDK_WINDOW_HAMMING), 0.08, 1e-6);
  EXPECT_NEAR(at_fc(FDK_WINDOW_HANN), 0.0, 1e-6);
}

// filter_rows must apply exactly frequency_response(), also when windowed.
TEST(RampFilter, FilteringMultipliesByTheResponse) {
  const int width = 50;
  fdk::RampFilter f(params(width, 1.3, FDK_WINDOW_HANN, 0.7));
  const auto& r = f.frequency_response();
  const int n = f.padded_length();
  const int at = 20;
  std::vector<float> row(width, 0.0f);
  row[at] = 1.0f;
  f.filter_rows(row.data(), 1, width);
  for (int i = 0; i < width; ++i) {
    double want = r[0];
    for (int k = 1; k < n / 2; ++k) want += 2.0 * r[k] * std::cos(2 * kPi * k * (i - at) / n);
    want += r[n / 2] * std::cos(kPi * (i - at));
    want /= n;
    EXPECT_NEAR(row[i], want, 1e-6) << "col " << i;
  }
}

// A constant row wider than the detector: zero padding makes the edges jump
// (cupping); extending with the tapered edge value flattens them.
TEST(RampFilter, TruncationPaddingFlattensTheEdges) {
  const int width = 128;
  auto edge_excess = [&](double padding) {
    fdk::RampFilter f(params(width, 1.0, FDK_WINDOW_RAM_LAK, 1.0, padding));
    std::vector<float> row(width, 1.0f);
    f.filter_rows(row.data(), 1, width);
    return row[0] - row[width / 2];
  };
  const double bare = edge_excess(0.0);
  const double padded = edge_excess(0.5);
  EXPECT_GT(bare, 0.05);
  EXPECT_LT(std::fabs(padded), 0.5 * bare);
}

TEST(RampFilter, RowsAreIndependentAndFilteringIsLinear) {
  const int width = 100, rows = 9;
  const size_t stride = 128;
  fdk::RampFilter f(params(width, 0.5, FDK_WINDOW_SHEPP_LOGAN, 0.9, 0.2));
  const auto x = random_rows(rows, width, 1);
  const auto y = random_rows(rows, width, 2);

  const float sentinel = 12345.0f;
  std::vector<float> together(rows * stride, sentinel);
  for (int r = 0; r < rows; ++r)
    std::memcpy(&together[r * stride], &x[r * width], width * sizeof(float));
  f.filter_rows(together.data(), rows, stride);

  for (int r = 0; r < rows; ++r) {
    std::vector<float> alone(x.begin() + r * width, x.begin() + (r + 1) * width);
    f.filter_rows(alone.data(), 1, width);
    EXPECT_EQ(0, std::memcmp(alone.data(), &together[r * stride], width * sizeof(float)))
        << "row " << r;
    for (size_t c = width; c < stride; ++c) EXPECT_EQ(together[r * stride + c], sentinel);
  }

  const float a = 2.5f, b = -0.75f;
  std::vector<float> fx = x, fy = y, mix(x.size());
  for (size_t i = 0; i < mix.size(); ++i) mix[i] = a * x[i] + b * y[i];
  f.filter_rows(fx.data(), rows, width);
  f.filter_rows(fy.data(), rows, width);
  f.filter_rows(mix.data(), rows, width);
  for (size_t i = 0; i < mix.size(); ++i) EXPECT_NEAR(mix[i], a * fx[i] + b * fy[i], 2e-5);
}

TEST(RampFilter, ConcurrentCallsGiveIdenticalResults) {
  const int width = 300, rows = 96, threads = 8, reps = 12;
  fdk::RampFilter f(params(width, 0.7, FDK_WINDOW_HAMMING, 1.0, 0.1));
  const auto input = random_rows(rows, width, 3);
  std::vector<float> reference = input;
  f.filter_rows(reference.data(), rows, width);

  // Released together so that the calls really overlap.
  std::atomic<bool> go{false};
  std::atomic<int> differing{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      while (!go.load()) std::this_thread::yield();
      for (int rep = 0; rep < reps; ++rep) {
        std::vector<float> work = input;
        f.filter_rows(work.data(), rows, width);
        if (std::memcmp(work.data(), reference.data(), work.size() * sizeof(float)) != 0)
          ++differing;
      }
    });
  go = true;
  for (auto& th : pool) th.join();
  EXPECT_EQ(differing.load(), 0);
}

void expect_invalid(const fdk::RampFilterParams& p) {
  try {
    fdk::RampFilter f(p);
    ADD_FAILURE() << "accepted invalid parameters";
  } catch (const fdk::Error& e) {
    EXPECT_EQ(e.code(), FDK_ERROR_INVALID_ARGUMENT) << e.what();
  }
}

TEST(RampFilter, RejectsInvalidParameters) {
  expect_invalid(params(0));
  expect_invalid(params(-3));
  expect_invalid(params(16, 0.0));
  expect_invalid(params(16, -1.0));
  expect_invalid(params(16, std::nan("")));
  expect_invalid(params(16, INFINITY));
  expect_invalid(params(16, 1.0, FDK_WINDOW_RAM_LAK, 0.0));
  expect_invalid(params(16, 1.0, FDK_WINDOW_RAM_LAK, 1.01));
  expect_invalid(params(16, 1.0, FDK_WINDOW_RAM_LAK, std::nan("")));
  expect_invalid(params(16, 1.0, FDK_WINDOW_RAM_LAK, 1.0, -0.1));
  expect_invalid(params(16, 1.0, FDK_WINDOW_RAM_LAK, 1.0, 1.5));
  auto bad_window = params(16);
  const int bad = 99;  // what a C caller may store; a C++ cast would be undefined
  std::memcpy(&bad_window.window, &bad, sizeof bad);
  expect_invalid(bad_window);

  fdk::RampFilter f(params(16));
  std::vector<float> row(16, 1.0f);
  EXPECT_THROW(f.filter_rows(nullptr, 1, 16), fdk::Error);
  EXPECT_THROW(f.filter_rows(row.data(), -1, 16), fdk::Error);
  EXPECT_THROW(f.filter_rows(row.data(), 2, 8), fdk::Error);
  EXPECT_NO_THROW(f.filter_rows(nullptr, 0, 16));
}

}  // namespace
