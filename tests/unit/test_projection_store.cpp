#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <fdk/core/error.hpp>
#include <fdk/core/float16_bits.hpp>
#include <fdk/core/projection_store.hpp>
#include <fdk/core/ramp_filter.hpp>
#include <fdk/core/thread_pool.hpp>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using fdk::CompressedView;
using fdk::ProjectionStore;

std::vector<float> random_image(int width, int height, float scale, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(static_cast<size_t>(width) * height);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Values a float32 store must keep bit for bit, scattered over the image.
std::vector<float> nasty_image(int width, int height, unsigned seed) {
  auto v = random_image(width, height, 1.0f, seed);
  const float specials[] = {0.0f,
                            -0.0f,
                            1e-40f,
                            -1.4e-45f,
                            std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::min(),
                            3e38f,
                            -std::numeric_limits<float>::max(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(),
                            -123456.789f};
  std::mt19937 rng(seed + 1);
  for (size_t i = 0; i < v.size(); i += 1 + rng() % 7) v[i] = specials[rng() % 12];
  return v;
}

// Smooth, like a filtered projection of an object: low-pass bumps, ramp filtered.
std::vector<float> smooth_filtered_image(int width, int height) {
  std::vector<float> v(static_cast<size_t>(width) * height);
  for (int j = 0; j < height; ++j)
    for (int i = 0; i < width; ++i) {
      const double x = (i - width / 2.0) / (width / 2.5), y = (j - height / 2.0) / (height / 2.5);
      const double r2 = x * x + y * y;
      v[static_cast<size_t>(j) * width + i] =
          static_cast<float>(r2 < 1 ? 40.0 * std::sqrt(1 - r2) + 5 * std::cos(3 * x) : 0.0);
    }
  fdk::RampFilterParams p;
  p.width = width;
  p.pixel_spacing = 0.5;
  p.window = FDK_WINDOW_HANN;
  fdk::RampFilter(p).filter_rows(v.data(), height, width);
  return v;
}

std::vector<float> read_all(const ProjectionStore& s, int view) {
  std::vector<float> out(static_cast<size_t>(s.width()) * s.height());
  s.read_rows(view, 0, s.height(), out.data());
  return out;
}

template <class F>
void expect_code(fdk_status code, F&& f) {
  try {
    f();
    ADD_FAILURE() << "no fdk::Error thrown";
  } catch (const fdk::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
  }
}

TEST(ProjectionStore, Float32RoundTripIsBitExact) {
  const int width = 37, height = 45;
  for (int band_rows : {16, 9, 7, 1, 45, 100}) {
    ProjectionStore store(width, height, 3, FDK_PRECISION_FLOAT32, band_rows);
    EXPECT_EQ(store.num_bands(), (height + band_rows - 1) / band_rows);
    std::vector<std::vector<float>> images;
    for (int v = 0; v < 3; ++v) {
      images.push_back(nasty_image(width, height, 10u * band_rows + v));
      CompressedView c = store.compress(images.back().data());
      ASSERT_EQ(c.num_bands(), static_cast<size_t>(store.num_bands()));
      store.commit(v, std::move(c));
    }
    for (int v = 0; v < 3; ++v) {
      const auto out = read_all(store, v);
      EXPECT_EQ(0, std::memcmp(out.data(), images[v].data(), out.size() * sizeof(float)))
          << "band_rows " << band_rows << " view " << v;
    }
  }
}

// The largest |value| of a view over all its rows, whichever band and sign
// holds it, in both precisions and with the bands coded on a pool.
TEST(ProjectionStore, KeepsEachViewsLargestMagnitude) {
  const int width = 37, height = 45;
  fdk::ThreadPool pool(3);
  for (fdk_precision precision : {FDK_PRECISION_FLOAT32, FDK_PRECISION_FLOAT16}) {
    ProjectionStore store(width, height, 3, precision, 8);
    for (int v = 0; v < 3; ++v) {
      auto image = random_image(width, height, 1.0f, 77u + v);
      // The peak in the last row of view 0, the first of view 1, mid-band
      // and negative in view 2.
      const size_t at = v == 0 ? image.size() - 3 : v == 1 ? 5 : static_cast<size_t>(20) * width + 11;
      image[at] = v == 2 ? -9.75f : 9.5f;
      store.commit(v, v == 1 ? store.compress(image.data(), &pool) : store.compress(image.data()));
      EXPECT_EQ(store.max_abs(v), v == 2 ? 9.75f : 9.5f) << "view " << v;
    }
  }
  ProjectionStore store(width, height, 3, FDK_PRECISION_FLOAT32);
  EXPECT_THROW(store.max_abs(1), fdk::Error);  // not stored
  EXPECT_THROW(store.max_abs(3), fdk::Error);  // out of range
}

// A view's bands lie back to back in one block, however they were coded
// (on the caller's thread, on a pool whose tasks each start at their worst
// case, only some rows), which is what keeps a scan's store from asking the
// system for memory once a band; and they read back the same bits.
TEST(ProjectionStore, AViewsBandsLieBackToBackInOneBlock) {
  const int width = 37, height = 83;  // 11 bands of 8 rows, the last of 3
  fdk::ThreadPool pool(3);
  const auto image = smooth_filtered_image(width, height);
  for (fdk_precision prec : {FDK_PRECISION_FLOAT32, FDK_PRECISION_FLOAT16}) {
    for (bool coded : {true, false}) {
      for (int how = 0; how < 3; ++how) {
        ProjectionStore store(width, height, 1, prec, 8);
        store.set_coded(coded);
        const std::array<int, 2> rows = how == 2 ? std::array<int, 2>{20, 61} : std::array<int, 2>{0, height};
        CompressedView c = store.compress(image.data(), how == 0 ? nullptr : &pool, prec, rows);
        const std::string what = std::string(prec == FDK_PRECISION_FLOAT32 ? "f32" : "f16") +
                                 (coded ? " coded" : " uncoded") + " case " + std::to_string(how);
        ASSERT_EQ(c.num_bands(), 11u) << what;
        const int first = rows[0] / 8, end = (rows[1] + 7) / 8;
        uint64_t sum = 0;
        for (int b = first; b < end; ++b) {
          ASSERT_FALSE(c.band(static_cast<size_t>(b)).empty()) << what << " band " << b;
          if (b > first) {
            EXPECT_EQ(c.band(static_cast<size_t>(b)).data,
                      c.band(static_cast<size_t>(b) - 1).data + c.band(static_cast<size_t>(b) - 1).size)
                << what << " band " << b;
          }
          sum += c.band(static_cast<size_t>(b)).size;
        }
        for (int b = 0; b < 11; ++b) {
          if (b < first || b >= end) {
            EXPECT_TRUE(c.band(static_cast<size_t>(b)).empty()) << what << " band " << b;
          }
        }
        EXPECT_EQ(c.bytes(), sum) << what;
        const CompressedView copy = c;
        EXPECT_EQ(copy.bytes(), sum) << what;
        store.commit(0, std::move(c));
        std::vector<float> out(static_cast<size_t>(width) * height);
        store.read_rows(0, first * 8, std::min(height, end * 8), out.data());
        std::vector<float> direct(out.size());
        ProjectionStore plain(width, height, 1, prec, 8);
        plain.commit(0, plain.compress(image.data()));
        plain.read_rows(0, first * 8, std::min(height, end * 8), direct.data());
        EXPECT_EQ(0, std::memcmp(out.data(), direct.data(), out.size() * sizeof(float))) << what;
        if (prec == FDK_PRECISION_FLOAT32) {  // and float32 is the image itself
          const size_t from = static_cast<size_t>(first) * 8 * width;
          const size_t count = static_cast<size_t>(std::min(height, end * 8) - first * 8) * width;
          EXPECT_EQ(0, std::memcmp(out.data(), image.data() + from, count * sizeof(float))) << what;
        }
      }
    }
  }
}

TEST(ProjectionStore, SubRangesMatchTheirRows) {
  const int width = 23, height = 50;
  for (fdk_precision prec : {FDK_PRECISION_FLOAT32, FDK_PRECISION_FLOAT16}) {
    ProjectionStore store(width, height, 1, prec, 8);
    const auto image = random_image(width, height, 3.0f, 5);
    store.commit(0, store.compress(image.data()));
    const auto whole = read_all(store, 0);

    std::mt19937 rng(9);
    std::vector<std::pair<int, int>> ranges = {{0, 0}, {0, 1}, {7, 9}, {8, 16}, {15, 17},
                                               {49, 50}, {48, 50}, {0, 50}, {50, 50}};
    for (int k = 0; k < 40; ++k) {
      int a = static_cast<int>(rng() % 51), b = static_cast<int>(rng() % 51);
      ranges.emplace_back(std::min(a, b), std::max(a, b));
    }
    for (auto [r0, r1] : ranges) {
      const float guard = -777.0f;
      std::vector<float> out(static_cast<size_t>(r1 - r0 + 1) * width, guard);
      store.read_rows(0, r0, r1, out.data());
      EXPECT_EQ(0, std::memcmp(out.data(), &whole[static_cast<size_t>(r0) * width],
                               static_cast<size_t>(r1 - r0) * width * sizeof(float)))
          << "rows [" << r0 << ", " << r1 << ")";
      for (int i = 0; i < width; ++i)  // nothing written past the range
        EXPECT_EQ(out[static_cast<size_t>(r1 - r0) * width + i], guard);
    }
  }
}

void expect_float16_bound(const std::vector<float>& exact, const std::vector<float>& got,
                          int width, int band_rows) {
  const size_t band_size = static_cast<size_t>(width) * band_rows;
  size_t inexact = 0;
  for (size_t b0 = 0; b0 < exact.size(); b0 += band_size) {
    const size_t b1 = std::min(exact.size(), b0 + band_size);
    double maxabs = 0;
    for (size_t i = b0; i < b1; ++i) maxabs = std::max(maxabs, std::fabs(double(exact[i])));
    for (size_t i = b0; i < b1; ++i) {
      const double err = std::fabs(double(got[i]) - double(exact[i]));
      const double bound = ProjectionStore::kFloat16RelBound * std::fabs(double(exact[i])) +
                           ProjectionStore::kFloat16AbsBoundFactor * maxabs;
      ASSERT_LE(err, bound) << "sample " << i << " exact " << exact[i] << " got " << got[i];
      if (exact[i] == 0.0f) {
        ASSERT_EQ(got[i], 0.0f);
      }
      if (err > 0) ++inexact;
    }
  }
  EXPECT_GT(inexact, 0u);  // it really is 16-bit
}

// Uncoded (a scan that fits its budget as it is): every view takes its
// worst case, and reads back as the coded store does, bit for bit, in both
// precisions, whole or by row ranges.
TEST(ProjectionStore, UncodedViewsReadBackAsCodedOnes) {
  const int width = 37, height = 45;
  for (fdk_precision precision : {FDK_PRECISION_FLOAT32, FDK_PRECISION_FLOAT16}) {
    for (int band_rows : {16, 7, 1}) {
      ProjectionStore coded(width, height, 2, precision, band_rows), plain(width, height, 2, precision, band_rows);
      plain.set_coded(false);
      EXPECT_TRUE(coded.coded());
      EXPECT_FALSE(plain.coded());
      for (int v = 0; v < 2; ++v) {
        // Non-finite values only where the store is exact (float16 rejects them).
        const auto image = v == 1                                  ? smooth_filtered_image(width, height)
                           : precision == FDK_PRECISION_FLOAT32 ? nasty_image(width, height, 3u + band_rows)
                                                                : random_image(width, height, 5.0f, 3u + band_rows);
        coded.commit(v, coded.compress(image.data()));
        plain.commit(v, plain.compress(image.data()));
        const float ma = plain.max_abs(v), mb = coded.max_abs(v);
        EXPECT_EQ(0, std::memcmp(&ma, &mb, sizeof ma));
        const auto a = read_all(coded, v), b = read_all(plain, v);
        EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float))) << "view " << v;
        if (precision == FDK_PRECISION_FLOAT32) {
          EXPECT_EQ(0, std::memcmp(b.data(), image.data(), b.size() * sizeof(float)));
        }
        std::vector<float> rows(static_cast<size_t>(width) * 5);
        plain.read_rows(v, 20, 25, rows.data());
        EXPECT_EQ(0, std::memcmp(rows.data(), a.data() + 20 * width, rows.size() * sizeof(float)));
      }
      EXPECT_EQ(plain.stored_bytes(), 2 * plain.worst_case_view_bytes());
      EXPECT_LT(coded.stored_bytes(), plain.stored_bytes());  // the smooth view codes smaller
    }
  }
}

