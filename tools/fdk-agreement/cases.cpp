#include "cases.hpp"

#include <cmath>
#include <cstdint>

namespace agreement {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kSid = 1000, kSdd = 1500;
constexpr int kColumns = 192, kRows = 192;
constexpr double kPixel = 2.4;

fdk_detector centred_detector() {
  fdk_detector d{};
  d.size[0] = kColumns;
  d.size[1] = kRows;
  d.spacing[0] = d.spacing[1] = kPixel;
  d.origin[0] = -0.5 * (kColumns - 1) * kPixel;
  d.origin[1] = -0.5 * (kRows - 1) * kPixel;
  return d;
}

// A quarter of the width on one side of the principal point: half fan.
fdk_detector half_fan_detector(int side = 1) {
  fdk_detector d = centred_detector();
  d.origin[0] = side > 0 ? -0.25 * kColumns * kPixel + 0.5 * kPixel
                         : -0.75 * kColumns * kPixel + 0.5 * kPixel;
  return d;
}

fdk_view base_view() {
  fdk_view v{};
  v.sid = kSid;
  v.sdd = kSdd;
  return v;
}

std::vector<fdk_view> arc(int n, double first_deg, double arc_deg, const fdk_view& shared) {
  std::vector<fdk_view> views(static_cast<size_t>(n), shared);
  for (int i = 0; i < n; ++i) views[static_cast<size_t>(i)].gantry_angle_deg = first_deg + i * arc_deg / n;
  return views;
}

// A short scan of 1-degree steps over 180 degrees plus the fan plus 4.
std::vector<fdk_view> short_arc(const fdk_detector& d, const fdk_view& shared, double extra_deg = 0) {
  const double half = 0.5 * d.size[0] * d.spacing[0];
  const double fan = 2 * std::atan(half / kSdd) * 180 / kPi;
  const int n = static_cast<int>(std::ceil(180 + fan + 4 + extra_deg)) + 1;
  return arc(n, 20, n, shared);
}

// A deterministic generator (the matrix must not depend on the library).
struct Lcg {
  uint64_t state;
  double uniform(double lo, double hi) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * static_cast<double>(state >> 11) / 9007199254740992.0;
  }
};

Case make(const std::string& name, const std::string& what, const fdk_detector& d, std::vector<fdk_view> views,
          bool matrices = false) {
  Case c;
  c.name = name;
  c.what = what;
  c.detector = d;
  c.views = std::move(views);
  c.matrices = matrices;
  return c;
}

}  // namespace

