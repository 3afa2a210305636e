#include "fdk/core/weights.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <numeric>

#include "fdk/core/error.hpp"

namespace fdk {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kTwoPi = 2 * kPi;

double wrap(double a) {
  a = std::fmod(a, kTwoPi);
  return a < 0 ? a + kTwoPi : a;
}

struct SortedAngles {
  std::vector<size_t> order;  // indices into the view list, by angle
  std::vector<double> gap_after;  // gap from order[i] to order[i+1] (circular)
  size_t largest = 0;             // position in order with the largest gap after it
  double median_gap = 0;
};

SortedAngles sort_angles(const std::vector<double>& angles) {
  SortedAngles s;
  s.order.resize(angles.size());
  std::iota(s.order.begin(), s.order.end(), size_t{0});
  std::sort(s.order.begin(), s.order.end(), [&](size_t a, size_t b) { return angles[a] < angles[b]; });
  const size_t n = angles.size();
  s.gap_after.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const double here = angles[s.order[i]];
    const double next = angles[s.order[(i + 1) % n]];
    s.gap_after[i] = n == 1 ? kTwoPi : wrap(next - here);
    if (i + 1 == n && n > 1 && s.gap_after[i] == 0) s.gap_after[i] = kTwoPi;  // all equal
  }
  s.largest = static_cast<size_t>(std::max_element(s.gap_after.begin(), s.gap_after.end()) -
                                  s.gap_after.begin());
  std::vector<double> g = s.gap_after;
  std::nth_element(g.begin(), g.begin() + g.size() / 2, g.end());
  s.median_gap = g[g.size() / 2];
  return s;
}

// A scan is short when its largest angular gap is clearly more than a step.
bool looks_short(const SortedAngles& s) {
  return s.gap_after.size() > 1 && s.gap_after[s.largest] > 2.0 * s.median_gap + 1e-9;
}

double parker(const RedundancyPlan& p, double beta, double gamma) {
  // Kak & Slaney's form, where ray (beta, gamma) meets (beta + pi + 2 gamma, -gamma).
  const double d = p.delta;
  if (beta < 0 || beta > kPi + 2 * d) return 0;
  if (beta < 2 * (d - gamma)) {
    const double s = std::sin(kPi / 4 * beta / (d - gamma));
    return s * s;
  }
  if (beta <= kPi - 2 * gamma) return 1;
  const double s = std::sin(kPi / 4 * (kPi + 2 * d - beta) / (d + gamma));
  return s * s;
}

// rtkfdk's half-fan weight (RTK's DisplacedDetectorForOffsetFieldOfView
// filter, for a field of view centred on the axis): 0 past the short
// edge's mirror image, 2 past the band the short side also measures, and
// across it 1 + sin(pi/2 * d / R), d the ray's distance from the axis and R
// the band's half-width, so that conjugate rays (d and -d) add up to 2.
// `distance`: the ray's from the axis, signed (> 0 towards +u).
double offset_weight(const RedundancyPlan& p, double distance) {
  const double x = p.long_side * distance;
  if (x <= -p.overlap) return 0;
  if (x >= p.overlap) return 2;
  return 1 + std::sin(kPi / 2 * x / p.overlap);
}

// The signed distance from the rotation axis of the ray from the source
// through detector point (u, v), both taken to the plane normal to the
// axis (world x and z): > 0 towards +u. Tilted views included, as RTK's
// field of view takes them (its rays through the detector's corners).
double corner_ray_distance(const ViewGeometry& g, double u, double v) {
  const double* r = g.rot.data();
  const auto world = [&](double x, double y, double z, double* out) {  // rot^T (x, y, z), x and z only
    out[0] = r[0] * x + r[3] * y + r[6] * z;
    out[1] = r[2] * x + r[5] * y + r[8] * z;
  };
  double s[2], c[2];
  world(g.sox, g.soy, g.sid, s);
  world(u + g.pox, v + g.poy, g.sid - g.sdd, c);
  const double dx = c[0] - s[0], dz = c[1] - s[1];
  return (s[1] * dx - s[0] * dz) / std::hypot(dx, dz);
}

// Where RTK puts a detector's columns: pixel centres.
double first_centre(const fdk_detector& d) { return d.origin[0]; }
double last_centre(const fdk_detector& d) { return d.origin[0] + (d.size[0] - 1) * d.spacing[0]; }

}  // namespace