TEST(ProjectionStore, Float16WithinDocumentedBound) {
  const int width = 64, height = 40, band_rows = 16;
  for (float scale : {1e-30f, 1e-6f, 1.0f, 1e6f, 1e30f}) {
    ProjectionStore store(width, height, 1, FDK_PRECISION_FLOAT16, band_rows);
    auto image = random_image(width, height, scale, 11);
    std::mt19937 rng(12);
    for (size_t i = 0; i < image.size(); i += 1 + rng() % 5) image[i] = 0.0f;
    // Bands of very different magnitude, and small values next to big ones.
    for (int i = 0; i < width; ++i) image[static_cast<size_t>(20 * width + i)] *= 1e-3f;
    image[5] = scale * 1e-7f;
    store.commit(0, store.compress(image.data()));
    expect_float16_bound(image, read_all(store, 0), width, band_rows);
    // Random data does not compress: 2 bytes per sample plus small headers.
    EXPECT_LT(store.stored_bytes(), store.raw_bytes() / 2 + 64 * store.num_bands());
  }
}

TEST(ProjectionStore, Float16HandlesTheEdgesOfTheFloatRange) {
  const int width = 32, height = 4;
  std::vector<float> image(static_cast<size_t>(width) * height, 0.0f);
  const float big = std::numeric_limits<float>::max();
  for (int i = 0; i < width; ++i) {
    image[i] = (i % 2 ? -big : big) * (1.0f - static_cast<float>(i) / 1024);  // row 0: huge
    image[width + i] = std::numeric_limits<float>::denorm_min() * static_cast<float>(i);  // tiny
    image[2 * width + i] = std::numeric_limits<float>::min() * (1.0f + i / 7.0f);
    image[3 * width + i] = (i == 3) ? 1.0f : 1e-38f * i;  // tiny next to 1
  }
  ProjectionStore store(width, height, 1, FDK_PRECISION_FLOAT16, 1);
  store.commit(0, store.compress(image.data()));
  const auto out = read_all(store, 0);
  for (float x : out) EXPECT_TRUE(std::isfinite(x));
  expect_float16_bound(image, out, width, 1);

  std::vector<float> bad = image;
  bad[7] = std::numeric_limits<float>::quiet_NaN();
  expect_code(FDK_ERROR_INVALID_ARGUMENT, [&] { (void)store.compress(bad.data()); });
}

