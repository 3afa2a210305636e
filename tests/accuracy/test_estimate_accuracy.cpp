// Issue 41, point 3: a reconstruction with the geometry estimate is within
// 5 % of the true geometry's error against the phantom. Through the public C
// API only: exact line integrals (adapters/phantom) of a detector that is
// off along u and turned in its plane, while the nominal geometry says
// neither; fdk_estimator_* estimates from the views, fdk_apply_geometry_estimate
// corrects the nominal views, and the same views are reconstructed three
// times (nominal, estimated, true geometry) on the CPU backend. The error is
// the RMS difference from the phantom's densities over a central cylinder,
// away from every surface, where what remains is the geometry's (and the
// noise's) rather than the voxel's blur of an edge.
//
// Geometry: that of tests/unit/test_geometry_estimator.cpp (SID 1000, SDD
// 1500, 160 x 128 pixels of 1.5 mm, 360 views); volume 96 x 64 x 96 voxels
// of 1.6 mm.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "fdk/fdk.h"
#include "fdk/phantom.hpp"

namespace {

using fdk::phantom::Ellipsoid;

constexpr double kPi = 3.14159265358979323846;
constexpr int kColumns = 160, kRows = 128;
constexpr double kPixel = 1.5;
constexpr int kNx = 96, kNy = 64;
constexpr double kVoxel = 1.6;
constexpr double kRegionRadius = 48, kRegionHalfHeight = 16, kSurfaceMargin = 2;  // mm
constexpr double kBar = 1.05;  // issue 41: within 5 % of the true geometry's error

struct Truth {
  double offset_pixels, tilt_deg, photons;  // photons 0: noiseless
};

struct Scan {
  const char* name;
  int views;
  double arc_deg;
  double axis_fraction;  // where the rotation axis meets the detector, along u
};

Ellipsoid ellipsoid(double x, double y, double z, double a, double b, double c, double density) {
  return Ellipsoid{{x, y, z}, {a, b, c}, 0.0, density};
}

// The heads' densities scaled so that the brain attenuates like water
// (0.02/mm) and Poisson counts stay above zero behind the skull.
std::vector<Ellipsoid> in_water_units(std::vector<Ellipsoid> p) {
  for (Ellipsoid& e : p) e.density *= 0.02;
  return p;
}

// A low-contrast machined part: an aluminium-like cylinder (axis y, taller
// than the field) with holes at several radii and heights.
std::vector<Ellipsoid> machined_part() {
  return {ellipsoid(0, 0, 0, 60, 1e4, 60, 0.02),    ellipsoid(25, 0, 10, 6, 1e4, 6, -0.02),
          ellipsoid(-30, -8, -15, 4, 30, 4, -0.02), ellipsoid(5, 12, -35, 8, 20, 8, -0.02),
          ellipsoid(-10, 0, 40, 3, 1e4, 3, -0.02),  ellipsoid(40, 10, -20, 5, 25, 10, -0.02)};
}

fdk_config scan_config(const Scan& s) {
  fdk_config c;
  fdk_config_init(&c);
  c.volume.size[0] = c.volume.size[2] = kNx;
  c.volume.size[1] = kNy;
  for (int a = 0; a < 3; ++a) {
    c.volume.spacing[a] = kVoxel;
    c.volume.origin[a] = -0.5 * (c.volume.size[a] - 1) * kVoxel;
  }
  c.detector.size[0] = kColumns;
  c.detector.size[1] = kRows;
  c.detector.spacing[0] = c.detector.spacing[1] = kPixel;
  c.detector.origin[0] = -s.axis_fraction * (kColumns - 1) * kPixel;
  c.detector.origin[1] = -0.5 * (kRows - 1) * kPixel;
  c.scan.num_views = s.views;
  c.scan.arc_deg = s.arc_deg;
  c.scan.uniform.sid = 1000;
  c.scan.uniform.sdd = 1500;
  c.backend = FDK_BACKEND_CPU;
  return c;
}

// Every view of `c`, as the true detector (off by `t`) measured it.
std::vector<float> project(const std::vector<Ellipsoid>& phantom, const fdk_config& c, const Truth& t) {
  const size_t per = static_cast<size_t>(kColumns) * kRows;
  std::vector<float> p(per * static_cast<size_t>(c.scan.num_views));
  std::mt19937 rng(41);
  for (int v = 0; v < c.scan.num_views; ++v) {
    fdk_view view = fdk::phantom::view_of(c, v);
    view.projection_offset_x += t.offset_pixels * kPixel;
    view.in_plane_angle_deg += t.tilt_deg;
    float* out = p.data() + per * static_cast<size_t>(v);
    fdk::phantom::project_view(phantom, view, c.detector, out);
    if (t.photons <= 0) continue;
    for (size_t i = 0; i < per; ++i) {
      std::poisson_distribution<long> counts(t.photons * std::exp(-static_cast<double>(out[i])));
      out[i] = static_cast<float>(-std::log(static_cast<double>(std::max<long>(1, counts(rng))) / t.photons));
    }
  }
  return p;
}

// `c` with every view given explicitly: nominal, moved by `offset_pixels`
// and `tilt_deg`.
struct PerView {
  fdk_config config;
  std::vector<fdk_view> views;
};
PerView per_view(const fdk_config& c, double offset_pixels, double tilt_deg) {
  PerView out{c, {}};
  for (int v = 0; v < c.scan.num_views; ++v) {
    fdk_view view = fdk::phantom::view_of(c, v);
    view.projection_offset_x += offset_pixels * kPixel;
    view.in_plane_angle_deg += tilt_deg;
    out.views.push_back(view);
  }
  return out;
}

std::vector<float> reconstruct(const PerView& geometry, const std::vector<float>& p) {
  fdk_config c = geometry.config;
  c.scan.kind = FDK_SCAN_VIEWS;
  c.scan.views = geometry.views.data();
  fdk_context* ctx = nullptr;
  if (fdk_create(&c, &ctx) != FDK_OK) {
    ADD_FAILURE() << "create: " << fdk_last_create_error();
    return {};
  }
  const size_t per = static_cast<size_t>(kColumns) * kRows, plane = static_cast<size_t>(kNx) * kNx;
  std::vector<float> volume(plane * kNy, 0.0f);
  bool ok = true;
  for (int v = 0; v < c.scan.num_views && ok; ++v)
    ok = fdk_push_projection(ctx, v, p.data() + per * static_cast<size_t>(v), kColumns * sizeof(float), nullptr) == FDK_OK;
  ok = ok && fdk_finish(ctx) == FDK_OK;
  int32_t slabs = 0;
  ok = ok && fdk_slab_count(ctx, &slabs) == FDK_OK;
  for (int32_t s = 0; s < slabs && ok; ++s) {
    fdk_slab_info info{};
    info.struct_size = sizeof info;
    ok = fdk_get_slab_info(ctx, s, &info) == FDK_OK &&
         fdk_read_slab(ctx, s, volume.data() + plane * static_cast<size_t>(info.y_begin), info.byte_size) == FDK_OK;
  }
  if (!ok) ADD_FAILURE() << fdk_last_error(ctx);
  fdk_destroy(ctx);
  return ok ? volume : std::vector<float>{};
}

// RMS difference from the phantom over the central cylinder, at least
// kSurfaceMargin from every surface.
double rms_error(const std::vector<Ellipsoid>& phantom, const std::vector<float>& volume) {
  if (volume.empty()) return INFINITY;
  const double x0 = -0.5 * (kNx - 1) * kVoxel, y0 = -0.5 * (kNy - 1) * kVoxel;
  double sum = 0;
  long n = 0;
  for (int y = 0; y < kNy; ++y)
    for (int z = 0; z < kNx; ++z)
      for (int x = 0; x < kNx; ++x) {
        const double px = x0 + x * kVoxel, py = y0 + y * kVoxel, pz = x0 + z * kVoxel;
        if (px * px + pz * pz > kRegionRadius * kRegionRadius || std::fabs(py) > kRegionHalfHeight) continue;
        bool near = false;
        for (const Ellipsoid& e : phantom) near = near || fdk::phantom::distance_to_surface(e, px, py, pz) < kSurfaceMargin;
        if (near) continue;
        const double d = volume[(static_cast<size_t>(y) * kNx + z) * kNx + x] - fdk::phantom::density_at(phantom, px, py, pz);
        sum += d * d;
        ++n;
      }
  return n ? std::sqrt(sum / static_cast<double>(n)) : INFINITY;
}

struct Outcome {
  fdk_geometry_estimate estimate;
  double nominal, estimated, truth;  // RMS errors
};

Outcome run_case(const std::vector<Ellipsoid>& phantom, const Scan& s, const Truth& t) {
  const fdk_config c = scan_config(s);
  const std::vector<float> p = project(phantom, c, t);
  Outcome out{};
  fdk_geometry_estimate_init(&out.estimate);
  fdk_estimator* estimator = nullptr;
  EXPECT_EQ(fdk_estimator_create(&c, &estimator), FDK_OK) << fdk_last_create_error();
  const size_t per = static_cast<size_t>(kColumns) * kRows;
  for (int v = 0; v < c.scan.num_views; ++v)
    EXPECT_EQ(fdk_estimator_push(estimator, v, p.data() + per * static_cast<size_t>(v), 0), FDK_OK);
  EXPECT_EQ(fdk_estimator_estimate(estimator, &out.estimate), FDK_OK) << fdk_estimator_last_error(estimator);
  fdk_estimator_destroy(estimator);
  PerView estimated = per_view(c, 0, 0);
  for (fdk_view& view : estimated.views) EXPECT_EQ(fdk_apply_geometry_estimate(&out.estimate, &view, &view), FDK_OK);
  out.nominal = rms_error(phantom, reconstruct(per_view(c, 0, 0), p));
  out.estimated = rms_error(phantom, reconstruct(estimated, p));
  out.truth = rms_error(phantom, reconstruct(per_view(c, t.offset_pixels, t.tilt_deg), p));
  return out;
}

void print(const char* scan, const char* phantom, const Truth& t, const Outcome& o) {
  std::printf("[estimate] %-5s %-5s off %5.1f tilt %5.2f ph %6.0f | rms nominal %.3e estimate %.3e truth %.3e "
              "(estimate / truth %.3f) | off err %6.3f tilt %s%6.3f conf %.2f\n",
              scan, phantom, t.offset_pixels, t.tilt_deg, t.photons, o.nominal, o.estimated, o.truth,
              o.estimated / o.truth, o.estimate.offset_u_pixels - t.offset_pixels,
              o.estimate.flags & FDK_ESTIMATE_TILT ? "err " : "declined, truth ", o.estimate.flags & FDK_ESTIMATE_TILT ? o.estimate.tilt_deg - t.tilt_deg : t.tilt_deg,
              o.estimate.confidence);
}

std::vector<Ellipsoid> head() { return in_water_units(fdk::phantom::shepp_logan_3d(80)); }

const Scan kFull{"full", 360, 360, 0.5};
const Scan kShort{"short", 200, 180 + 2 * std::atan(0.5 * kColumns * kPixel / 1500.0) * 180 / kPi, 0.5};
const Scan kHalf{"half", 360, 360, 0.25};

}  // namespace

