// Raw frames to line integrals: dark/flat, clamping, bad pixels, crop,
// binning, flips, and the errors for unusable calibration frames.
#include <fdk/adapters/correction.hpp>
#include <fdk/adapters/error.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include "test_support.hpp"

using namespace fdk::adapters;
using fdk_adapter_test::what_of;

namespace {

Image constant_image(int w, int h, float v) {
  Image im;
  im.width = w;
  im.height = h;
  im.pixels.assign(static_cast<size_t>(w) * h, v);
  return im;
}

}  // namespace

TEST(FrameAverager, MeanAndSaturation) {
  FrameAverager a;
  const float f1[4] = {10, 20, 65535, 40};
  const float f2[4] = {30, 20, 100, 40};
  a.add(f1, 2, 2, 65535.0, "f1");
  a.add(f2, 2, 2, 65535.0, "f2");
  EXPECT_EQ(a.count(), 2);
  const Image m = a.mean();
  EXPECT_FLOAT_EQ(m.pixels[0], 20.0f);
  EXPECT_FLOAT_EQ(m.pixels[2], (65535.0f + 100.0f) / 2);
  EXPECT_EQ(a.saturated()[2], 1);
  EXPECT_EQ(a.saturated()[0], 0);
  const float f3[6] = {};
  const std::string msg = what_of([&] { a.add(f3, 3, 2, 65535.0, "odd.tif"); });
  EXPECT_NE(msg.find("odd.tif"), std::string::npos) << msg;
  EXPECT_NE(msg.find("3 x 2"), std::string::npos) << msg;
  const float nan[4] = {1, std::numeric_limits<float>::quiet_NaN(), 1, 1};
  const std::string msg2 = what_of([&] { a.add(nan, 2, 2, 65535.0, "nan.tif"); });
  EXPECT_NE(msg2.find("nan.tif"), std::string::npos) << msg2;
  EXPECT_NE(msg2.find("(1, 0)"), std::string::npos) << msg2;
}

TEST(Preprocessor, DarkFlatLog) {
  const int w = 4, h = 3;
  PreprocessOptions o;
  CalibrationFrames cal;
  cal.dark = constant_image(w, h, 100.0f);
  cal.flat = constant_image(w, h, 10100.0f);
  cal.flat.pixels[5] = 5100.0f;  // a pixel with half the gain
  Preprocessor p(w, h, o, cal);
  ASSERT_EQ(p.out_width(), w);
  ASSERT_EQ(p.out_height(), h);
  std::vector<float> raw(static_cast<size_t>(w) * h), out(raw.size()), scratch;
  for (size_t i = 0; i < raw.size(); ++i) raw[i] = 100.0f + 10000.0f * std::exp(-0.1f * i);
  raw[5] = 100.0f + 5000.0f * std::exp(-0.5f);
  EXPECT_EQ(p.process(raw.data(), w, out.data(), scratch), 0u);
  for (size_t i = 0; i < raw.size(); ++i) {
    const double expect = i == 5 ? 0.5 : 0.1 * i;
    EXPECT_NEAR(out[i], expect, 2e-5) << i;
  }
  // The uint16 entry point gives the same.
  std::vector<uint16_t> raw16(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) raw16[i] = static_cast<uint16_t>(std::lround(raw[i]));
  std::vector<float> out16(raw.size());
  p.process(raw16.data(), w, out16.data(), scratch);
  for (size_t i = 0; i < raw.size(); ++i) EXPECT_NEAR(out16[i], out[i], 1e-3);
}

TEST(Preprocessor, ClampsAndCounts) {
  PreprocessOptions o;
  o.i0 = 1000.0;
  o.min_transmission = 1e-3;
  Preprocessor p(3, 2, o, CalibrationFrames{});
  const float raw[6] = {1000, 0, -5, 0.5f, 500, 2000};
  float out[6];
  std::vector<float> scratch;
  EXPECT_EQ(p.process(raw, 3, out, scratch), 3u);  // 0, -5 and 0.5 (t = 5e-4)
  EXPECT_NEAR(out[0], 0.0, 1e-6);
  EXPECT_NEAR(out[1], -std::log(1e-3), 1e-4);
  EXPECT_NEAR(out[2], -std::log(1e-3), 1e-4);
  EXPECT_NEAR(out[3], -std::log(1e-3), 1e-4);
  EXPECT_NEAR(out[4], std::log(2.0), 1e-6);
  EXPECT_NEAR(out[5], -std::log(2.0), 1e-6);  // brighter than I0: negative, not clamped
}