// Views that take every coding path of a band: smooth filtered rows with
// random low mantissa bytes (the realistic case), noise-free smooth rows,
// rows of exact zeros, constant rows and rows of random bits (which nothing
// shrinks). Each band of `band_rows` gets one kind, in turn, so the last,
// shorter band gets one too.
std::vector<float> mixed_image(int width, int height, int band_rows, unsigned seed) {
  auto smooth = smooth_filtered_image(width, height);
  std::mt19937 rng(seed);
  std::vector<float> v(smooth.size());
  for (int j = 0; j < height; ++j) {
    const int kind = static_cast<int>((j / band_rows + seed) % 5);
    for (int i = 0; i < width; ++i) {
      const size_t k = static_cast<size_t>(j) * width + i;
      uint32_t bits;
      std::memcpy(&bits, &smooth[k], sizeof bits);
      switch (kind) {
        case 0: bits = (bits & 0xFFFF0000u) | (rng() & 0xFFFFu); break;  // noisy low bytes
        case 1: break;                                                 // noise-free
        case 2: bits = 0; break;                                       // zeros
        case 3: bits = 0x3F8CCCCDu; break;                             // 1.1f everywhere
        default: bits = static_cast<uint32_t>(rng()); break;           // random bits
      }
      std::memcpy(&v[k], &bits, sizeof bits);
    }
  }
  return v;
}

