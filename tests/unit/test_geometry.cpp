// Geometry and weights of the core against RTK's definitions.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>

#include "fdk/core/error.hpp"
#include "fdk/core/geometry.hpp"
#include "fdk/core/weights.hpp"

namespace {
constexpr double kPi = 3.14159265358979323846;

fdk_view random_view(std::mt19937& rng) {
  std::uniform_real_distribution<double> angle(-180, 540), small(-20, 20), tilt(-10, 10);
  fdk_view v{};
  v.gantry_angle_deg = angle(rng);
  v.sid = 800 + small(rng) * 10;
  v.sdd = 1200 + small(rng) * 10;
  v.source_offset_x = small(rng);
  v.source_offset_y = small(rng);
  v.projection_offset_x = small(rng) * 3;
  v.projection_offset_y = small(rng) * 3;
  v.in_plane_angle_deg = tilt(rng);
  v.out_of_plane_angle_deg = tilt(rng);
  return v;
}
}  // namespace

TEST(Geometry, MatrixDecompositionRecoversRtkParameters) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const fdk::ViewGeometry g = fdk::view_from_parameters(random_view(rng));
    auto m = fdk::rtk_matrix(g);
    const double scale = (trial % 2 ? -3.5 : 0.25);  // any non-zero scale
    for (double& x : m) x *= scale;
    const fdk::ViewGeometry back = fdk::view_from_matrix(m.data());
    for (int i = 0; i < 9; ++i) EXPECT_NEAR(back.rot[i], g.rot[i], 1e-9);
    EXPECT_NEAR(back.sid, g.sid, 1e-7);
    EXPECT_NEAR(back.sdd, g.sdd, 1e-7);
    EXPECT_NEAR(back.sox, g.sox, 1e-7);
    EXPECT_NEAR(back.soy, g.soy, 1e-7);
    EXPECT_NEAR(back.pox, g.pox, 1e-7);
    EXPECT_NEAR(back.poy, g.poy, 1e-7);
    EXPECT_NEAR(back.angle, g.angle, 1e-9);
  }
}

TEST(Geometry, RtkMatrixMatchesTheDocumentedExample) {
  // RTK's Geometry.md example: gantry 271.847274780273, offsets (-117.0565,
  // -1.01195), SID 1000, SDD 1536; its matrix printed to 15 digits.
  fdk_view v{};
  v.gantry_angle_deg = 271.847274780273;
  v.sid = 1000;
  v.sdd = 1536;
  v.projection_offset_x = -117.056503295898;
  v.projection_offset_y = -1.01195001602173;
  const auto m = fdk::rtk_matrix(fdk::view_from_parameters(v));
  const double expected[12] = {-166.5093078829, 0, -1531.42837748039, -117056.503295898,
                               -1.01142410874151, -1536, 0.0326206557691505, -1011.95001602173,
                               -0.999480303105996, 0, 0.0322354417240802, -1000};
  for (int i = 0; i < 12; ++i) EXPECT_NEAR(m[i], expected[i], 1e-6 * (1 + std::abs(expected[i]))) << i;
}

TEST(Geometry, SourceAtNinetyDegreesLooksAlongMinusX) {
  fdk_view v{};
  v.gantry_angle_deg = 90;
  v.sid = 1000;
  v.sdd = 1500;
  const fdk::ViewGeometry g = fdk::view_from_parameters(v);
  EXPECT_NEAR(g.angle, kPi / 2, 1e-12);
  // A point on +z projects to +u... at 90 degrees the detector u axis is
  // world -z (u axis = rot row 0 = (cos g, 0, -sin g)).
  fdk_volume vol{};
  vol.size[0] = vol.size[1] = vol.size[2] = 3;
  vol.spacing[0] = vol.spacing[1] = vol.spacing[2] = 10;
  vol.origin[0] = vol.origin[1] = vol.origin[2] = -10;
  fdk_detector det{};
  det.size[0] = det.size[1] = 11;
  det.spacing[0] = det.spacing[1] = 1;
  det.origin[0] = det.origin[1] = -5;
  const fdk::IndexMatrix p = fdk::index_matrix(g, vol, det);
  auto column = [&](int i, int j, int k) {
    const double w = p.m[8] * i + p.m[9] * j + p.m[10] * k + p.m[11];
    return (p.m[0] * i + p.m[1] * j + p.m[2] * k + p.m[3]) / w;
  };
  EXPECT_NEAR(column(1, 1, 1), 5.0, 1e-9);                 // isocentre: centre column
  EXPECT_NEAR(column(1, 1, 2), 5.0 - 10 * 1.5, 1e-9);      // z = +10 at magnification 1.5 -> u = -15
  EXPECT_TRUE(p.y_separable());
}