fdk_volume case_volume() {
  fdk_volume v{};
  for (int a = 0; a < 3; ++a) {
    v.size[a] = kN;
    v.spacing[a] = kVoxel;
    v.origin[a] = -0.5 * (kN - 1) * kVoxel;
  }
  return v;
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  const fdk_detector centred = centred_detector();
  fdk_view v = base_view();
  cases.push_back(make("full", "full scan, 360 views, centred", centred, arc(360, 0, 360, v)));
  cases.push_back(make("short", "short scan (Parker), 204 views", centred, short_arc(centred, v)));
  cases.push_back(make("cw", "full scan, clockwise from 30 deg", centred, arc(360, 30, -360, v)));
  // rtkfdk's windows: --hannY alone, --hann alone, and the two together.
  cases.push_back(make("hann_y", "full scan, --hannY 0.5", centred, arc(360, 0, 360, v)));
  cases.back().hann_y = 0.5;
  cases.push_back(make("hann", "full scan, --hann 0.7", centred, arc(360, 0, 360, v)));
  cases.back().hann = 0.7;
  cases.push_back(make("hann_uv", "full scan, --hann 0.7 --hannY 0.3", centred, arc(360, 0, 360, v)));
  cases.back().hann = 0.7;
  cases.back().hann_y = 0.3;
  {
    fdk_detector narrow = centred;  // its circle (radius 107) misses the volume's corners
    narrow.size[0] = 136;
    narrow.origin[0] = -0.5 * (136 - 1) * kPixel;
    cases.push_back(make("narrow", "full scan, detector narrower than the volume", narrow, arc(360, 0, 360, v)));
  }
  {
    Lcg rng{17};
    std::vector<fdk_view> views = arc(300, 0, 360, v);
    for (auto& x : views) x.gantry_angle_deg += rng.uniform(-0.35, 0.35);
    cases.push_back(make("irregular", "300 views at jittered angles", centred, views));
  }
  const auto detector_offset = [&](const char* name, const char* what, double pox, double poy) {
    fdk_view o = v;
    o.projection_offset_x = pox;
    o.projection_offset_y = poy;
    cases.push_back(make(name, what, centred, arc(360, 0, 360, o)));
  };
  detector_offset("det_offset", "detector offset (12, -9) mm", 12, -9);
  detector_offset("det_offset_u", "detector offset u 12 mm", 12, 0);
  detector_offset("det_offset_v", "detector offset v -9 mm", 0, -9);
  fdk_view w = v;
  w.source_offset_x = 5;
  cases.push_back(make("src_offset_x", "source offset x 5 mm (stays full fan)", centred, arc(360, 0, 360, w)));
  w = v;
  w.source_offset_y = 15;
  cases.push_back(make("src_offset_y", "source offset y 15 mm", centred, arc(360, 0, 360, w)));
  w = v;
  w.in_plane_angle_deg = 2;
  w.out_of_plane_angle_deg = -3;
  cases.push_back(make("tilts", "in-plane 2, out-of-plane -3 deg", centred, arc(360, 0, 360, w)));
  {
    Lcg rng{29};
    std::vector<fdk_view> views = arc(360, 0, 360, v);
    for (auto& x : views) {
      x.sid += rng.uniform(-3, 3);
      x.sdd += rng.uniform(-3, 3);
      x.source_offset_x = rng.uniform(-1, 1);
      x.projection_offset_x = rng.uniform(-2, 2);
      x.projection_offset_y = rng.uniform(-2, 2);
    }
    cases.push_back(make("per_view", "per-view RTK parameters (calibrated jitter)", centred, views));
    cases.push_back(make("matrices", "the same views as 3x4 matrices", centred, views, true));
  }
  const fdk_detector half = half_fan_detector(1);
  cases.push_back(make("half_fan", "half fan (detector 1/4 : 3/4)", half, arc(360, 0, 360, v)));
  cases.push_back(make("half_fan_left", "half fan, long side -u", half_fan_detector(-1), arc(360, 0, 360, v)));
  w = v;
  w.source_offset_x = 20;
  cases.push_back(make("half_fan_src_x", "half fan, source offset x 20 mm", half, arc(360, 0, 360, w)));
  w = v;
  w.source_offset_x = -15;
  w.source_offset_y = 10;
  w.projection_offset_y = 6;
  cases.push_back(
      make("half_fan_src_xy_cw", "half fan, source (-15, 10), det v 6, clockwise", half, arc(360, 0, -360, w)));
  w = v;
  w.projection_offset_x = 30;
  cases.push_back(make("half_fan_det_u", "half fan by projection offset x 30 mm", half, arc(360, 0, 360, w)));
  w = v;
  w.in_plane_angle_deg = 1;
  w.out_of_plane_angle_deg = 2;
  cases.push_back(make("half_fan_tilts", "half fan, in-plane 1, out-of-plane 2 deg", half, arc(360, 0, 360, w)));
  {
    Lcg rng{41};
    std::vector<fdk_view> views = arc(360, 0, 360, v);
    for (auto& x : views) {
      x.gantry_angle_deg += rng.uniform(-0.3, 0.3);
      x.source_offset_x = 10 + rng.uniform(-1, 1);
      x.projection_offset_x = rng.uniform(-2, 2);
    }
    cases.push_back(make("half_fan_per_view", "half fan, per-view jitter, source x 10 mm", half, views));
    cases.push_back(make("half_fan_matrices", "the same as 3x4 matrices", half, views, true));
  }
  cases.push_back(make("half_fan_short", "half fan with a short scan (Parker x Wang)", half,
                       short_arc(half, v, 60)));
  cases.back().offset_detector = FDK_ON;  // rtkfdk's product; fdk's AUTO leaves a short scan full fan
  return cases;
}

}  // namespace agreement