// Random finite floats over the whole exponent range: nothing compresses.
std::vector<float> incompressible_image(int width, int height, bool finite, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<float> v(static_cast<size_t>(width) * height);
  for (auto& x : v) {
    uint32_t bits = static_cast<uint32_t>(rng());
    if (finite && (bits & 0x7F800000u) == 0x7F800000u) bits ^= 0x40000000u;
    std::memcpy(&x, &bits, sizeof x);
  }
  return v;
}

// Every band's coding (noisy low bytes stored as they are, noise-free planes
// coded as vertical differences, zeros, constants, random bits stored raw)
// must give back every bit, with odd widths and a last band shorter than
// the others.
TEST(ProjectionStore, Float32EveryBandCodingIsBitExact) {
  for (int width : {1, 7, 37, 129, 1023}) {
    for (int band_rows : {16, 5}) {
      const int height = 3 * band_rows + band_rows / 2 + 1;  // last band shorter
      ProjectionStore store(width, height, 5, FDK_PRECISION_FLOAT32, band_rows);
      for (int v = 0; v < 5; ++v) {
        const auto image = mixed_image(width, height, band_rows, static_cast<unsigned>(v));
        CompressedView c = store.compress(image.data());
        ASSERT_LE(c.bytes(), store.worst_case_view_bytes());
        store.commit(v, std::move(c));
        const auto out = read_all(store, v);
        ASSERT_EQ(0, std::memcmp(out.data(), image.data(), out.size() * sizeof(float)))
            << "width " << width << " band_rows " << band_rows << " view " << v;
        // Row ranges that start and end inside bands read the same bits.
        const int r0 = band_rows / 2, r1 = height - 1;
        std::vector<float> part(static_cast<size_t>(r1 - r0) * width);
        store.read_rows(v, r0, r1, part.data());
        ASSERT_EQ(0, std::memcmp(part.data(), &image[static_cast<size_t>(r0) * width],
                                 part.size() * sizeof(float)));
      }
    }
  }
}