TEST(Weights, AngularWeightsSumToHalfATurnAndFollowMissingViews) {
  std::vector<fdk::ViewGeometry> views;
  for (int i = 0; i < 360; ++i) {
    fdk_view v{};
    v.gantry_angle_deg = i;
    v.sid = 1000;
    v.sdd = 1500;
    views.push_back(fdk::view_from_parameters(v));
  }
  std::vector<unsigned char> all(360, 1);
  auto w = fdk::angular_weights(views, all, false);
  EXPECT_NEAR(std::accumulate(w.begin(), w.end(), 0.0), kPi, 1e-9);
  EXPECT_NEAR(w[17], kPi / 360, 1e-12);
  std::vector<unsigned char> some = all;
  some[100] = 0;
  w = fdk::angular_weights(views, some, false);
  EXPECT_EQ(w[100], 0.0);
  EXPECT_NEAR(w[99], 1.5 * kPi / 360, 1e-12);  // the neighbours cover the hole
  EXPECT_NEAR(w[101], 1.5 * kPi / 360, 1e-12);
  EXPECT_NEAR(std::accumulate(w.begin(), w.end(), 0.0), kPi, 1e-9);
}

TEST(Weights, ShortScanIsDetectedAndItsEndsUseInnerGaps) {
  std::vector<fdk::ViewGeometry> views;
  for (int i = 0; i < 200; ++i) {
    fdk_view v{};
    v.gantry_angle_deg = 30 + i;
    v.sid = 1000;
    v.sdd = 1500;
    views.push_back(fdk::view_from_parameters(v));
  }
  fdk_detector det{};
  det.size[0] = det.size[1] = 100;
  det.spacing[0] = det.spacing[1] = 2;
  det.origin[0] = det.origin[1] = -99;
  const auto plan = fdk::plan_redundancy(views, det, FDK_AUTO, FDK_AUTO);
  EXPECT_TRUE(plan.short_scan);
  EXPECT_FALSE(plan.offset_detector);
  EXPECT_NEAR(plan.scan_start, 30 * kPi / 180, 1e-12);
  EXPECT_NEAR(plan.scan_range, 199 * kPi / 180, 1e-9);
  std::vector<unsigned char> all(200, 1);
  const auto w = fdk::angular_weights(views, all, true);
  EXPECT_NEAR(w.front(), 0.5 * kPi / 180, 1e-12);
  EXPECT_NEAR(w.back(), 0.5 * kPi / 180, 1e-12);
  // An arc shorter than a half turn cannot be reconstructed.
  views.resize(150);
  EXPECT_THROW(fdk::plan_redundancy(views, det, FDK_AUTO, FDK_AUTO), fdk::Error);
}

TEST(Weights, ParkerWeightsOfConjugateRaysAddUpToTwo) {
  // Views every 0.5 degree over 180 + fan; for pixel u at view beta the
  // conjugate ray is at beta + pi - 2 atan(u / sdd), pixel -u.
  const double sdd = 1500, sid = 1000;
  fdk_detector det{};
  det.size[0] = 201;
  det.size[1] = 2;
  det.spacing[0] = det.spacing[1] = 2;
  det.origin[0] = -200;
  det.origin[1] = -1;
  const double fan = 2 * std::atan(201.0 / sdd);
  const double arc = kPi + fan + 0.02;
  std::vector<fdk::ViewGeometry> views;
  const int n = 800;
  for (int i = 0; i < n; ++i) {
    fdk_view v{};
    v.gantry_angle_deg = i * (arc / (n - 1)) * 180 / kPi;
    v.sid = sid;
    v.sdd = sdd;
    views.push_back(fdk::view_from_parameters(v));
  }
  const auto plan = fdk::plan_redundancy(views, det, FDK_AUTO, FDK_OFF);
  ASSERT_TRUE(plan.short_scan);
  std::vector<float> ones(static_cast<size_t>(det.size[0]) * 2, 1.0f), out(ones.size());
  auto weight_at = [&](double beta_deg, int column) {
    fdk_view v{};
    v.gantry_angle_deg = beta_deg;
    v.sid = sid;
    v.sdd = sdd;
    const auto g = fdk::view_from_parameters(v);
    fdk::weight_projection(plan, g, det, ones.data(), sizeof(float) * ones.size() / 2, det, 0, out.data(), 0, 1);
    const double u = det.origin[0] + column * det.spacing[0];
    const double cosine = sdd / std::sqrt(sdd * sdd + u * u + 1);
    return out[static_cast<size_t>(column)] / (cosine * sdd / sid);  // redundancy weight alone
  };
  for (int column : {10, 60, 100, 140, 190}) {
    for (double beta_deg : {5.0, 40.0, 90.0, 150.0}) {
      const double u = det.origin[0] + column * det.spacing[0];
      const double conj = beta_deg + (kPi - 2 * std::atan(u / sdd)) * 180 / kPi;
      const int mirror = det.size[0] - 1 - column;
      const double sum = weight_at(beta_deg, column) + weight_at(conj, mirror);
      EXPECT_NEAR(sum, 2.0, 1e-5) << "column " << column << " beta " << beta_deg;
    }
  }
}
