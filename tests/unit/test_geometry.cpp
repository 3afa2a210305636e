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

namespace {

fdk::ViewGeometry displaced_view(double gantry_deg, double sox, double pox) {
  fdk_view v{};
  v.gantry_angle_deg = gantry_deg;
  v.sid = 1000;
  v.sdd = 1500;
  v.source_offset_x = sox;
  v.projection_offset_x = pox;
  return fdk::view_from_parameters(v);
}

fdk_detector panel(int columns, double pixel, double origin_u) {
  fdk_detector det{};
  det.size[0] = columns;
  det.size[1] = 8;
  det.spacing[0] = det.spacing[1] = pixel;
  det.origin[0] = origin_u;
  det.origin[1] = -3.5 * pixel;
  return det;
}

std::vector<fdk::ViewGeometry> full_turn(double sox, double pox, int n = 360) {
  std::vector<fdk::ViewGeometry> views;
  for (int i = 0; i < n; ++i) views.push_back(displaced_view(i * 360.0 / n, sox, pox));
  return views;
}

}  // namespace

TEST(Geometry, TheAxisRayAndTheFanAngleFollowTheSourceNotThePrincipalPoint) {
  // Source 20 mm off the central plane: the ray through the rotation axis
  // meets the detector at u = sox - pox - sox * sdd / sid, not at the
  // principal point sox - pox.
  const fdk::ViewGeometry g = displaced_view(30, 20, -7);
  const double axis_u = g.detector_u(0.0);  // where the axis ray meets the detector
  EXPECT_NEAR(axis_u, 20 + 7 - 20 * 1.5, 1e-12);
  EXPECT_NEAR(g.fan_angle(axis_u), 0, 1e-15);
  // The fan angle is the angle at the source between the ray through u and
  // the ray through the axis, measured in the rotated frame.
  for (double u : {-180.0, -3.0, 0.0, 41.0, 250.0}) {
    const double sx = g.sox, sz = g.sid;               // source
    const double dx = u + g.pox - sx, dz = -g.sdd;     // towards detector point u
    const double ax = -sx, az = -sz;                   // towards the axis
    const double expected = std::atan2(ax * dz - az * dx, ax * dx + az * dz);
    EXPECT_NEAR(g.fan_angle(u), expected, 1e-12) << "u " << u;
    EXPECT_NEAR(g.detector_u(g.untilted_u(u)), u, 1e-9) << "u " << u;
  }
}

TEST(Weights, HalfFanFollowsRtkfdksRule) {
  // 200 pixels of 1.5 mm (300 mm, 200 mm at the isocentre): displaced once
  // the edge rays' distances from the axis differ by 10 % of their mean,
  // i.e. a shift of about 2.5 % of the width.
  const fdk_detector centred = panel(200, 1.5, -0.5 * 199 * 1.5);
  const auto shifted = [&](double fraction) {
    fdk_detector d = centred;
    d.origin[0] += fraction * 300;
    return d;
  };
  const auto views = full_turn(0, 0);
  EXPECT_FALSE(fdk::plan_redundancy(views, centred, FDK_AUTO, FDK_AUTO).offset_detector);
  EXPECT_FALSE(fdk::plan_redundancy(views, shifted(0.022), FDK_AUTO, FDK_AUTO).offset_detector);
  const fdk_detector d = shifted(0.028);
  const auto plan = fdk::plan_redundancy(views, d, FDK_AUTO, FDK_AUTO);
  EXPECT_TRUE(plan.offset_detector);
  EXPECT_EQ(plan.long_side, 1);
  // The edge rays' distances from the axis: sid * sin(atan(u / sdd)).
  const double first = d.origin[0], last = d.origin[0] + 199 * 1.5;
  EXPECT_NEAR(plan.superior, 1000 * std::sin(std::atan(last / 1500)), 1e-9);
  EXPECT_NEAR(plan.inferior, 1000 * std::sin(std::atan(first / 1500)), 1e-9);
  EXPECT_GE(200 * (plan.superior + plan.inferior), 10 * (plan.superior - plan.inferior));
  EXPECT_NEAR(plan.overlap, -plan.inferior, 1e-12);
  // A small source offset moves the principal point, not the detector's
  // extent about the axis ray: a centred full scan stays full-fan (the old
  // rule, a pixel off the principal point, turned half-fan on).
  EXPECT_FALSE(fdk::plan_redundancy(full_turn(5, 0), centred, FDK_AUTO, FDK_AUTO).offset_detector);
  // Forced on with the axis ray off the detector: said, not guessed.
  fdk_detector off = centred;
  off.origin[0] = 10;
  EXPECT_THROW(fdk::plan_redundancy(views, off, FDK_AUTO, FDK_ON), fdk::Error);
  EXPECT_FALSE(fdk::plan_redundancy(views, off, FDK_AUTO, FDK_OFF).offset_detector);
  EXPECT_FALSE(fdk::plan_redundancy(views, off, FDK_AUTO, FDK_AUTO).offset_detector);  // said in the plan
}

