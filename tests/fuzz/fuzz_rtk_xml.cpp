// libFuzzer target: the RTK XML geometry parser. Failures must be
// fdk::adapters::Error; what parses must write and parse back to the same
// views (for values of realistic magnitude).
#include <fdk/adapters/error.hpp>
#include <fdk/adapters/geometry_io.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

namespace {
bool realistic(const fdk_view& v) {
  const double x[9] = {v.gantry_angle_deg, v.sid, v.sdd, v.source_offset_x, v.source_offset_y,
                       v.projection_offset_x, v.projection_offset_y, v.in_plane_angle_deg,
                       v.out_of_plane_angle_deg};
  for (double d : x) {
    if (!(std::fabs(d) <= 1e5)) return false;
  }
  return v.sid >= 1e-3 && v.sdd >= 1e-3;
}
double wrap(double a) {
  double r = std::fmod(a, 360.0);
  if (r < 0) r += 360.0;
  return r >= 360.0 ? r - 360.0 : r;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fdk::adapters;
  std::vector<fdk_view> views;
  try {
    views = parse_rtk_geometry(std::string(reinterpret_cast<const char*>(data), size), "fuzz.xml");
  } catch (const Error&) {
    return 0;
  }
  if (views.empty()) __builtin_trap();
  for (const fdk_view& v : views) {
    if (!realistic(v)) return 0;
  }
  // Round trip: must parse (matrices consistent) and give the same views.
  const std::vector<fdk_view> back = parse_rtk_geometry(format_rtk_geometry(views), "again.xml");
  if (back.size() != views.size()) __builtin_trap();
  for (size_t i = 0; i < views.size(); ++i) {
    if (back[i].sid != views[i].sid || back[i].sdd != views[i].sdd ||
        back[i].projection_offset_x != views[i].projection_offset_x ||
        back[i].source_offset_y != views[i].source_offset_y ||
        std::fabs(wrap(back[i].gantry_angle_deg) - wrap(views[i].gantry_angle_deg)) > 1e-9) {
      __builtin_trap();
    }
  }
  return 0;
}