// Realistic filtered data must compress (the sign/exponent byte), raw bands
// must be used where nothing shrinks, and flat bands must shrink to almost
// nothing.
TEST(ProjectionStore, Float32BandsCompressWhereTheyCan) {
  const int width = 256, band_rows = 16, height = 5 * band_rows;
  ProjectionStore store(width, height, 1, FDK_PRECISION_FLOAT32, band_rows);
  const auto image = mixed_image(width, height, band_rows, 0);
  const CompressedView c = store.compress(image.data());
  const size_t raw_band = static_cast<size_t>(width) * band_rows * 4;
  ASSERT_EQ(c.num_bands(), 5u);
  EXPECT_LT(c.band(0).size, raw_band * 0.9) << "noisy low bytes";
  EXPECT_LT(c.band(1).size, raw_band * 0.8) << "noise-free";
  EXPECT_LT(c.band(2).size, raw_band / 50) << "zeros";
  EXPECT_LT(c.band(3).size, raw_band / 50) << "constant";
  EXPECT_EQ(c.band(4).size, raw_band + 1) << "random bits: raw, one header byte";
}

TEST(ProjectionStore, Float16EveryBandCodingIsWithinBound) {
  for (int width : {1, 37, 1023}) {
    const int band_rows = 16, height = 5 * band_rows + 3;
    ProjectionStore store(width, height, 5, FDK_PRECISION_FLOAT16, band_rows);
    for (int v = 0; v < 5; ++v) {
      auto image = mixed_image(width, height, band_rows, static_cast<unsigned>(v));
      for (auto& x : image)  // float16 takes finite values only
        if (!std::isfinite(x)) x = 1.0f;
      CompressedView c = store.compress(image.data());
      ASSERT_LE(c.bytes(), store.worst_case_view_bytes());
      store.commit(v, std::move(c));
      expect_float16_bound(image, read_all(store, v), width, band_rows);
    }
  }
}