TEST(Preprocessor, NonFiniteInputNamesThePixel) {
  PreprocessOptions o;
  o.raw = false;
  Preprocessor p(3, 2, o, CalibrationFrames{});
  float raw[6] = {1, 2, 3, 4, std::numeric_limits<float>::infinity(), 6};
  float out[6];
  std::vector<float> scratch;
  const std::string msg = what_of([&] { p.process(raw, 3, out, scratch); });
  EXPECT_NE(msg.find("pixel (1, 1)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("infinite"), std::string::npos) << msg;
}

TEST(Preprocessor, BadPixelsTakeTheMeanOfGoodNeighbours) {
  const int w = 5, h = 5;
  PreprocessOptions o;
  o.raw = false;
  CalibrationFrames cal;
  cal.bad_map.assign(w * h, 0);
  cal.bad_map[2 * w + 2] = 1;  // centre
  cal.bad_map[0] = 1;          // corner
  // A 3x3 dead block at the right edge... pixel (4,4) with neighbours (3,3),(3,4),(4,3) bad
  cal.bad_map[3 * w + 3] = cal.bad_map[3 * w + 4] = cal.bad_map[4 * w + 3] = 1;
  cal.bad_map[4 * w + 4] = 1;
  Preprocessor p(w, h, o, cal);
  EXPECT_EQ(p.report().bad_from_map, 6u);
  std::vector<float> raw(w * h), out(w * h), scratch;
  for (int i = 0; i < w * h; ++i) raw[i] = static_cast<float>(i);
  raw[2 * w + 2] = std::numeric_limits<float>::quiet_NaN();  // bad pixels may hold anything
  p.process(raw.data(), w, out.data(), scratch);
  // Centre: mean of its good neighbours ((3, 3) is bad too).
  EXPECT_FLOAT_EQ(out[2 * w + 2], (6.0f + 7 + 8 + 11 + 13 + 16 + 17) / 7.0f);
  // Corner (0,0): neighbours 1, 5, 6.
  EXPECT_FLOAT_EQ(out[0], (1.0f + 5.0f + 6.0f) / 3.0f);
  // (4,4): ring 1 all bad -> ring 2 good pixels: (2..4, 2) and (2, 2..4), minus the bad centre.
  const float ring2 = (raw[2 * w + 3] + raw[2 * w + 4] + raw[3 * w + 2] + raw[4 * w + 2]) / 4.0f;
  EXPECT_FLOAT_EQ(out[4 * w + 4], ring2);
}

TEST(Preprocessor, UnusableFlatFewArePatchedManyAreAnError) {
  const int w = 20, h = 10;
  PreprocessOptions o;
  CalibrationFrames cal;
  cal.dark = constant_image(w, h, 100.0f);
  cal.flat = constant_image(w, h, 5000.0f);
  cal.flat_name = "flat/";
  cal.flat.pixels[7] = 100.0f;  // dead: not above the dark
  {
    Preprocessor p(w, h, o, cal);
    EXPECT_EQ(p.report().flat_not_above_dark, 1u);
    EXPECT_EQ(p.report().bad_total, 1u);
  }
  cal.flat_saturated.assign(w * h, 0);
  cal.flat_saturated[50] = 1;
  {
    Preprocessor p(w, h, o, cal);
    EXPECT_EQ(p.report().flat_saturated, 1u);
    EXPECT_EQ(p.report().bad_total, 2u);
  }
  // A flat that is mostly zero (wrong file): an error naming it.
  for (int i = 0; i < 50; ++i) cal.flat.pixels[i] = 0.0f;
  const std::string msg = what_of([&] { Preprocessor p(w, h, o, cal); });
  EXPECT_NE(msg.find("flat field 'flat/'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not above the dark"), std::string::npos) << msg;
  EXPECT_NE(msg.find("saturated"), std::string::npos) << msg;
  EXPECT_NE(msg.find("pixel (0, 0)"), std::string::npos) << msg;
}

// A fraction of -1 used to fail every flat, good ones too, with a message
// about 0 unusable pixels and an undefined conversion of -1e6 to size_t in
// it; NaN passed every flat. Both are refused, naming the range.
TEST(Preprocessor, UnusableFractionOutsideZeroToOneIsRefused) {
  const int w = 8, h = 4;
  CalibrationFrames cal;
  cal.flat = constant_image(w, h, 5000.0f);
  cal.flat_name = "flat/";
  for (double fraction : {-1.0, std::numeric_limits<double>::quiet_NaN(), 1.5}) {
    SCOPED_TRACE(fraction);
    PreprocessOptions o;
    o.max_unusable_fraction = fraction;
    const std::string msg = what_of([&] { Preprocessor p(w, h, o, cal); });
    EXPECT_NE(msg.find("max_unusable_fraction"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[0, 1]"), std::string::npos) << msg;
  }
  PreprocessOptions o;
  for (double fraction : {0.0, 1.0}) {
    o.max_unusable_fraction = fraction;
    EXPECT_NO_THROW(Preprocessor(w, h, o, cal));
  }
}

TEST(Preprocessor, MismatchedCalibrationAndOptions) {
  PreprocessOptions o;
  CalibrationFrames cal;
  cal.dark = constant_image(4, 4, 0.0f);
  cal.dark_name = "dark.tif";
  cal.flat = constant_image(5, 4, 100.0f);
  cal.flat_name = "flat.tif";
  std::string msg = what_of([&] { Preprocessor p(5, 4, o, cal); });
  EXPECT_NE(msg.find("dark.tif"), std::string::npos) << msg;
  EXPECT_NE(msg.find("4 x 4"), std::string::npos) << msg;
  // Raw without flat or I0.
  msg = what_of([&] { Preprocessor p(5, 4, o, CalibrationFrames{}); });
  EXPECT_NE(msg.find("flat field"), std::string::npos) << msg;
  // Crop outside, binning too large.
  o.i0 = 100;
  o.crop = Region{4, 0, 3, 0};
  EXPECT_THROW(Preprocessor(5, 4, o, CalibrationFrames{}), Error);
  o.crop = Region{};
  o.bin_u = 6;
  EXPECT_THROW(Preprocessor(5, 4, o, CalibrationFrames{}), Error);
}

TEST(Preprocessor, CropBinFlipAndTheirGeometry) {
  const int w = 10, h = 8;
  PreprocessOptions o;
  o.raw = false;
  o.crop = Region{1, 2, 7, 5};  // columns 1..7, rows 2..6
  o.bin_u = 2;                  // 3 output columns (column 7 dropped)
  o.bin_v = 2;                  // 2 output rows (row 6 dropped)
  std::vector<float> raw(w * h), scratch;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) raw[y * w + x] = static_cast<float>(100 * y + x);
  }
  Preprocessor p(w, h, o, CalibrationFrames{});
  ASSERT_EQ(p.out_width(), 3);
  ASSERT_EQ(p.out_height(), 2);
  std::vector<float> out(6);
  p.process(raw.data(), w, out.data(), scratch);
  // Output (0,0): raw columns 1-2, rows 2-3 -> mean 250 + 1.5.
  EXPECT_FLOAT_EQ(out[0], 251.5f);
  EXPECT_FLOAT_EQ(out[2], 255.5f);
  EXPECT_FLOAT_EQ(out[3], 451.5f);

  fdk_detector raw_det{};
  raw_det.size[0] = w;
  raw_det.size[1] = h;
  raw_det.spacing[0] = 0.5;
  raw_det.spacing[1] = 0.25;
  raw_det.origin[0] = -2.25;
  raw_det.origin[1] = -0.875;
  fdk_detector d = p.processed_detector(raw_det);
  EXPECT_EQ(d.size[0], 3);
  EXPECT_EQ(d.size[1], 2);
  EXPECT_DOUBLE_EQ(d.spacing[0], 1.0);
  EXPECT_DOUBLE_EQ(d.spacing[1], 0.5);
  // Output column 0 = mean position of raw columns 1 and 2.
  EXPECT_DOUBLE_EQ(d.origin[0], -2.25 + 1.5 * 0.5);
  EXPECT_DOUBLE_EQ(d.origin[1], -0.875 + 2.5 * 0.25);

  // Flipped along u: output column 0 is the rightmost used block (raw 5-6),
  // and physically the flipped frame's first raw column is w-1-7 = 2.
  o.flip_u = true;
  Preprocessor pf(w, h, o, CalibrationFrames{});
  pf.process(raw.data(), w, out.data(), scratch);
  EXPECT_FLOAT_EQ(out[0], 255.5f);
  EXPECT_FLOAT_EQ(out[2], 251.5f);
  d = pf.processed_detector(raw_det);
  EXPECT_DOUBLE_EQ(d.origin[0], -2.25 + (10 - 1 - 6) * 0.5 + 0.25);
}

TEST(BadPixelList, ParsesAndChecks) {
  const auto map = parse_bad_pixel_list("# dead pixels\n1 2\n3, 0  # comment\n\n", 4, 3, "bp.txt");
  EXPECT_EQ(map[2 * 4 + 1], 1);
  EXPECT_EQ(map[3], 1);
  EXPECT_EQ(std::count(map.begin(), map.end(), 1), 2);
  EXPECT_NE(what_of([] { parse_bad_pixel_list("9 9\n", 4, 3, "bp.txt"); }).find("line 1"),
            std::string::npos);
  EXPECT_NE(what_of([] { parse_bad_pixel_list("1 2\nfoo\n", 4, 3, "bp.txt"); }).find("line 2"),
            std::string::npos);
}