RedundancyPlan plan_redundancy(const std::vector<ViewGeometry>& nominal, const fdk_detector& det,
                               fdk_switch short_scan, fdk_switch offset_detector) {
  RedundancyPlan plan;
  std::vector<double> angles;
  angles.reserve(nominal.size());
  for (const auto& v : nominal) angles.push_back(v.angle);
  const SortedAngles s = sort_angles(angles);

  const bool is_short = short_scan == FDK_ON || (short_scan == FDK_AUTO && looks_short(s));
  if (is_short) {
    if (nominal.size() < 2) fail(FDK_ERROR_INVALID_ARGUMENT, "a short scan needs at least two views");
    plan.short_scan = true;
    plan.scan_start = angles[s.order[(s.largest + 1) % s.order.size()]];
    plan.scan_range = kTwoPi - s.gap_after[s.largest];
    plan.delta = (plan.scan_range - kPi) / 2;
    if (plan.delta <= 0)
      fail(FDK_ERROR_INVALID_ARGUMENT,
           "short scan covers less than 180 degrees: FDK cannot reconstruct it");
  }

  // The field of view's radius on each side of the axis ray: the distance
  // from the axis of the rays through the first and the last column's
  // corner pixels (centres), the smallest over the views (what every view
  // measures on that side).
  plan.inferior = -std::numeric_limits<double>::infinity();
  plan.superior = std::numeric_limits<double>::infinity();
  const double v_rows[2] = {det.origin[1], det.origin[1] + (det.size[1] - 1) * det.spacing[1]};
  for (const ViewGeometry& g : nominal)
    for (double v : v_rows) {
      plan.inferior = std::max(plan.inferior, corner_ray_distance(g, first_centre(det), v));
      plan.superior = std::min(plan.superior, corner_ray_distance(g, last_centre(det), v));
    }
  // rtkfdk's rule: displaced when the two radii differ by 10 % of their
  // mean or more.
  plan.displaced = 200 * std::abs(plan.superior + plan.inferior) >= 10 * std::abs(plan.superior - plan.inferior);
  // On AUTO a detector that misses the ray through the axis stays full fan
  // (no half-fan weighting can reconstruct it; fdk_plan_info's figures say
  // why); forced on, that is an error. On AUTO a short scan stays without
  // half-fan weights too, where rtkfdk applies them with Parker's (their
  // product, which FDK_ON still gives): they stand in for the opposite
  // views a full turn has and a short scan lacks. A short scan whose
  // detector was 8 pixels (12 mm) off the axis reconstructed with an error
  // of 1.26e-2 against the phantom with the product, 1.1e-5 with Parker's
  // alone (docs/DECISIONS.md, "A short scan takes no half-fan weights on
  // AUTO").
  const bool axis_seen = plan.inferior < 0 && plan.superior > 0;
  const bool is_offset = offset_detector == FDK_ON ||
                         (offset_detector == FDK_AUTO && plan.displaced && axis_seen && !plan.short_scan);
  if (is_offset) {
    if (!axis_seen)
      fail(FDK_ERROR_INVALID_ARGUMENT,
           "half-fan (offset detector) weighting needs the ray through the rotation axis on the detector "
           "in every view, but the rays through the detector's edges pass at " + std::to_string(plan.inferior) +
               " and " + std::to_string(plan.superior) +
               " from it: set offset_detector to FDK_OFF to reconstruct without it");
    plan.offset_detector = true;
    plan.long_side = plan.superior + plan.inferior >= 0 ? 1 : -1;
    plan.overlap = std::min(-plan.inferior, plan.superior);
  }
  return plan;
}

namespace {

// The mirror image, in fan angle about the axis ray, of the long edge's
// pixel centre (offset = 0) or outer edge (offset = half a pixel).
double mirrored_long_edge(const RedundancyPlan& plan, const ViewGeometry& g, const fdk_detector& det,
                          double offset) {
  const double edge = plan.long_side > 0 ? last_centre(det) + offset : first_centre(det) - offset;
  return g.detector_u(-g.untilted_u(edge));
}

}  // namespace

fdk_detector filtered_detector(const RedundancyPlan& plan, const std::vector<ViewGeometry>& nominal,
                               const fdk_detector& input, int* column_offset) {
  fdk_detector out = input;
  *column_offset = 0;
  if (!plan.offset_detector) return out;
  const double du = input.spacing[0];
  double reach = 0;  // beyond the short edge, physical
  for (const ViewGeometry& g : nominal) {
    const double mirror = mirrored_long_edge(plan, g, input, 0.5 * du);
    const double beyond = plan.long_side > 0 ? (first_centre(input) - 0.5 * du) - mirror
                                             : mirror - (last_centre(input) + 0.5 * du);
    if (std::isfinite(beyond)) reach = std::max(reach, beyond);
  }
  const int extra = static_cast<int>(std::min<double>(input.size[0], std::ceil(reach / du - 1e-9)));
  if (extra <= 0) return out;
  out.size[0] += extra;
  if (plan.long_side > 0) {  // the short side is -u: prepend
    out.origin[0] -= extra * du;
    *column_offset = extra;
  }
  return out;
}

