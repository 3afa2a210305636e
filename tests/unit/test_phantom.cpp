// Unit tests of the analytic phantom and its exact cone-beam projector
// (adapters/phantom), the truth the accuracy tests are measured against.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "fdk/phantom.hpp"

namespace {

using fdk::phantom::Ellipsoid;

constexpr double kPi = 3.14159265358979323846;
constexpr double kSid = 1000.0;
constexpr double kSdd = 1500.0;

fdk_view make_view(double gantry_deg) {
  fdk_view v{};
  v.gantry_angle_deg = gantry_deg;
  v.sid = kSid;
  v.sdd = kSdd;
  return v;
}

// A detector of nu x nv pixels of spacing d, centred on (0, 0).
fdk_detector centred_detector(int nu, int nv, double d) {
  fdk_detector det{};
  det.size[0] = nu;
  det.size[1] = nv;
  det.spacing[0] = d;
  det.spacing[1] = d;
  det.origin[0] = -0.5 * (nu - 1) * d;
  det.origin[1] = -0.5 * (nv - 1) * d;
  return det;
}

Ellipsoid sphere(double x, double y, double z, double r, double density) {
  Ellipsoid e{};
  e.center[0] = x;
  e.center[1] = y;
  e.center[2] = z;
  e.semi_axes[0] = e.semi_axes[1] = e.semi_axes[2] = r;
  e.angle_deg = 0.0;
  e.density = density;
  return e;
}

struct Moments {
  double sum = 0.0;  // sum of p
  double u = 0.0;    // p-weighted mean u
  double v = 0.0;    // p-weighted mean v
};

Moments moments(const std::vector<float>& p, const fdk_detector& det) {
  Moments m;
  for (int j = 0; j < det.size[1]; ++j) {
    for (int i = 0; i < det.size[0]; ++i) {
      const double w = p[static_cast<size_t>(j) * det.size[0] + i];
      m.sum += w;
      m.u += w * (det.origin[0] + i * det.spacing[0]);
      m.v += w * (det.origin[1] + j * det.spacing[1]);
    }
  }
  if (m.sum != 0.0) {
    m.u /= m.sum;
    m.v /= m.sum;
  }
  return m;
}

std::vector<float> project(const std::vector<Ellipsoid>& ph, const fdk_view& v,
                           const fdk_detector& det) {
  std::vector<float> p(static_cast<size_t>(det.size[0]) * det.size[1]);
  fdk::phantom::project_view(ph, v, det, p.data());
  return p;
}

TEST(Phantom, SourceAndDetectorFollowRtk) {
  double s[3];
  fdk::phantom::source_position(make_view(0.0), s);
  EXPECT_NEAR(s[0], 0.0, 1e-9);
  EXPECT_NEAR(s[1], 0.0, 1e-9);
  EXPECT_NEAR(s[2], kSid, 1e-9);
  fdk::phantom::source_position(make_view(90.0), s);
  EXPECT_NEAR(s[0], kSid, 1e-9);
  EXPECT_NEAR(s[1], 0.0, 1e-9);
  EXPECT_NEAR(s[2], 0.0, 1e-9);

  // At gantry 0 the detector lies at z = sid - sdd, u along +x, v along +y.
  fdk_detector det = centred_detector(3, 3, 2.0);  // u, v in {-2, 0, 2}
  double p[3];
  fdk::phantom::pixel_position(make_view(0.0), det, 2, 0, p);
  EXPECT_NEAR(p[0], 2.0, 1e-9);
  EXPECT_NEAR(p[1], -2.0, 1e-9);
  EXPECT_NEAR(p[2], kSid - kSdd, 1e-9);
  // At gantry 90: rotated (u, v, sid - sdd) -> world Ry(90) * r
  // = (sid - sdd, v, -u).
  fdk::phantom::pixel_position(make_view(90.0), det, 2, 0, p);
  EXPECT_NEAR(p[0], kSid - kSdd, 1e-9);
  EXPECT_NEAR(p[1], -2.0, 1e-9);
  EXPECT_NEAR(p[2], -2.0, 1e-9);
}

TEST(Phantom, CentralChordOfSphereIsDiameterTimesDensity) {
  const double r = 20.0, rho = 1.5;
  const Ellipsoid e = sphere(0, 0, 0, r, rho);
  const double a[3] = {0, 0, -kSid}, b[3] = {0, 0, kSid};
  EXPECT_NEAR(fdk::phantom::chord_length(e, a, b), 2 * r, 1e-9);

  for (double g : {0.0, 33.0, 90.0, 180.0, 271.5}) {
    const fdk_detector det = centred_detector(1, 1, 1.0);
    const std::vector<float> p = project({e}, make_view(g), det);
    EXPECT_NEAR(p[0], 2 * r * rho, 1e-4) << "gantry " << g;
  }
  // Off-centre chord: a ray at distance h from the centre crosses
  // 2 sqrt(r^2 - h^2).
  const double h = 12.0;
  const double c[3] = {h, -kSid, 0}, d[3] = {h, kSid, 0};
  EXPECT_NEAR(fdk::phantom::chord_length(e, c, d),
              2 * std::sqrt(r * r - h * h), 1e-9);
  // A segment ending inside the sphere is clipped.
  const double in[3] = {0, 0, 5.0};
  EXPECT_NEAR(fdk::phantom::chord_length(e, a, in), r + 5.0, 1e-9);
}

TEST(Phantom, RayMissingTheSphereGivesZero) {
  const Ellipsoid e = sphere(0, 0, 0, 20.0, 1.0);
  // The shadow's radius is about 20 * 1.5 = 30: a pixel at u = 40 misses.
  fdk_detector det{};
  det.size[0] = det.size[1] = 1;
  det.spacing[0] = det.spacing[1] = 1.0;
  det.origin[0] = 40.0;
  det.origin[1] = 0.0;
  EXPECT_EQ(project({e}, make_view(0.0), det)[0], 0.0f);
  det.origin[0] = 0.0;
  det.origin[1] = -40.0;
  EXPECT_EQ(project({e}, make_view(123.0), det)[0], 0.0f);
  // Just inside the shadow it is not.
  det.origin[1] = -29.0;
  EXPECT_GT(project({e}, make_view(123.0), det)[0], 0.0f);
}

// Derivation (rotated = Ry(-g) * world, u = sdd * x_r / (sid - z_r)):
//  gantry 0:   (a, 0, 0) -> rotated (a, 0, 0)  -> u = +a * sdd / sid;
//  gantry 180: (a, 0, 0) -> rotated (-a, 0, 0) -> u = -a * sdd / sid;
//  gantry 90:  (a, 0, 0) -> rotated (0, 0, a)  -> u = 0 (on the central ray);
//              (0, 0, a) -> rotated (-a, 0, 0) -> u = -a * sdd / sid.
TEST(Phantom, OffsetSphereLandsOnTheDerivedSide) {
  const double a = 30.0, r = 5.0;
  const fdk_detector det = centred_detector(241, 41, 0.5);  // u in +-60
  const double mag = kSdd / kSid;
  {
    const std::vector<Ellipsoid> ph = {sphere(a, 0, 0, r, 1.0)};
    const Moments m0 = moments(project(ph, make_view(0.0), det), det);
    EXPECT_NEAR(m0.u, a * mag, 0.05);
    EXPECT_NEAR(m0.v, 0.0, 1e-6);
    const Moments m180 = moments(project(ph, make_view(180.0), det), det);
    EXPECT_NEAR(m180.u, -a * mag, 0.05);
    const Moments m90 = moments(project(ph, make_view(90.0), det), det);
    EXPECT_NEAR(m90.u, 0.0, 0.05);
    // Magnified by sdd / (sid - a) there: more total on the detector.
    EXPECT_GT(m90.sum, m0.sum);
  }
  {
    const std::vector<Ellipsoid> ph = {sphere(0, 0, a, r, 1.0)};
    const Moments m90 = moments(project(ph, make_view(90.0), det), det);
    EXPECT_NEAR(m90.u, -a * mag, 0.05);
  }
  {
    // +y stays +v at every angle (the rotation axis is y).
    const fdk_detector tall = centred_detector(41, 241, 0.5);
    const std::vector<Ellipsoid> ph = {sphere(0, a, 0, r, 1.0)};
    for (double g : {0.0, 77.0, 180.0, 300.0}) {
      const Moments m = moments(project(ph, make_view(g), tall), tall);
      EXPECT_NEAR(m.v, a * mag, 0.05) << "gantry " << g;
      EXPECT_NEAR(m.u, 0.0, 1e-6) << "gantry " << g;
    }
  }
}

TEST(Phantom, OffsetsFollowRtk) {
  // A point on the central ray (x_r = source_offset_x, y_r = source_offset_y)
  // projects to u = sox - pox, v = soy - poy.
  fdk_view v = make_view(0.0);
  v.source_offset_x = 10.0;
  v.source_offset_y = 5.0;
  v.projection_offset_x = 30.0;
  v.projection_offset_y = -7.0;
  fdk_detector det = centred_detector(161, 161, 0.25);  // +-20 around
  det.origin[0] += -20.0;                                 // (-20, 12)
  det.origin[1] += 12.0;
  const std::vector<Ellipsoid> ph = {sphere(10.0, 5.0, 100.0, 2.0, 1.0)};
  const Moments m = moments(project(ph, v, det), det);
  EXPECT_NEAR(m.u, 10.0 - 30.0, 0.02);
  EXPECT_NEAR(m.v, 5.0 + 7.0, 0.02);

  // The same at gantry 90, where the central ray runs along x: the point is
  // world Ry(90) * (sox, soy, z) = (z, soy, -sox).
  v.gantry_angle_deg = 90.0;
  const std::vector<Ellipsoid> ph90 = {sphere(100.0, 5.0, -10.0, 2.0, 1.0)};
  const Moments m90 = moments(project(ph90, v, det), det);
  EXPECT_NEAR(m90.u, 10.0 - 30.0, 0.02);
  EXPECT_NEAR(m90.v, 5.0 + 7.0, 0.02);
}

TEST(Phantom, TiltsFollowTheBriefedRotation) {
  // world = Ry(g) Rx(oop) Rz(ip) * rotated. In-plane 90 at gantry 0: rotated
  // = Rz(-90) * world, so world (a, 0, 0) -> rotated (0, -a, 0) -> v = -a*mag.
  fdk_view v = make_view(0.0);
  v.in_plane_angle_deg = 90.0;
  const fdk_detector det = centred_detector(121, 121, 1.0);
  const double a = 30.0, mag = kSdd / kSid;
  const Moments m = moments(project({sphere(a, 0, 0, 3.0, 1.0)}, v, det), det);
  EXPECT_NEAR(m.u, 0.0, 0.05);
  EXPECT_NEAR(m.v, -a * mag, 0.05);
  // Out-of-plane 90 at gantry 0: rotated = Rx(-90) * world, so world
  // (0, 0, a) -> rotated (0, a, 0) -> v = +a * mag.
  v.in_plane_angle_deg = 0.0;
  v.out_of_plane_angle_deg = 90.0;
  const Moments m2 = moments(project({sphere(0, 0, a, 3.0, 1.0)}, v, det), det);
  EXPECT_NEAR(m2.u, 0.0, 0.05);
  EXPECT_NEAR(m2.v, a * mag, 0.05);
}

TEST(Phantom, CentredSphereIsRotationInvariant) {
  const std::vector<Ellipsoid> ph = {sphere(0, 0, 0, 40.0, 1.0)};
  const fdk_detector det = centred_detector(64, 48, 2.0);
  const std::vector<float> ref = project(ph, make_view(0.0), det);
  for (double g : {17.0, 90.0, 135.5, 180.0, 299.0, -45.0}) {
    const std::vector<float> p = project(ph, make_view(g), det);
    double num = 0, den = 0;
    for (size_t k = 0; k < p.size(); ++k) {
      num += (p[k] - ref[k]) * double(p[k] - ref[k]);
      den += ref[k] * double(ref[k]);
    }
    EXPECT_LT(std::sqrt(num / den), 1e-5) << "gantry " << g;
  }
}

TEST(Phantom, MassScalesWithMagnificationSquared) {
  // For a small object, sum(p) du dv = volume * density * (sdd / d)^2, d the
  // source-to-object distance.
  const double r = 5.0, rho = 1.3;
  const double mass = 4.0 / 3.0 * kPi * r * r * r * rho;
  const fdk_detector det = centred_detector(200, 200, 0.125);  // +-12.5
  const double area = det.spacing[0] * det.spacing[1];
  {
    const Moments m = moments(
        project({sphere(0, 0, 0, r, rho)}, make_view(0.0), det), det);
    const double expect = mass * (kSdd / kSid) * (kSdd / kSid);
    EXPECT_NEAR(m.sum * area, expect, 2e-3 * expect);
  }
  {
    // 200 towards the source at gantry 0: magnification 1500 / 800.
    const Moments m = moments(
        project({sphere(0, 0, 200.0, r, rho)}, make_view(0.0), det), det);
    const double mag = kSdd / (kSid - 200.0);
    EXPECT_NEAR(m.sum * area, mass * mag * mag, 2e-3 * mass * mag * mag);
  }
}

TEST(Phantom, SheppLoganDensitiesAndShape) {
  const double s = 90.0;
  const std::vector<Ellipsoid> ph = fdk::phantom::shepp_logan_3d(s);
  ASSERT_EQ(ph.size(), 10u);
  // Skull semi-axes along our (x, y, z): (0.69, 0.90, 0.92) * scale.
  EXPECT_DOUBLE_EQ(ph[0].semi_axes[0], 0.69 * s);
  EXPECT_DOUBLE_EQ(ph[0].semi_axes[1], 0.90 * s);
  EXPECT_DOUBLE_EQ(ph[0].semi_axes[2], 0.92 * s);
  EXPECT_NEAR(fdk::phantom::density_at(ph, 0, 0, 0), 1.02, 1e-12);
  EXPECT_NEAR(fdk::phantom::density_at(ph, 0.68 * s, 0, 0), 2.0, 1e-12);
  EXPECT_NEAR(fdk::phantom::density_at(ph, 0, 0.89 * s, 0), 2.0, 1e-12);
  EXPECT_NEAR(fdk::phantom::density_at(ph, 0, 0, 0.91 * s), 2.0, 1e-12);
  EXPECT_NEAR(fdk::phantom::density_at(ph, 0, 0, 0.93 * s), 0.0, 1e-12);
  EXPECT_NEAR(fdk::phantom::density_at(ph, 0, 0.91 * s, 0), 0.0, 1e-12);
  // The two large dark ellipsoids (1.00) and the large 1.03 one, at their
  // centres.
  for (int k : {2, 3}) {
    EXPECT_NEAR(fdk::phantom::density_at(ph, ph[k].center[0], ph[k].center[1],
                                         ph[k].center[2]),
                1.00, 1e-12);
  }
  EXPECT_NEAR(fdk::phantom::density_at(ph, ph[4].center[0], ph[4].center[1],
                                       ph[4].center[2]),
              1.03, 1e-12);
  // Kak-Slaney's features at z_KS = -0.25 sit at our y = -0.25 * scale, and
  // the classic slice is upright: the small ellipsoids at y_KS = -0.65 are at
  // our z = +0.65 * scale (down in an axial image).
  EXPECT_NEAR(ph[2].center[1], -0.25 * s, 1e-12);
  EXPECT_NEAR(ph[6].center[2], 0.65 * s, 1e-12);
  EXPECT_NEAR(fdk::phantom::density_at(ph, -0.08 * s, -0.25 * s, 0.65 * s),
              1.03, 1e-12);
  EXPECT_THROW(fdk::phantom::shepp_logan_3d(0.0), std::invalid_argument);
}

TEST(Phantom, ModifiedSheppLoganHasTheHigherContrastDensities) {
  const double s = 90.0;
  const std::vector<Ellipsoid> ph = fdk::phantom::modified_shepp_logan_3d(s);
  const std::vector<Ellipsoid> original = fdk::phantom::shepp_logan_3d(s);
  ASSERT_EQ(ph.size(), original.size());
  for (size_t k = 0; k < ph.size(); ++k) {  // the same shapes
    for (int a = 0; a < 3; ++a) {
      EXPECT_EQ(ph[k].center[a], original[k].center[a]);
      EXPECT_EQ(ph[k].semi_axes[a], original[k].semi_axes[a]);
    }
    EXPECT_EQ(ph[k].angle_deg, original[k].angle_deg);
  }
  EXPECT_NEAR(fdk::phantom::density_at(ph, 0.68 * s, 0, 0), 1.0, 1e-12);  // skull
  EXPECT_NEAR(fdk::phantom::density_at(ph, 0, 0, 0), 0.2, 1e-12);         // brain
  for (int k : {2, 3}) {  // the large dark ellipsoids
    EXPECT_NEAR(fdk::phantom::density_at(ph, ph[k].center[0], ph[k].center[1], ph[k].center[2]), 0.0,
                1e-12);
  }
  EXPECT_NEAR(fdk::phantom::density_at(ph, ph[4].center[0], ph[4].center[1], ph[4].center[2]), 0.3,
              1e-12);
  EXPECT_NEAR(fdk::phantom::density_at(ph, -0.08 * s, -0.25 * s, 0.65 * s), 0.3, 1e-12);
  EXPECT_THROW(fdk::phantom::modified_shepp_logan_3d(-1.0), std::invalid_argument);
}

TEST(Phantom, DistanceToSurface) {
  using fdk::phantom::distance_to_surface;
  const Ellipsoid s = sphere(1, 2, 3, 4.0, 1.0);
  EXPECT_NEAR(distance_to_surface(s, 1, 2, 3), 4.0, 1e-9);
  EXPECT_NEAR(distance_to_surface(s, 1, 2, 11), 4.0, 1e-9);
  EXPECT_NEAR(distance_to_surface(s, 2, 2, 3), 3.0, 1e-9);

  Ellipsoid e{};
  e.semi_axes[0] = 3.0;
  e.semi_axes[1] = 2.0;
  e.semi_axes[2] = 1.0;
  e.density = 1.0;
  EXPECT_NEAR(distance_to_surface(e, 0, 0, 0), 1.0, 1e-9);
  EXPECT_NEAR(distance_to_surface(e, 0, 0, 0.5), 0.5, 1e-9);
  EXPECT_NEAR(distance_to_surface(e, 5, 0, 0), 2.0, 1e-9);
  EXPECT_NEAR(distance_to_surface(e, 0, 0, 3), 2.0, 1e-9);
  EXPECT_NEAR(distance_to_surface(e, 2.9, 0, 0), 0.1, 1e-9);
  // Inside on the long axis, beyond the centre of curvature of the tip
  // (a - b^2/a = 8/3): the closest point is off the axis.
  // x = a^2 x0 / (a^2 - c^2) = 2.25, d^2 = 0.25^2 + c^2 (1 - (x/a)^2).
  EXPECT_NEAR(distance_to_surface(e, 2.0, 0, 0), std::sqrt(0.5), 1e-9);

  // Against brute force over the surface, for a rotated ellipsoid.
  e.center[0] = 0.5;
  e.center[1] = -1.0;
  e.center[2] = 2.0;
  e.angle_deg = 37.0;
  const double pts[][3] = {{0.5, -1.0, 2.0}, {1.7, -0.2, 2.3}, {4.0, 1.0, 0.0},
                           {0.6, -1.1, 2.4}, {-2.0, -1.0, 2.1}, {0.5, 1.5, 2.0}};
  const double ca = std::cos(37.0 * kPi / 180), sa = std::sin(37.0 * kPi / 180);
  for (const auto& p : pts) {
    double best = 1e300;
    const int n = 1000;
    for (int it = 0; it <= n; ++it) {
      const double th = kPi * it / n;
      for (int ip = 0; ip < 2 * n; ++ip) {
        const double ph = kPi * ip / n;
        const double q[3] = {3.0 * std::sin(th) * std::cos(ph),
                             2.0 * std::cos(th),
                             1.0 * std::sin(th) * std::sin(ph)};
        // world = Ry(angle) * q + centre.
        const double w[3] = {ca * q[0] + sa * q[2] + e.center[0],
                             q[1] + e.center[1],
                             -sa * q[0] + ca * q[2] + e.center[2]};
        const double d2 = (w[0] - p[0]) * (w[0] - p[0]) +
                          (w[1] - p[1]) * (w[1] - p[1]) +
                          (w[2] - p[2]) * (w[2] - p[2]);
        if (d2 < best) best = d2;
      }
    }
    const double exact = distance_to_surface(e, p[0], p[1], p[2]);
    EXPECT_LE(exact, std::sqrt(best) + 1e-9);
    EXPECT_GE(exact, std::sqrt(best) - 1e-2);
  }
}

TEST(Phantom, ViewOfUniformAndExplicitScans) {
  fdk_config c{};
  c.detector = centred_detector(8, 6, 1.0);
  c.scan.kind = FDK_SCAN_UNIFORM;
  c.scan.num_views = 8;
  c.scan.first_angle_deg = 10.0;
  c.scan.arc_deg = -200.0;
  c.scan.uniform = make_view(999.0);  // its gantry angle is ignored
  c.scan.uniform.source_offset_x = 3.0;
  const fdk_view v3 = fdk::phantom::view_of(c, 3);
  EXPECT_DOUBLE_EQ(v3.gantry_angle_deg, 10.0 + 3 * -200.0 / 8);
  EXPECT_DOUBLE_EQ(v3.sid, kSid);
  EXPECT_DOUBLE_EQ(v3.source_offset_x, 3.0);
  EXPECT_THROW(fdk::phantom::view_of(c, 8), std::out_of_range);
  EXPECT_THROW(fdk::phantom::view_of(c, -1), std::out_of_range);

  // project(config) == project_view(view_of(config)).
  const std::vector<Ellipsoid> ph = {sphere(1, 2, 3, 4.0, 1.0)};
  std::vector<float> a(48), b(48);
  fdk::phantom::project(ph, c, 3, a.data());
  fdk::phantom::project_view(ph, v3, c.detector, b.data());
  EXPECT_EQ(a, b);

  std::vector<fdk_view> views(2, make_view(0.0));
  views[1].gantry_angle_deg = 45.0;
  c.scan.kind = FDK_SCAN_VIEWS;
  c.scan.num_views = 2;
  c.scan.views = views.data();
  EXPECT_DOUBLE_EQ(fdk::phantom::view_of(c, 1).gantry_angle_deg, 45.0);
  c.scan.kind = FDK_SCAN_MATRICES;
  EXPECT_THROW(fdk::phantom::view_of(c, 0), std::invalid_argument);
}

}  // namespace
