// GeometryEstimator (issue 41): the detector offset along u and the in-plane
// tilt recovered from simulated cone-beam scans whose true views differ from
// the nominal ones by exactly those values (exact analytic projections of
// ellipsoid phantoms, fdk_phantom). Only the rows the estimator keeps are
// projected, to keep the suite fast. Each case records its true value,
// estimate and error as test properties (--gtest_output=xml), the source of
// the table in docs/ACCURACY.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "axis_symmetry.hpp"
#include "conjugate_rays.hpp"
#include "row_sums.hpp"
#include "fdk/core/geometry_estimator.hpp"
#include "fdk/core/thread_pool.hpp"
#include "fdk/phantom.hpp"

namespace {

using fdk::GeometryEstimate;
using fdk::GeometryEstimator;
using fdk::phantom::Ellipsoid;

constexpr double kPixel = 1.5;  // mm: 160 columns span +-120 mm, a fan half-angle of 4.6 deg
constexpr int kColumns = 160;
constexpr int kRows = 128;        // +-96 mm: a cone half-angle of 3.7 deg
constexpr double kOffsetTolerance = 0.1;  // pixels
constexpr double kTiltTolerance = 0.05;   // degrees
constexpr double kTiltReportSigma = 0.025;  // degrees: the largest sigma of a tilt reported

struct Scan {
  std::vector<fdk_view> views;
  fdk_detector detector{};
};

fdk_view nominal_view(double angle_deg) {
  fdk_view v{};
  v.gantry_angle_deg = angle_deg;
  v.sid = 1000;
  v.sdd = 1500;
  return v;
}

fdk_detector detector_with_axis_at(double axis_fraction) {
  fdk_detector d{};
  d.size[0] = kColumns;
  d.size[1] = kRows;
  d.spacing[0] = d.spacing[1] = kPixel;
  d.origin[0] = -axis_fraction * (kColumns - 1) * kPixel;
  d.origin[1] = -0.5 * (kRows - 1) * kPixel;
  return d;
}

Scan arc_scan(int views, double arc_deg, double axis_fraction = 0.5) {
  Scan s;
  for (int k = 0; k < views; ++k) s.views.push_back(nominal_view(k * arc_deg / views));
  s.detector = detector_with_axis_at(axis_fraction);
  return s;
}

// The fan angle of the centred detector, degrees: a short scan is 180 + it.
double fan_angle_deg() { return 2 * std::atan(0.5 * kColumns * kPixel / 1500.0) * 180 / 3.14159265358979323846; }

Ellipsoid ellipsoid(double x, double y, double z, double a, double b, double c, double density) {
  return Ellipsoid{{x, y, z}, {a, b, c}, 0.0, density};
}

// A low-contrast machined part: an aluminium-like cylinder (axis y, taller
// than the field) with holes drilled at several radii and heights.
std::vector<Ellipsoid> drilled_cylinder() {
  return {ellipsoid(0, 0, 0, 60, 1e4, 60, 0.02),     ellipsoid(25, 0, 10, 6, 1e4, 6, -0.02),
          ellipsoid(-30, -20, -15, 4, 30, 4, -0.02), ellipsoid(5, 25, -35, 8, 20, 8, -0.02),
          ellipsoid(-10, 0, 40, 3, 1e4, 3, -0.02),   ellipsoid(40, 30, -20, 5, 25, 10, -0.02)};
}

// Four off-axis spheres spread in height.
std::vector<Ellipsoid> off_axis_spheres() {
  return {ellipsoid(30, 20, 0, 10, 10, 10, 1.0), ellipsoid(-20, -30, 25, 8, 8, 8, 1.0),
          ellipsoid(10, 5, -30, 12, 12, 12, 0.7), ellipsoid(-35, 40, -10, 9, 9, 9, 1.0)};
}

std::vector<Ellipsoid> uniform_cylinder() { return {ellipsoid(0, 0, 0, 60, 1e4, 60, 0.02)}; }

// Transmission I = N0 exp(-p) sampled from Poisson, back to line integrals.
void add_poisson_noise(std::vector<float>& p, double photons, std::mt19937& rng) {
  for (float& v : p) {
    std::poisson_distribution<long> counts(photons * std::exp(-static_cast<double>(v)));
    const double i = std::max<long>(1, counts(rng));
    v = static_cast<float>(-std::log(i / photons));
  }
}

struct Truth {
  double offset_pixels = 0;
  double tilt_deg = 0;
  double photons = 0;  // 0: noiseless
  // Rays per pixel side, averaged: 1 samples each pixel at its centre (a
  // sharp edge aliases); a real detector integrates over its pixels.
  int pixel_samples = 1;
};

// `rows`' pixels of one view, each the mean of samples x samples rays
// spread evenly over it.
void project_pixels(const std::vector<Ellipsoid>& phantom, const fdk_view& view, const fdk_detector& rows,
                    int samples, float* out) {
  if (samples <= 1) return fdk::phantom::project_view(phantom, view, rows, out);
  fdk_detector fine = rows;
  for (int a = 0; a < 2; ++a) {
    fine.size[a] *= samples;
    fine.spacing[a] /= samples;
    fine.origin[a] -= 0.5 * (samples - 1) * fine.spacing[a];
  }
  std::vector<float> f(static_cast<size_t>(fine.size[0]) * static_cast<size_t>(fine.size[1]));
  fdk::phantom::project_view(phantom, view, fine, f.data());
  for (int r = 0; r < rows.size[1]; ++r)
    for (int c = 0; c < rows.size[0]; ++c) {
      double sum = 0;
      for (int i = 0; i < samples; ++i)
        for (int j = 0; j < samples; ++j)
          sum += f[static_cast<size_t>(r * samples + i) * static_cast<size_t>(fine.size[0]) + c * samples + j];
      out[static_cast<size_t>(r) * static_cast<size_t>(rows.size[0]) + c] = static_cast<float>(sum / (samples * samples));
    }
}

// Projects the rows the estimator keeps of every view of the true geometry
// (nominal with the offset and tilt of `truth`) and estimates.
void push_views(GeometryEstimator& estimator, const std::vector<Ellipsoid>& phantom, const Scan& scan,
                const Truth& truth, const std::vector<int>& only_views = {}) {
  const fdk::conjugate::RowPlan plan = fdk::conjugate::plan_rows(scan.views, scan.detector, 0 + (uint64_t{256} << 20));
  const size_t nu = static_cast<size_t>(kColumns);
  std::vector<float> image(nu * kRows, 0.0f), band;
  std::mt19937 rng(41);
  std::vector<int> views = only_views;
  if (views.empty())
    for (int k = 0; k < static_cast<int>(scan.views.size()); ++k) views.push_back(k);
  for (int k : views) {
    fdk_view truth_view = scan.views[k];
    truth_view.projection_offset_x += truth.offset_pixels * scan.detector.spacing[0];
    truth_view.in_plane_angle_deg += truth.tilt_deg;
    // Every row: the views' sum is fitted over the detector's height.
    const fdk::conjugate::Band whole{0, kRows, 0, false};
    for (const fdk::conjugate::Band& b : {whole}) {
      fdk_detector rows = scan.detector;
      rows.size[1] = b.count;
      rows.origin[1] += b.first_row * scan.detector.spacing[1];
      band.assign(nu * b.count, 0.0f);
      project_pixels(phantom, truth_view, rows, truth.pixel_samples, band.data());
      if (truth.photons > 0) add_poisson_noise(band, truth.photons, rng);
      std::copy(band.begin(), band.end(), image.begin() + b.first_row * nu);
    }
    estimator.add_view(k, image.data(), nu * sizeof(float));
  }
}

GeometryEstimate estimate(const std::vector<Ellipsoid>& phantom, const Scan& scan, const Truth& truth,
                          const std::vector<int>& only_views = {}) {
  GeometryEstimator estimator(scan.views, scan.detector);
  push_views(estimator, phantom, scan, truth, only_views);
  return estimator.estimate();
}

void record(const GeometryEstimate& e, const Truth& t) {
  testing::Test::RecordProperty("true_offset_px", std::to_string(t.offset_pixels));
  testing::Test::RecordProperty("estimated_offset_px", std::to_string(e.offset_u_pixels));
  testing::Test::RecordProperty("true_tilt_deg", std::to_string(t.tilt_deg));
  testing::Test::RecordProperty("estimated_tilt_deg", std::to_string(e.tilt_deg));
  testing::Test::RecordProperty("confidence", std::to_string(e.confidence));
  testing::Test::RecordProperty("offset_sigma_px", std::to_string(e.offset_sigma_pixels));
  testing::Test::RecordProperty("tilt_sigma_deg", std::to_string(e.tilt_sigma_deg));
  testing::Test::RecordProperty("basis", e.basis);
}

// What the suite holds the estimator to (issue 41): the offset within 0.1
// pixel, always; a tilt is either reported within 0.05 deg, or not reported
// (tilt_deg 0, so nothing wrong is applied) with a sigma that says the scan
// left it loose. `tilt_required`: the scan must pin the tilt.
void expect_recovered(const std::vector<Ellipsoid>& phantom, const Scan& scan, const Truth& t,
                      bool tilt_required = false) {
  const GeometryEstimate e = estimate(phantom, scan, t);
  record(e, t);
  EXPECT_NEAR(e.offset_u_pixels, t.offset_pixels, kOffsetTolerance) << e.basis;
  EXPECT_NEAR(e.offset_u_mm, t.offset_pixels * kPixel, kOffsetTolerance * kPixel);
  EXPECT_TRUE(e.flags & FDK_ESTIMATE_OFFSET) << e.basis;
  if (e.flags & FDK_ESTIMATE_TILT) {
    EXPECT_NEAR(e.tilt_deg, t.tilt_deg, kTiltTolerance) << e.basis;
  } else {
    EXPECT_FALSE(tilt_required) << "the tilt was not pinned: " << e.basis;
    EXPECT_EQ(e.tilt_deg, 0.0) << e.basis;
    EXPECT_GT(e.tilt_sigma_deg, kTiltReportSigma) << e.basis;
    EXPECT_NE(e.basis.find("tilt not estimated"), std::string::npos) << e.basis;
  }
  EXPECT_EQ(e.flags & (FDK_ESTIMATE_LOW_STRUCTURE | FDK_ESTIMATE_FEW_PAIRS), 0u) << e.basis;
  EXPECT_LT(e.offset_sigma_pixels, 0.1);
  EXPECT_LT(e.basis.size(), 256u);
}

// The heads' densities read as 1/mm would make the skull's line integrals
// over 200 and a Poisson scan all zero counts behind it; scaled so that the
// brain attenuates like water (0.02/mm), the skull's rays keep 1-5 % of the
// photons, as in a real head scan.
std::vector<Ellipsoid> in_water_units(std::vector<Ellipsoid> p) {
  for (Ellipsoid& e : p) e.density *= 0.02;
  return p;
}
std::vector<Ellipsoid> head() { return in_water_units(fdk::phantom::shepp_logan_3d(80)); }
std::vector<Ellipsoid> modified_head() { return in_water_units(fdk::phantom::modified_shepp_logan_3d(80)); }

TEST(GeometryEstimator, HeadFullScanOffsets) {
  const Scan s = arc_scan(360, 360);
  for (double px : {0.3, -2.0, 8.0}) expect_recovered(head(), s, Truth{px, 0.0});
}

TEST(GeometryEstimator, HeadFullScanTilts) {
  const Scan s = arc_scan(360, 360);
  for (double deg : {0.05, -0.3, 1.0}) expect_recovered(head(), s, Truth{0.0, deg}, true);
}

TEST(GeometryEstimator, ModifiedHeadOffsetAndTilt) {
  expect_recovered(modified_head(), arc_scan(360, 360), Truth{-0.3, 0.3}, true);
  expect_recovered(modified_head(), arc_scan(360, 360), Truth{2.0, -1.0}, true);
}

TEST(GeometryEstimator, PoissonNoise) {
  expect_recovered(head(), arc_scan(360, 360), Truth{2.0, 0.3, 1e4}, true);
  expect_recovered(head(), arc_scan(360, 360), Truth{-0.3, -0.05, 1e5}, true);
}

TEST(GeometryEstimator, DrilledCylinder) {
  expect_recovered(drilled_cylinder(), arc_scan(360, 360), Truth{2.0, 0.3}, true);
  expect_recovered(drilled_cylinder(), arc_scan(360, 360), Truth{-8.0, -1.0, 1e5}, true);
}

// On a detector that integrates over its pixels the views' sum has no
// aliased edges, and the tilt the mirror fit reports for the drilled
// cylinder at 1e4 photons lies within its sigmas of the truth (pixels
// sampled at their centres: 0.040 deg off, sigma 0.006; docs/ACCURACY.md).
TEST(GeometryEstimator, PixelIntegratedDetectorTiltWithinItsSigma) {
  for (const Truth& t : {Truth{2.0, 0.3, 1e4, 4}, Truth{-2.0, -0.3, 1e4, 4}}) {
    const GeometryEstimate e = estimate(drilled_cylinder(), arc_scan(360, 360), t);
    ASSERT_TRUE(e.flags & FDK_ESTIMATE_TILT) << e.basis;
    EXPECT_LE(std::fabs(e.tilt_deg - t.tilt_deg), std::max(3 * e.tilt_sigma_deg, 0.005))
        << "tilt " << e.tilt_deg << " for " << t.tilt_deg << ", sigma " << e.tilt_sigma_deg;
    EXPECT_LE(std::fabs(e.offset_u_pixels - t.offset_pixels), 0.02);
  }
}

TEST(GeometryEstimator, ShortScan) {
  const double arc = 180 + fan_angle_deg();
  expect_recovered(head(), arc_scan(200, arc), Truth{2.0, 0.3});
  expect_recovered(drilled_cylinder(), arc_scan(200, arc), Truth{-2.0, 0.3});
}

TEST(GeometryEstimator, OffsetDetector) {
  // The axis at 40 % of the width: 60 % of the detector on one side.
  expect_recovered(head(), arc_scan(360, 360, 0.4), Truth{-2.0, 0.3}, true);
  expect_recovered(drilled_cylinder(), arc_scan(360, 360, 0.4), Truth{2.0, -0.3}, true);
}

// A half-fan scan (the axis at a quarter of the width) with photon noise:
// read with cubic weights, the noisy rows pulled the heads' offsets 0.17
// and 0.20 pixel off (orbit_offset in geometry_estimator.cpp).
TEST(GeometryEstimator, HalfFanWithNoise) {
  expect_recovered(head(), arc_scan(360, 360, 0.25), Truth{2.0, 0.3, 1e4});
  expect_recovered(modified_head(), arc_scan(360, 360, 0.25), Truth{2.0, 0.3, 1e4});
  expect_recovered(modified_head(), arc_scan(360, 360, 0.25), Truth{-2.0, 0.0, 1e4});
}

// Rows read exactly on the rows (linear or cubic between them) err alike in
// both views of a pair at tilt 0 only, and that cusp captured these fits:
// 0.006 deg reported for 0.3 (sigma 0.049), and 0.132 deg off (sigma
// 0.028). Now the tilt is right or declined (conjugate_rays.cpp: kRowTaps).
TEST(GeometryEstimator, UntiltedRowsDoNotCaptureTheTilt) {
  expect_recovered(off_axis_spheres(), arc_scan(200, 180 + fan_angle_deg()), Truth{2.0, 0.3, 1e4});
  expect_recovered(off_axis_spheres(), arc_scan(360, 360, 0.25), Truth{-2.0, -0.3});
}

// The suite's scan with another source, detector rows (their spacing and
// count, the principal point `row_shift` rows below the centre) or a short
// arc.
Scan variant_scan(double sid, double sdd, double row_spacing, int row_shift, int rows, bool short_scan) {
  Scan s;
  const double fan = 2 * std::atan(0.5 * kColumns * kPixel / sdd) * 180 / 3.14159265358979323846;
  const int views = short_scan ? 200 : 360;
  const double arc = short_scan ? 180 + fan : 360;
  for (int k = 0; k < views; ++k) {
    fdk_view w = nominal_view(k * arc / views);
    w.sid = sid;
    w.sdd = sdd;
    s.views.push_back(w);
  }
  s.detector = detector_with_axis_at(0.5);
  s.detector.size[1] = rows;
  s.detector.spacing[1] = row_spacing;
  s.detector.origin[1] = -(0.5 * (rows - 1) + row_shift) * row_spacing;
  return s;
}

std::vector<Ellipsoid> scaled(std::vector<Ellipsoid> p, double k) {
  for (Ellipsoid& e : p) {
    for (double& c : e.center) c *= k;
    for (double& a : e.semi_axes) a *= k;
  }
  return p;
}

// Rows twice as tall as the columns are wide: the views' sum mirrors on
// the detector, in mm. Mirrored in pixels, the heads' tilts came out near
// 0 with sigmas of 0.001-0.003 deg (0.3 deg fitted -0.019; -1 fitted 0.065).
TEST(GeometryEstimator, RectangularPixels) {
  const Scan s = variant_scan(1000, 1500, 3.0, 0, 64, false);
  expect_recovered(head(), s, Truth{2.0, 0.3}, true);
  expect_recovered(modified_head(), s, Truth{-0.3, -1.0, 1e4}, true);
}

// A head 56 columns across on 160 (scaled to 0.4): read with cubic weights
// along v, the sum's mirror images of sharp rows pulled the tilt towards 0
// (a quarter of it: 0.078 deg for 0.3, sigma 0.010). Now it is declined.
TEST(GeometryEstimator, SmallObjectTiltIsRightOrDeclined) {
  const Scan s = arc_scan(360, 360);
  expect_recovered(scaled(head(), 0.4), s, Truth{2.0, 0.3});
  expect_recovered(scaled(modified_head(), 0.4), s, Truth{-0.3, -1.0, 1e4});
}

// The views' sum over every row the object spans (RowSums), not only the
// estimator's three bands: a small head's tilt, declined on the bands
// (sigma 0.088 deg in the suite's geometry, 0.079 in a wider cone), is now
// pinned, and right.
TEST(GeometryEstimator, EveryRowPinsASmallHeadsTilt) {
  expect_recovered(scaled(head(), 0.4), arc_scan(360, 360), Truth{2.0, 0.3}, true);
  expect_recovered(scaled(head(), 0.4), variant_scan(400, 600, 1.5, 0, 128, false), Truth{2.0, 0.3}, true);
}

// Where the views' sum refutes the orbit line, the all-lines fit that
// takes its place is checked by the sum too: a drilled cylinder at 0.6 and
// magnification 1.1 had both conjugate-ray fits at 0.228 deg for 0.3
// (sigma 0.007, reported), the sum at 0.311 (sigma 0.003).
TEST(GeometryEstimator, AllLinesFitAfterARefutedOrbitLineIsCheckedToo) {
  expect_recovered(scaled(drilled_cylinder(), 0.6), variant_scan(1000, 1100, 1.5, 0, 128, false), Truth{2.0, 0.3});
}

// A small head at magnification 1.1 (SDD 1100): the conjugate rays' fits
// agree on 0.098 deg for 0.5 (sigma 0.024, reported), the views' sum says
// 0.455 (sigma 0.033, too loose to report). The sum now checks the
// all-lines fit, and the tilt is declined (docs/ACCURACY.md, session 42).
TEST(GeometryEstimator, LowMagnificationSmallHeadTiltIsRightOrDeclined) {
  const Scan s = variant_scan(1000, 1100, 1.5, 0, 128, false);
  expect_recovered(scaled(modified_head(), 0.4), s, Truth{0.0, 0.5});
}

// The orbit line alone, read between rows, has a bias its own sigma does
// not cover where the object changes sharply along y at the orbit plane:
// it pinned the small drilled cylinder's tilt at 0.027 deg for 0.3 (sigma
// 0.004). Now the views' sum checks the orbit line.
TEST(GeometryEstimator, OrbitLineCheckedByTheViewsSum) {
  expect_recovered(scaled(drilled_cylinder(), 0.4), arc_scan(360, 360), Truth{2.0, 0.3});
}

// Read along v with the Gaussian alone, the orbit line lent a tilt a bias
// its sigma did not see: the modified head in a wide cone (SID 400 mm) was
// reported 0.076 deg off (sigma 0.005), a short scan's blobs 0.024-0.025
// deg off (sigma 0.002 or less). Now it is read with cubic weights too, and
// taken alone only where both readings agree.
TEST(GeometryEstimator, OrbitLineReadTwoWays) {
  expect_recovered(scaled(modified_head(), 0.4), variant_scan(400, 600, 1.5, 0, 128, false), Truth{2.0, 0.3});
  for (const Truth& t : {Truth{0.3, 0.05}, Truth{-2.0, -0.3}}) {
    const GeometryEstimate e = estimate(off_axis_spheres(), arc_scan(200, 180 + fan_angle_deg()), t);
    ASSERT_TRUE(e.flags & FDK_ESTIMATE_TILT) << e.basis;
    EXPECT_NEAR(e.tilt_deg, t.tilt_deg, 0.01) << e.basis;
  }
}

// A short scan's head in a wide cone (SID 400 mm) was reported 0.067 deg
// off with a sigma of 0.045: a tilt is now reported only with a sigma of
// 0.025 deg or less.
TEST(GeometryEstimator, LooseTiltIsNotReported) {
  expect_recovered(scaled(head(), 0.4), variant_scan(400, 600, 1.5, 0, 128, true), Truth{2.0, 0.3});
}

TEST(GeometryEstimator, IrregularAnglesPerView) {
  Scan s = arc_scan(360, 360);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> jitter(-0.2, 0.2);
  for (fdk_view& v : s.views) v.gantry_angle_deg += jitter(rng);
  expect_recovered(head(), s, Truth{0.3, -0.3}, true);
  expect_recovered(drilled_cylinder(), s, Truth{-0.3, 1.0}, true);
}

// Structure above and below the orbit plane that is symmetric about it: the
// rows' cone-beam mismatch is the same above and below, and the tilt exact.
TEST(GeometryEstimator, PlaneSymmetricObjectTilt) {
  const std::vector<Ellipsoid> p = {ellipsoid(0, 0, 0, 60, 60, 70, 1.0), ellipsoid(20, 0, 10, 10, 20, 10, 0.5),
                                    ellipsoid(-25, 0, -20, 8, 30, 12, -0.5), ellipsoid(0, 0, 30, 5, 40, 5, 0.7)};
  expect_recovered(p, arc_scan(360, 360), Truth{0.0, 0.3}, true);
  expect_recovered(p, arc_scan(360, 360), Truth{0.0, -0.3}, true);
}

// Four off-axis spheres spread in height: the orbit line (cubic along v)
// pins the tilt on its own, whatever the off-plane bands say.
TEST(GeometryEstimator, OffAxisSpheresTilt) {
  const std::vector<Ellipsoid> p = off_axis_spheres();
  expect_recovered(p, arc_scan(360, 360), Truth{-2.0, -0.3}, true);
  expect_recovered(p, arc_scan(360, 360), Truth{8.0, 1.0}, true);
}

TEST(GeometryEstimator, UniformCylinderIsLowStructure) {
  for (double photons : {0.0, 1e4}) {
    const Truth t{2.0, 0.0, photons};
    const GeometryEstimate e = estimate(uniform_cylinder(), arc_scan(360, 360), t);
    record(e, t);
    EXPECT_LT(e.confidence, 0.5) << e.basis;
    EXPECT_TRUE(e.flags & FDK_ESTIMATE_LOW_STRUCTURE) << e.basis;
  }
}

// Views that hardly change with angle leave the tilt to their sum's sharp
// edges, which sampled pull the mirror fit: the centred cylinder gave 0.262
// deg for 0.3 (sigma 0.006), a ball on the axis 0 (sigma 0.000), both
// reported as tilts. Now no tilt is reported for them.
TEST(GeometryEstimator, NoTiltFromViewsThatDoNotChange) {
  const std::vector<Ellipsoid> ball = {ellipsoid(0, 0, 0, 40, 40, 40, 0.02)};
  for (const std::vector<Ellipsoid>& p : {ball, uniform_cylinder()}) {
    const GeometryEstimate e = estimate(p, arc_scan(360, 360), Truth{2.0, 0.3});
    EXPECT_TRUE(e.flags & FDK_ESTIMATE_LOW_STRUCTURE) << e.basis;
    EXPECT_FALSE(e.flags & FDK_ESTIMATE_TILT) << e.basis;
    EXPECT_EQ(e.tilt_deg, 0.0) << e.basis;
    EXPECT_NE(e.basis.find("tilt not estimated"), std::string::npos) << e.basis;
  }
}

TEST(GeometryEstimator, TwoViewsAreFewPairs) {
  const GeometryEstimate e = estimate(head(), arc_scan(2, 360), Truth{2.0, 0.0});
  EXPECT_EQ(e.confidence, 0.0);
  EXPECT_TRUE(e.flags & FDK_ESTIMATE_FEW_PAIRS);
  EXPECT_FALSE(e.flags & (FDK_ESTIMATE_OFFSET | FDK_ESTIMATE_TILT));
  EXPECT_FALSE(e.basis.empty());
}

TEST(GeometryEstimator, NoOppositeViewsAreFewPairs) {
  const GeometryEstimate e = estimate(head(), arc_scan(90, 90), Truth{2.0, 0.0});
  EXPECT_EQ(e.confidence, 0.0);
  EXPECT_TRUE(e.flags & FDK_ESTIMATE_FEW_PAIRS);
}

TEST(GeometryEstimator, NoViewsYetAreFewPairs) {
  const Scan s = arc_scan(360, 360);
  const GeometryEstimate e = estimate(head(), s, Truth{}, {0});
  EXPECT_EQ(e.confidence, 0.0);
  EXPECT_TRUE(e.flags & FDK_ESTIMATE_FEW_PAIRS);
}

// fdk_finish starts the estimate on a thread of its own; what it returns is
// what estimate() would compute, to the bit.
TEST(GeometryEstimator, StartedEstimateIsTheSame) {
  const Scan s = arc_scan(360, 360);
  GeometryEstimator started(s.views, s.detector), asked(s.views, s.detector);
  push_views(started, head(), s, Truth{2.0, 0.0});
  push_views(asked, head(), s, Truth{2.0, 0.0});
  started.start_estimate();
  const GeometryEstimate a = started.estimate(), b = asked.estimate();
  EXPECT_EQ(a.offset_u_mm, b.offset_u_mm);
  EXPECT_EQ(a.tilt_sigma_deg, b.tilt_sigma_deg);
  EXPECT_EQ(a.confidence, b.confidence);
  EXPECT_EQ(a.basis, b.basis);
}

// An estimate started before views arrived is not what a later estimate()
// returns: views kept since make it stale.
TEST(GeometryEstimator, StartedEstimateGoesStale) {
  const Scan s = arc_scan(360, 360);
  GeometryEstimator estimator(s.views, s.detector);
  push_views(estimator, head(), s, Truth{2.0, 0.0}, {0});
  estimator.start_estimate();
  push_views(estimator, head(), s, Truth{2.0, 0.0});
  const GeometryEstimate e = estimator.estimate();
  EXPECT_TRUE(e.flags & FDK_ESTIMATE_OFFSET) << e.basis;
  EXPECT_NEAR(e.offset_u_pixels, 2.0, kOffsetTolerance) << e.basis;
}

// Views pushed again replace their rows (the first push's rows sit in the
// estimator's block, the second's in rows of their own), and the estimate
// follows them rather than the one computed before.
TEST(GeometryEstimator, ViewsPushedAgainReplaceTheirRows) {
  const Scan s = arc_scan(360, 360);
  GeometryEstimator estimator(s.views, s.detector);
  push_views(estimator, head(), s, Truth{2.0, 0.0});
  EXPECT_NEAR(estimator.estimate().offset_u_pixels, 2.0, kOffsetTolerance);
  estimator.start_estimate();
  push_views(estimator, head(), s, Truth{-1.0, 0.0});
  const GeometryEstimate e = estimator.estimate();
  EXPECT_NEAR(e.offset_u_pixels, -1.0, kOffsetTolerance) << e.basis;
}

// Destroyed while its started estimate runs: the estimate is waited for
// (the sanitizer builds see a use after free otherwise).
TEST(GeometryEstimator, DestroyedWhileEstimating) {
  const Scan s = arc_scan(360, 360);
  for (int k = 0; k < 3; ++k) {
    GeometryEstimator estimator(s.views, s.detector);
    push_views(estimator, head(), s, Truth{2.0, 0.0});
    estimator.start_estimate();
  }
  SUCCEED();
}

TEST(GeometryEstimator, ApplyAddsTheEstimate) {
  GeometryEstimate e;
  e.offset_u_mm = 1.5;
  e.tilt_deg = -0.25;
  const fdk_view v = GeometryEstimator::apply(nominal_view(10), e);
  EXPECT_DOUBLE_EQ(v.projection_offset_x, 1.5);
  EXPECT_DOUBLE_EQ(v.in_plane_angle_deg, -0.25);
}

// The estimate's time (docs/ACCURACY.md), run by hand:
//   test_geometry_estimator --gtest_also_run_disabled_tests --gtest_filter=*Timing* --gtest_output=xml:t.xml
// Synthetic rows (the time does not depend on what they show).
void time_estimate(int columns, int views, const char* name) {
  std::vector<fdk_view> v;
  for (int k = 0; k < views; ++k) v.push_back(nominal_view(k * 360.0 / views));
  fdk_detector d{};
  d.size[0] = d.size[1] = columns;
  d.spacing[0] = d.spacing[1] = 256.0 * kPixel / columns;
  d.origin[0] = d.origin[1] = -0.5 * (columns - 1) * d.spacing[0];
  GeometryEstimator estimator(v, d);
  std::vector<float> image(static_cast<size_t>(columns) * columns);
  for (int k = 0; k < views; ++k) {
    const double a = k * 2 * 3.14159265358979 / views;
    for (int r = 0; r < columns; ++r)
      for (int c = 0; c < columns; ++c) {
        const double x = (c - 0.5 * columns) / columns;
        image[static_cast<size_t>(r) * columns + c] = static_cast<float>(std::max(0.0, 0.2 - x * x) +
            0.1 * std::exp(-std::pow((x - 0.2 * std::cos(a)) * 20, 2)));
      }
    estimator.add_view(k, image.data(), columns * sizeof(float));
  }
  const auto t0 = std::chrono::steady_clock::now();
  const GeometryEstimate e = estimator.estimate();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  testing::Test::RecordProperty(name, std::to_string(s));
  testing::Test::RecordProperty(std::string(name) + "_basis", e.basis);
  EXPECT_GT(e.view_pairs, 0);
}

TEST(GeometryEstimator, DISABLED_Timing) {
  time_estimate(256, 360, "seconds_256x256x360");
  time_estimate(1024, 1200, "seconds_1024x1024x1200");
}


// The push's threads share a view's kept rows out (a GPU backend's push
// passes its pool): the codes, base and step are those of one thread, for
// any number of threads, whatever the rows' order of values.
TEST(GeometryEstimator, KeptRowsAreTheSameOnAnyNumberOfThreads) {
  const Scan scan = arc_scan(360, 360);
  const fdk::conjugate::RowPlan plan = fdk::conjugate::plan_rows(scan.views, scan.detector, uint64_t{256} << 20);
  std::vector<float> image(static_cast<size_t>(kColumns) * kRows);
  for (size_t i = 0; i < image.size(); ++i) image[i] = static_cast<float>(std::sin(0.37 * i) * (1 + i % 97));
  const size_t pitch = kColumns * sizeof(float);
  const auto alone = fdk::conjugate::keep_rows(plan, kColumns, image.data(), pitch);
  const size_t codes = static_cast<size_t>(plan.rows) * kColumns;
  for (int threads : {2, 3, 8}) {
    fdk::ThreadPool pool(threads);
    const auto shared = fdk::conjugate::keep_rows(plan, kColumns, image.data(), pitch, nullptr, &pool);
    EXPECT_EQ(shared->base, alone->base) << threads;
    EXPECT_EQ(shared->step, alone->step) << threads;
    EXPECT_TRUE(std::equal(alone->q, alone->q + codes, shared->q)) << threads;
  }
  // The range reaches every kept row: the extremes sit in the last band.
  image[static_cast<size_t>(plan.bands.back().first_row + 1) * kColumns + 5] = 1e4f;
  fdk::ThreadPool pool(4);
  EXPECT_EQ(fdk::conjugate::keep_rows(plan, kColumns, image.data(), pitch, nullptr, &pool)->step,
            fdk::conjugate::keep_rows(plan, kColumns, image.data(), pitch)->step);
  EXPECT_GT(fdk::conjugate::keep_rows(plan, kColumns, image.data(), pitch, nullptr, &pool)->step, alone->step);
}

// The fit behind the tilt of full scans (axis_symmetry.hpp): an image
// mirror-symmetric about a known tilted line, in three bands of rows as the
// estimator keeps them, gives back the line; bins of 2 pixels too.
std::vector<fdk_view> circle(int views, double arc_deg) {
  std::vector<fdk_view> out;
  for (int k = 0; k < views; ++k) out.push_back(nominal_view(k * arc_deg / views));
  return out;
}

// A view pushed again replaces its rows: the sums are then those of the
// views as they are now, whatever came before.
TEST(RowSums, AViewPushedAgainReplacesItsRows) {
  using fdk::symmetry::RowSums;
  const std::vector<fdk_view> views = circle(32, 360);
  RowSums sums(views.size(), 64, 16, 1 << 20);
  ASSERT_TRUE(sums.usable());
  EXPECT_EQ(sums.memory_bytes(), 32u * 64 * 16 * sizeof(uint16_t));
  const std::vector<float> image(16 * 64, 1.0f), other(16 * 64, 5.0f);
  RowSums::Halves h;
  for (size_t k = 0; k < 16; ++k) sums.add(k, image.data(), 16 * sizeof(float), nullptr);
  EXPECT_FALSE(sums.halves(views, h, nullptr)) << "half the circle";
  fdk::ThreadPool pool(3);
  sums.add(5, other.data(), 16 * sizeof(float), &pool);
  for (size_t k = 16; k < 32; ++k) sums.add(k, image.data(), 16 * sizeof(float), &pool);
  ASSERT_TRUE(sums.halves(views, h, &pool));
  EXPECT_EQ(h.rows, 64);
  EXPECT_EQ(h.columns, 16);
  EXPECT_EQ(h.views, 32);
  const double odd = h.sum[1][0];  // view 5's half (every other view by angle)
  EXPECT_GT(odd, 360.0 + 1.0) << "the other rows counted";
  sums.add(5, image.data(), 16 * sizeof(float), nullptr);
  RowSums::Halves again;
  ASSERT_TRUE(sums.halves(views, again, nullptr));
  for (int p = 0; p < 2; ++p)
    for (double v : again.sum[p]) ASSERT_NEAR(v, 360.0, 1e-3) << "each half weighs a full circle, view 5 replaced";
}

TEST(RowSums, OnlyForOneFullCircleOfOneGeometry) {
  using fdk::symmetry::RowSums;
  const std::vector<float> image(16 * 64, 1.0f);
  const auto filled = [&](const std::vector<fdk_view>& views, RowSums::Halves& h) {
    RowSums sums(views.size(), 64, 16, 1 << 20);
    for (size_t k = 0; k < views.size(); ++k) sums.add(k, image.data(), 16 * sizeof(float), nullptr);
    return sums.halves(views, h, nullptr);
  };
  RowSums::Halves h;
  EXPECT_TRUE(filled(circle(32, 360), h));
  EXPECT_FALSE(filled(circle(32, 270), h)) << "an arc";
  std::vector<fdk_view> views = circle(32, 360);
  views[7].in_plane_angle_deg = 0.5;
  EXPECT_FALSE(filled(views, h)) << "an in-plane angle";
  views = circle(32, 360);
  views[7].sid = 990;
  EXPECT_FALSE(filled(views, h)) << "another geometry";
  EXPECT_FALSE(RowSums(32, 64, 16, 64).usable()) << "no memory for the rows";
}

// Rows beyond 256 are binned, each bin read at its middle row or rows, so
// that a bin's sum stands where the bin's centre is; columns beyond 256 are
// summed in bins.
TEST(RowSums, BinsAreReadAtTheirCentre) {
  using fdk::symmetry::RowSums;
  const std::vector<fdk_view> views = circle(16, 360);
  for (int rows : {600, 1024}) {
    const int columns = 600;
    RowSums sums(views.size(), rows, columns, 1 << 26);
    std::vector<float> image(static_cast<size_t>(rows) * columns);
    for (int r = 0; r < rows; ++r)
      std::fill(image.begin() + r * columns, image.begin() + (r + 1) * columns, static_cast<float>(r));
    for (size_t k = 0; k < views.size(); ++k) sums.add(k, image.data(), columns * sizeof(float), nullptr);
    RowSums::Halves h;
    ASSERT_TRUE(sums.halves(views, h, nullptr));
    const int bin = (rows + 255) / 256;
    EXPECT_EQ(h.row_bin, bin);
    EXPECT_EQ(h.rows, rows / bin);
    EXPECT_EQ(h.column_bin, 3);
    EXPECT_EQ(h.columns, 200);
    const int read = 2 - bin % 2;  // rows read per bin
    for (int j = 0; j < h.rows; ++j)
      EXPECT_NEAR(h.sum[0][static_cast<size_t>(j) * h.columns] / (360.0 * read * 3), j * bin + 0.5 * (bin - 1), 0.05)
          << rows;
  }
}

TEST(AxisSymmetry, FindsTheLineOfAMirrorSymmetricImage) {
  constexpr double kPiD = 3.14159265358979323846;
  for (int bin : {1, 2})
    for (double deg : {0.0, 0.3, -1.2}) {
      const double column = 61.3, row = 64.0, tilt = deg * kPiD / 180;
      fdk::symmetry::ViewSum s;
      s.bin = s.row_bin = bin;
      s.columns = 128 / bin;
      // Bands of 20 rows: 12 compared, 4 at each edge within the Gaussian's reach.
      for (int first : {16, 54, 92}) s.bands.push_back({first, 20 / bin});
      for (const auto& b : s.bands)
        for (int y = 0; y < b.count; ++y)
          for (int x = 0; x < s.columns; ++x) {
            double v = 0;  // the detector pixels of the bin, summed
            for (int j = 0; j < bin; ++j)
              for (int i = 0; i < bin; ++i) {
                const double px = x * bin + i - column, py = b.first_row + y * bin + j - row;
                const double t = px * std::sin(tilt) + py * std::cos(tilt);  // along the line
                const double n = px * std::cos(tilt) - py * std::sin(tilt);  // across it
                v += std::exp(-std::pow((std::fabs(n) - 25) / 6, 2)) * (1 + 0.3 * std::cos(t / 4)) +
                     std::exp(-std::pow(n / 9, 2)) * (1 + 0.2 * std::sin(t / 7));
              }
            s.pixels.push_back(v);
          }
      const fdk::symmetry::MirrorAxis a = fdk::symmetry::mirror_axis(s, row, 60.0);
      ASSERT_TRUE(a.found) << "bin " << bin << ", " << deg << " deg";
      EXPECT_NEAR(a.column, column, 0.02) << "bin " << bin << ", " << deg << " deg";
      EXPECT_NEAR(a.tilt * 180 / kPiD, deg, 0.005) << "bin " << bin;
      EXPECT_LT(a.sigma * 180 / kPiD, 0.01) << "bin " << bin << ", " << deg << " deg";
    }
}

// The tilt and offset errors of a matrix of cases, run by hand (not in the
// suite: it takes a minute); the source of docs/ACCURACY.md's table.
TEST(GeometryEstimator, DISABLED_Matrix) {
  struct C { const char* n; std::vector<Ellipsoid> p; };
  const std::vector<Ellipsoid> blobs = off_axis_spheres();
  struct S { const char* n; Scan s; };
  const char* only = std::getenv("FDK_MATRIX_SCANS");  // e.g. "short,half": the scans to run (default all)
  // Rays per pixel side (Truth::pixel_samples; default 1).
  const char* samples = std::getenv("FDK_MATRIX_PIXEL_SAMPLES");
  for (const S& s : {S{"full", arc_scan(360, 360)}, S{"short", arc_scan(200, 180 + fan_angle_deg())},
                     S{"half", arc_scan(360, 360, 0.25)}}) {
    if (only && !std::strstr(only, s.n)) continue;
    for (const C& c : {C{"head", head()}, C{"mhead", modified_head()}, C{"drill", drilled_cylinder()}, C{"blobs", blobs}})
      for (Truth t : {Truth{0.3, 0.05}, Truth{-2, -0.3}, Truth{8, 1.0}, Truth{2, 0.3, 1e4}, Truth{-0.3, -1.0, 1e5}}) {
        if (samples) t.pixel_samples = std::max(1, std::atoi(samples));
        const GeometryEstimate e = estimate(c.p, s.s, t);
        printf("%-5s %-6s off %5.1f tilt %5.2f ph %6.0f | off err %6.3f sigma %.3f tilt err %6.3f sigma %.3f conf %.2f%s\n",
               s.n, c.n, t.offset_pixels, t.tilt_deg, t.photons, e.offset_u_pixels - t.offset_pixels,
               e.offset_sigma_pixels, e.tilt_deg - t.tilt_deg, e.tilt_sigma_deg, e.confidence,
               e.flags & FDK_ESTIMATE_TILT ? "" : " (tilt declined)");
        if (std::getenv("FDK_MATRIX_BASIS")) printf("      %s\n", e.basis.c_str());
      }
  }
}

// Other geometries, run by hand like the matrix: rectangular pixels (rows
// 3 mm, columns 1.5), the principal point 20 rows off the centre, a wider
// cone (SID 400, SDD 600: fan half-angle 11 deg) with the phantoms scaled
// to 0.4 or 0.7, a short scan of it, and the phantoms scaled to 0.4 in the
// suite's geometry.
TEST(GeometryEstimator, DISABLED_Variants) {
  struct V { const char* n; double sid, sdd, sv; int row_shift, rows; double scale; bool short_scan; };
  for (const V& v : {V{"aniso", 1000, 1500, 3.0, 0, 64, 1, false}, V{"vshift", 1000, 1500, 1.5, 20, 128, 1, false},
                     V{"cone", 400, 600, 1.5, 0, 128, 0.4, false}, V{"cone-short", 400, 600, 1.5, 0, 128, 0.4, true},
                     V{"cone-big", 400, 600, 1.5, 0, 128, 0.7, false}, V{"small", 1000, 1500, 1.5, 0, 128, 0.4, false}})
    for (const auto& ph : {std::make_pair("head", head()), std::make_pair("drill", drilled_cylinder()),
                           std::make_pair("mhead", modified_head())})
      for (Truth t : {Truth{2.0, 0.3}, Truth{-0.3, -1.0, 1e4}}) {
        const GeometryEstimate e = estimate(scaled(ph.second, v.scale), variant_scan(v.sid, v.sdd, v.sv, v.row_shift, v.rows, v.short_scan), t);
        printf("%-10s %-6s off %5.1f tilt %5.2f ph %6.0f | off err %6.3f sigma %.3f tilt err %6.3f sigma %.3f conf %.2f%s\n",
               v.n, ph.first, t.offset_pixels, t.tilt_deg, t.photons, e.offset_u_pixels - t.offset_pixels,
               e.offset_sigma_pixels, e.tilt_deg - t.tilt_deg, e.tilt_sigma_deg, e.confidence,
               e.flags & FDK_ESTIMATE_TILT ? "" : " (tilt declined)");
      }
}


// Low magnification (docs/ACCURACY.md, sessions 42 and 43), run by hand:
// SDD 1100-1300 at SID 1000, the phantoms scaled to 0.3-0.6, full and
// short scans; a line per scan, flagged WRONG where a tilt is reported more
// than 0.05 deg off.
TEST(GeometryEstimator, DISABLED_LowMagnificationGrid) {
  for (double sdd : {1100.0, 1200.0, 1300.0})
    for (bool short_scan : {false, true})
      for (const auto& ph : {std::make_pair("head", head()), std::make_pair("mhead", modified_head()),
                             std::make_pair("drill", drilled_cylinder())})
        for (double scale : {0.3, 0.4, 0.6})
          for (Truth t : {Truth{2.0, 0.3}, Truth{-0.3, -1.0, 1e4}, Truth{0.0, 0.5}}) {
            const GeometryEstimate e =
                estimate(scaled(ph.second, scale), variant_scan(1000, sdd, 1.5, 0, 128, short_scan), t);
            const bool tilt = e.flags & FDK_ESTIMATE_TILT;
            printf("sdd %4.0f %-5s %-5s x%.1f off %5.1f tilt %5.2f | tilt err %6.3f sigma %.3f conf %.2f%s\n", sdd,
                   short_scan ? "short" : "full", ph.first, scale, t.offset_pixels, t.tilt_deg,
                   tilt ? e.tilt_deg - t.tilt_deg : 0.0, e.tilt_sigma_deg, e.confidence,
                   !tilt ? " (declined)" : std::fabs(e.tilt_deg - t.tilt_deg) > kTiltTolerance ? " WRONG" : "");
          }
}

}  // namespace