// The GPU rounds a filtered view itself before a float16 store keeps it
// (fdk_round_store_bands, from float16_bits.hpp), so that a slab
// backprojected from views on the GPU has the bits of one from the store:
// the shared rounding must give the bits the store reads back, band by
// band, and a view so rounded must be stored unchanged, with the same
// largest magnitude (a slab's packing scale). Over every coding path, the
// edges of the float range and a last band shorter than the others.
TEST(ProjectionStore, Float16StoresTheSharedRoundingsBits) {
  namespace bits = fdk::float16_bits;
  const int width = 37, band_rows = 16, height = 5 * band_rows + 3;
  std::vector<std::vector<float>> images;
  for (unsigned seed : {0u, 1u, 2u}) images.push_back(mixed_image(width, height, band_rows, seed));
  images.push_back(incompressible_image(width, height, true, 5u));
  auto edges = random_image(width, height, 1.0f, 9u);
  for (int i = 0; i < width; ++i) {
    edges[static_cast<size_t>(i)] = std::numeric_limits<float>::max() * (i % 2 ? -0.75f : 1.0f);
    edges[static_cast<size_t>(band_rows) * width + i] = std::numeric_limits<float>::denorm_min() * i;
    edges[static_cast<size_t>(2 * band_rows) * width + i] = i == 3 ? 1.0f : 1e-38f * i;
  }
  images.push_back(edges);
  ProjectionStore store(width, height, 2 * static_cast<int>(images.size()), FDK_PRECISION_FLOAT16, band_rows);
  int view = 0;
  for (auto& image : images) {
    for (auto& x : image)  // float16 takes finite values only
      if (!std::isfinite(x)) x = 1.0f;
    std::vector<float> rounded = image;
    for (int row0 = 0; row0 < height; row0 += band_rows) {
      float* band = rounded.data() + static_cast<size_t>(row0) * width;
      const size_t n = static_cast<size_t>(std::min(band_rows, height - row0)) * width;
      uint32_t max_bits = 0;
      for (size_t i = 0; i < n; ++i) max_bits = std::max(max_bits, bits::float_bits(band[i]) & 0x7FFFFFFFu);
      const int e = bits::band_exponent_of(max_bits);
      const bits::Pow2 down(-e), up(e);
      for (size_t i = 0; i < n; ++i) band[i] = bits::stored_value(band[i], down, up);
    }
    store.commit(view, store.compress(image.data()));
    store.commit(view + 1, store.compress(rounded.data()));
    const auto read = read_all(store, view), read_rounded = read_all(store, view + 1);
    EXPECT_EQ(std::memcmp(read.data(), rounded.data(), read.size() * sizeof(float)), 0) << "image " << view / 2;
    EXPECT_EQ(std::memcmp(read_rounded.data(), rounded.data(), read.size() * sizeof(float)), 0)
        << "image " << view / 2 << " rounded twice";
    const float peak = *std::max_element(rounded.begin(), rounded.end(),
                                         [](float a, float b) { return std::fabs(a) < std::fabs(b); });
    EXPECT_EQ(store.max_abs(view + 1), std::fabs(peak)) << "image " << view / 2;
    view += 2;
  }
}

// The memory budget reserves worst_case_view_bytes() per view in flight: no
// view may exceed it, whatever its data and shape.
TEST(ProjectionStore, WorstCaseBoundsIncompressibleViews) {
  struct Shape {
    int width, height, band_rows;
  };
  for (Shape sh : {Shape{1, 1, 16}, Shape{1, 40, 16}, Shape{40, 1, 16}, Shape{33, 47, 16},
                   Shape{64, 64, 1}, Shape{257, 35, 100}, Shape{1024, 40, 16}}) {
    for (fdk_precision prec : {FDK_PRECISION_FLOAT32, FDK_PRECISION_FLOAT16}) {
      ProjectionStore store(sh.width, sh.height, 1, prec, sh.band_rows);
      const bool finite = prec == FDK_PRECISION_FLOAT16;
      const auto image = incompressible_image(sh.width, sh.height, finite, 3u * sh.width + sh.height);
      const CompressedView c = store.compress(image.data());
      EXPECT_LE(c.bytes(), store.worst_case_view_bytes())
          << sh.width << " x " << sh.height << " precision " << prec;
      const uint64_t raw = uint64_t(sh.width) * sh.height * (finite ? 2 : 4);
      EXPECT_GE(store.worst_case_view_bytes(), raw);
      EXPECT_LE(store.worst_case_view_bytes(), raw + 3u * store.num_bands());
      store.commit(0, CompressedView(c));
      if (!finite) {
        const auto out = read_all(store, 0);
        EXPECT_EQ(0, std::memcmp(out.data(), image.data(), out.size() * sizeof(float)));
      }
    }
  }
}