TEST(Weights, AShortScanTakesNoHalfFanWeightsOnAuto) {
  // The detector of HalfFanFollowsRtkfdksRule shifted by 3 % of its width
  // (displaced by rtkfdk's rule), 200 views over 200 degrees: Parker's
  // weights alone on AUTO, where rtkfdk multiplies them by the half-fan
  // weights (FDK_ON still does); a full turn keeps them.
  const fdk_detector d = panel(200, 1.5, -0.5 * 199 * 1.5 + 0.03 * 300);
  std::vector<fdk::ViewGeometry> arc;
  for (int i = 0; i < 200; ++i) arc.push_back(displaced_view(i, 0, 0));
  const auto plan = fdk::plan_redundancy(arc, d, FDK_AUTO, FDK_AUTO);
  EXPECT_TRUE(plan.short_scan);
  EXPECT_TRUE(plan.displaced);
  EXPECT_FALSE(plan.offset_detector);
  EXPECT_TRUE(fdk::plan_redundancy(arc, d, FDK_AUTO, FDK_ON).offset_detector);
  EXPECT_TRUE(fdk::plan_redundancy(full_turn(0, 0), d, FDK_AUTO, FDK_AUTO).offset_detector);
  EXPECT_FALSE(fdk::plan_redundancy(full_turn(0, 0), d, FDK_ON, FDK_AUTO).offset_detector);
}

TEST(Weights, HalfFanWeightsOfConjugateRaysAddUpToTwoAboutTheAxisRay) {
  // Displaced detector and displaced source: the weight of a ray and of its
  // conjugate (fan angle -g) add up to 2 and run from 0 to 2 across the band.
  for (double sox : {0.0, 20.0, -35.0}) {
    const fdk_detector det = panel(240, 1.5, -60);
    const auto views = full_turn(sox, 0);
    const auto plan = fdk::plan_redundancy(views, det, FDK_OFF, FDK_AUTO);
    ASSERT_TRUE(plan.offset_detector) << sox;
    int offset = 0;
    const fdk_detector wide = fdk::filtered_detector(plan, views, det, &offset);
    EXPECT_GT(offset, 0);
    const fdk::ViewGeometry& g = views[17];
    fdk::RedundancyPlan none = plan;
    none.offset_detector = false;
    const auto redundancy = [&](double u) {  // a one-column detector at u
      fdk_detector one = wide;
      one.size[0] = 1;
      one.origin[0] = u;
      double w = 0, plain = 0, u2 = 0;
      fdk::column_weights(plan, g, one, &w, &u2);
      fdk::column_weights(none, g, one, &plain, &u2);  // the FDK weights alone
      return w / plain;
    };
    double seen_low = 2, seen_high = 0;
    for (double gamma = -0.05; gamma <= 0.05; gamma += 0.0025) {
      const double ua = g.detector_u(g.source_radius() * std::tan(gamma));
      const double ub = g.detector_u(g.source_radius() * std::tan(-gamma));
      const double a = redundancy(ua), b = redundancy(ub);
      EXPECT_NEAR(a + b, 2.0, 1e-9) << "sox " << sox << " gamma " << gamma;
      seen_low = std::min(seen_low, a);
      seen_high = std::max(seen_high, a);
    }
    EXPECT_LT(seen_low, 0.01);
    EXPECT_GT(seen_high, 1.99);
    // The widened detector reaches the mirror image of the long edge.
    const double long_edge = det.origin[0] + (det.size[0] - 0.5) * det.spacing[0];
    const double mirror = g.detector_u(-g.untilted_u(long_edge));
    EXPECT_LE(wide.origin[0] - 0.5 * wide.spacing[0], mirror + 1e-9) << sox;
  }
}