// The head (with and without noise) and the machined part half-fan, each
// with an offset and a tilt: the estimate's error within 5 % of the true
// geometry's. Without noise the nominal geometry's error is beyond that
// (the bar can fail); at 1e4 photons the noise hides the misalignment in
// this measure (the nominal geometry's blur even averages some noise away).
TEST(EstimateAccuracy, ReconstructionWithTheEstimateIsWithinFivePercentOfTheTruth) {
  struct C {
    const char* name;
    std::vector<Ellipsoid> phantom;
    Scan scan;
    Truth truth;
  };
  for (const C& c : {C{"head", head(), kFull, {2, 0.3, 0}}, C{"head", head(), kFull, {2, 0.3, 1e4}},
                     C{"part", machined_part(), kHalf, {-2, -0.3, 0}}}) {
    const Outcome o = run_case(c.phantom, c.scan, c.truth);
    print(c.scan.name, c.name, c.truth, o);
    EXPECT_LE(o.estimated, kBar * o.truth) << c.name << " " << c.scan.name;
    if (c.truth.photons == 0) {
      EXPECT_GT(o.nominal, kBar * o.truth) << c.name << " " << c.scan.name << ": the nominal geometry is as good";
    }
  }
}

// The matrix of docs/ACCURACY.md ("The estimate applied"), run by hand:
//   test_estimate_accuracy --gtest_also_run_disabled_tests --gtest_filter='*Matrix*'
TEST(EstimateAccuracy, DISABLED_Matrix) {
  struct P {
    const char* name;
    std::vector<Ellipsoid> phantom;
  };
  const char* only = std::getenv("FDK_MATRIX_SCANS");  // e.g. "short,half"
  for (const Scan& s : {kFull, kShort, kHalf}) {
    if (only && !std::strstr(only, s.name)) continue;
    for (const P& p : {P{"head", head()}, P{"part", machined_part()}})
      for (const Truth& t : {Truth{0.3, 0.05, 0}, Truth{-2, -0.3, 0}, Truth{8, 1.0, 0}, Truth{2, 0.3, 1e4},
                             Truth{-0.3, -1.0, 1e5}})
        print(s.name, p.name, t, run_case(p.phantom, s, t));
  }
}