std::array<double, 2> used_columns(const RedundancyPlan& plan, const ViewGeometry& view, const fdk_detector& input,
                                   int column_offset) {
  const double first = column_offset, last = column_offset + input.size[0] - 1.0;
  if (!plan.offset_detector) return {first, last};
  const double mirror = column_offset + (mirrored_long_edge(plan, view, input, 0.0) - input.origin[0]) / input.spacing[0];
  return plan.long_side > 0 ? std::array<double, 2>{mirror, last} : std::array<double, 2>{first, mirror};
}

void column_weights(const RedundancyPlan& plan, const ViewGeometry& view, const fdk_detector& out_det,
                    double* weight, double* u2) {
  const double beta = wrap(view.angle - plan.scan_start);
  // RTK's FDK weighting (FDKWeightProjectionFilter, after Rit and
  // Clackdoyle, CT meeting 2014): with the source off the central ray the
  // cosine is taken against the ray through the axis, the detector seen as
  // tilted by `tilt` (the source's azimuth less the gantry angle), and the
  // whole view scaled by the source's distance from the isocentre over SID.
  const double tilt = view.source_angle - view.angle;
  const double cos_t = std::cos(tilt), sin_t = std::sin(tilt), tan_t = std::tan(tilt);
  const double scale = std::sqrt(view.sid * view.sid + view.sox * view.sox + view.soy * view.soy) / view.sid;
  for (int i = 0; i < out_det.size[0]; ++i) {
    const double u = out_det.origin[0] + i * out_det.spacing[0];
    const double x = u + view.pox + tan_t * (view.sdd - view.sid);
    const double tilted = (view.sdd * (cos_t + tan_t * sin_t) - x * sin_t) / view.sdd;
    double w = view.sdd / view.sid * scale * tilted;
    if (plan.short_scan || plan.offset_detector) {
      const double fan = view.fan_angle(u);
      if (plan.short_scan) w *= 2 * parker(plan, beta, -fan);
      if (plan.offset_detector) w *= offset_weight(plan, view.source_radius() * std::sin(fan));
    }
    weight[i] = w * view.sdd;  // times SDD of the cosine weight
    const double du = x - view.sdd * tan_t;  // u about the principal point (sox - pox, untilted)
    u2[i] = du * du;
  }
}

void weight_projection(const RedundancyPlan& plan, const ViewGeometry& view, const fdk_detector& in_det,
                       const float* in, size_t pitch_bytes, const fdk_detector& out_det, int column_offset,
                       float* out, int row_begin, int row_end) {
  const int nu = out_det.size[0], in_nu = in_det.size[0];
  const double b = view.principal_v();
  const double sdd2 = view.sdd * view.sdd;
  // Per-column part: redundancy weights depend on u only.
  std::vector<double> col_w(static_cast<size_t>(nu)), col_u2(static_cast<size_t>(nu));
  column_weights(plan, view, out_det, col_w.data(), col_u2.data());
  const int i_begin = std::max(0, column_offset), i_end = std::min(nu, column_offset + in_nu);
  for (int j = row_begin; j < row_end; ++j) {
    const double v = out_det.origin[1] + j * out_det.spacing[1] - b;
    const double base = sdd2 + v * v;
    const float* src = reinterpret_cast<const float*>(reinterpret_cast<const char*>(in) + j * pitch_bytes) -
                       column_offset;
    float* dst = out + static_cast<size_t>(j) * static_cast<size_t>(nu);
    std::fill(dst, dst + i_begin, 0.0f);
    for (int i = i_begin; i < i_end; ++i)
      dst[i] = static_cast<float>(src[i] * col_w[static_cast<size_t>(i)] /
                                  std::sqrt(base + col_u2[static_cast<size_t>(i)]));
    std::fill(dst + i_end, dst + nu, 0.0f);
  }
}

std::vector<double> angular_weights(const std::vector<ViewGeometry>& views,
                                    const std::vector<unsigned char>& arrived, bool short_scan) {
  std::vector<double> weights(views.size(), 0.0);
  std::vector<size_t> present;
  std::vector<double> angles;
  for (size_t v = 0; v < views.size(); ++v)
    if (arrived[v]) {
      present.push_back(v);
      angles.push_back(views[v].source_angle);
    }
  if (present.empty()) return weights;
  if (present.size() == 1) {
    weights[present[0]] = kPi;  // a single view: the half-turn weight, for lack of better
    return weights;
  }
  const SortedAngles s = sort_angles(angles);
  const size_t n = s.order.size();
  for (size_t i = 0; i < n; ++i) {
    double before = s.gap_after[(i + n - 1) % n];
    double after = s.gap_after[i];
    if (short_scan) {
      // The largest gap is the unmeasured part of the turn, not a step.
      if (i == s.largest) after = before;
      if ((i + n - 1) % n == s.largest) before = after;
    }
    weights[present[s.order[i]]] = 0.25 * (before + after);
  }
  return weights;
}

}  // namespace fdk