TEST(ProjectionStore, SmoothImagesCompress) {
  const int width = 256, height = 96;
  const auto image = smooth_filtered_image(width, height);
  for (fdk_precision prec : {FDK_PRECISION_FLOAT32, FDK_PRECISION_FLOAT16}) {
    ProjectionStore store(width, height, 2, prec);
    CompressedView c = store.compress(image.data());
    const uint64_t bytes = c.bytes();
    store.commit(1, std::move(c));
    EXPECT_EQ(store.stored_bytes(), bytes);
    EXPECT_EQ(store.raw_bytes(), uint64_t(width) * height * 4);
    EXPECT_EQ(store.views_stored(), 1);
    const double ratio = double(store.raw_bytes()) / double(store.stored_bytes());
    EXPECT_GT(ratio, prec == FDK_PRECISION_FLOAT32 ? 1.0 : 2.0) << "precision " << prec;
    if (prec == FDK_PRECISION_FLOAT32) {
      const auto out = read_all(store, 1);
      EXPECT_EQ(0, std::memcmp(out.data(), image.data(), out.size() * sizeof(float)));
    }
  }
}

TEST(ProjectionStore, CorruptBandsThrowInternal) {
  const int width = 128, height = 32;
  const auto image = smooth_filtered_image(width, height);
  for (fdk_precision prec : {FDK_PRECISION_FLOAT32, FDK_PRECISION_FLOAT16}) {
    ProjectionStore proto(width, height, 1, prec, 16);
    const CompressedView good = proto.compress(image.data());
    ASSERT_EQ(good.band(0)[0], 0) << "expected a zstd band";
    const size_t hdr = prec == FDK_PRECISION_FLOAT16 ? 3 : 1;

    std::vector<CompressedView> bad(6, good);
    for (size_t i = hdr + 8; i < bad[0].band(0).size; i += 5) bad[0].band_bytes(0)[i] ^= 0x5A;
    bad[1].truncate_band(0, bad[1].band(0).size / 2);  // truncated
    bad[2].band_bytes(0)[0] = 7;                       // unknown kind
    bad[3].truncate_band(0, 0);                        // no header
    bad[4].band_bytes(0)[0] = 1;                       // "raw" of the wrong size
    bad[5].band_bytes(0)[bad[5].band(0).size - 1] ^= 0x01;  // checksum mismatch
    for (size_t k = 0; k < bad.size(); ++k) {
      ProjectionStore store(width, height, 1, prec, 16);
      store.commit(0, std::move(bad[k]));
      std::vector<float> out(static_cast<size_t>(width) * height);
      expect_code(FDK_ERROR_INTERNAL, [&] { store.read_rows(0, 0, 16, out.data()); });
      // The intact band still reads.
      store.read_rows(0, 16, 32, out.data());
      if (prec == FDK_PRECISION_FLOAT32) {
        EXPECT_EQ(0, std::memcmp(out.data(), &image[16 * width], 16 * width * sizeof(float)))
            << "case " << k;
      }
    }
  }
  ProjectionStore store(width, height, 1, FDK_PRECISION_FLOAT16, 16);
  CompressedView c = store.compress(image.data());
  c.band_bytes(0)[2] = 0x7F;  // exponent 2^(0x7Fxx): not a float scale
  store.commit(0, std::move(c));
  std::vector<float> out(static_cast<size_t>(width) * 16);
  expect_code(FDK_ERROR_INTERNAL, [&] { store.read_rows(0, 0, 16, out.data()); });
}

TEST(ProjectionStore, RejectsInvalidUse) {
  const int width = 8, height = 10;
  ProjectionStore store(width, height, 4, FDK_PRECISION_FLOAT32, 4);
  const auto image = random_image(width, height, 1.0f, 2);
  std::vector<float> out(static_cast<size_t>(width) * height);

  store.commit(2, store.compress(image.data()));
  EXPECT_TRUE(store.has(2));
  EXPECT_FALSE(store.has(1));
  EXPECT_FALSE(store.has(-1));
  EXPECT_FALSE(store.has(4));
  const uint64_t bytes = store.stored_bytes();
  expect_code(FDK_ERROR_DUPLICATE, [&] { store.commit(2, store.compress(image.data())); });
  EXPECT_EQ(store.views_stored(), 1);
  EXPECT_EQ(store.stored_bytes(), bytes);

  expect_code(FDK_ERROR_OUT_OF_RANGE, [&] { store.commit(4, store.compress(image.data())); });
  expect_code(FDK_ERROR_OUT_OF_RANGE, [&] { store.commit(-1, store.compress(image.data())); });
  expect_code(FDK_ERROR_INVALID_ARGUMENT, [&] { store.commit(0, CompressedView{}); });
  expect_code(FDK_ERROR_INVALID_ARGUMENT, [&] { (void)store.compress(nullptr); });

  expect_code(FDK_ERROR_OUT_OF_RANGE, [&] { store.read_rows(4, 0, 1, out.data()); });
  expect_code(FDK_ERROR_OUT_OF_RANGE, [&] { store.read_rows(-1, 0, 1, out.data()); });
  expect_code(FDK_ERROR_OUT_OF_RANGE, [&] { store.read_rows(2, -1, 1, out.data()); });
  expect_code(FDK_ERROR_OUT_OF_RANGE, [&] { store.read_rows(2, 0, 11, out.data()); });
  expect_code(FDK_ERROR_OUT_OF_RANGE, [&] { store.read_rows(2, 5, 4, out.data()); });
  expect_code(FDK_ERROR_INVALID_ARGUMENT, [&] { store.read_rows(2, 0, 1, nullptr); });
  expect_code(FDK_ERROR_INVALID_STATE, [&] { store.read_rows(1, 0, 1, out.data()); });

  expect_code(FDK_ERROR_INVALID_ARGUMENT, [] { ProjectionStore(0, 4, 1, FDK_PRECISION_FLOAT32); });
  expect_code(FDK_ERROR_INVALID_ARGUMENT, [] { ProjectionStore(4, 0, 1, FDK_PRECISION_FLOAT32); });
  expect_code(FDK_ERROR_INVALID_ARGUMENT, [] { ProjectionStore(4, 4, 0, FDK_PRECISION_FLOAT32); });
  expect_code(FDK_ERROR_INVALID_ARGUMENT,
              [] { ProjectionStore(4, 4, 1, FDK_PRECISION_FLOAT32, 0); });
  // An out-of-range precision cannot be passed by value without undefined
  // behaviour, so it is left to config validation, before any store exists.
}

// Writers commit views while readers poll: a present view must always read
// back exactly, an absent one must fail cleanly.
TEST(ProjectionStore, ConcurrentCommitsAndReads) {
  const int width = 48, height = 40, views = 96, writers = 4, readers = 4;
  ProjectionStore store(width, height, views, FDK_PRECISION_FLOAT32, 6);
  auto image_of = [&](int v) { return random_image(width, height, 1.0f + v, 100u + v); };

  std::atomic<uint64_t> committed_bytes{0};
  std::atomic<bool> done{false};
  std::atomic<int> mismatches{0}, good_reads{0}, unexpected{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w)
    threads.emplace_back([&, w] {
      for (int v = w; v < views; v += writers) {
        const auto img = image_of(v);
        CompressedView c = store.compress(img.data());
        committed_bytes += c.bytes();
        store.commit(v, std::move(c));
      }
    });
  for (int r = 0; r < readers; ++r)
    threads.emplace_back([&, r] {
      std::mt19937 rng(77 + r);
      std::vector<float> out(static_cast<size_t>(width) * height);
      while (!done.load()) {
        const int v = static_cast<int>(rng() % views);
        const int r0 = static_cast<int>(rng() % height);
        const int r1 = r0 + 1 + static_cast<int>(rng() % (height - r0));
        try {
          store.read_rows(v, r0, r1, out.data());
          const auto img = image_of(v);
          if (std::memcmp(out.data(), &img[static_cast<size_t>(r0) * width],
                          static_cast<size_t>(r1 - r0) * width * sizeof(float)) != 0)
            ++mismatches;
          ++good_reads;
        } catch (const fdk::Error& e) {
          if (e.code() != FDK_ERROR_INVALID_STATE) ++unexpected;
        }
      }
    });
  for (int w = 0; w < writers; ++w) threads[w].join();
  done = true;
  for (size_t t = writers; t < threads.size(); ++t) threads[t].join();

  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(unexpected.load(), 0);
  EXPECT_EQ(store.views_stored(), views);
  EXPECT_EQ(store.stored_bytes(), committed_bytes.load());
  EXPECT_EQ(store.raw_bytes(), uint64_t(views) * width * height * 4);
  for (int v = 0; v < views; ++v) {
    ASSERT_TRUE(store.has(v));
    const auto img = image_of(v);
    EXPECT_EQ(0, std::memcmp(read_all(store, v).data(), img.data(), img.size() * sizeof(float)));
  }
}

}  // namespace
