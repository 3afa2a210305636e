#include "fdk/core/weights.hpp"

#include <algorithm>
#include <cmath>
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

double offset_weight(const RedundancyPlan& p, double u_rel) {
  const double x = p.long_side * u_rel;
  if (x <= -p.overlap) return 0;
  if (x >= p.overlap) return 2;
  const double s = std::sin(kPi / 4 * (1 + x / p.overlap));
  return 2 * s * s;
}

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

  // The detector's extent around the principal point of the first view.
  const ViewGeometry& g = nominal.front();
  const double lo = det.origin[0] - 0.5 * det.spacing[0] - g.principal_u();
  const double hi = det.origin[0] + (det.size[0] - 0.5) * det.spacing[0] - g.principal_u();
  const bool off_centre = std::abs(hi + lo) > 2 * det.spacing[0];
  const bool is_offset = offset_detector == FDK_ON || (offset_detector == FDK_AUTO && off_centre);
  if (is_offset) {
    if (plan.short_scan)
      fail(FDK_ERROR_UNSUPPORTED,
           "short-scan and offset-detector weighting together are not defined; turn one off");
    plan.offset_detector = true;
    plan.principal_u = g.principal_u();
    plan.long_side = hi + lo >= 0 ? 1 : -1;
    plan.overlap = std::max(std::min(std::abs(lo), std::abs(hi)), det.spacing[0]);
    if ((lo > 0) || (hi < 0)) plan.overlap = det.spacing[0];  // principal point off the panel
  }
  return plan;
}

fdk_detector filtered_detector(const RedundancyPlan& plan, const fdk_detector& input, int* column_offset) {
  fdk_detector out = input;
  *column_offset = 0;
  if (!plan.offset_detector) return out;
  // Extent beyond the principal point on each side, in columns.
  const double du = input.spacing[0];
  const double lo = -(input.origin[0] - 0.5 * du - plan.principal_u);
  const double hi = input.origin[0] + (input.size[0] - 0.5) * du - plan.principal_u;
  const int extra = static_cast<int>(std::ceil((std::max(lo, hi) - std::min(lo, hi)) / du - 1e-9));
  if (extra <= 0) return out;
  out.size[0] += extra;
  if (plan.long_side > 0) {  // the short side is -u: prepend
    out.origin[0] -= extra * du;
    *column_offset = extra;
  }
  return out;
}

void column_weights(const RedundancyPlan& plan, const ViewGeometry& view, const fdk_detector& out_det,
                    double* weight, double* u2) {
  const double a = view.principal_u();
  const double beta = wrap(view.angle - plan.scan_start);
  for (int i = 0; i < out_det.size[0]; ++i) {
    const double u = out_det.origin[0] + i * out_det.spacing[0] - a;
    double w = view.sdd / view.sid;
    if (plan.short_scan) w *= 2 * parker(plan, beta, -std::atan(u / view.sdd));
    if (plan.offset_detector) w *= offset_weight(plan, u);
    weight[i] = w * view.sdd;  // times SDD of the cosine weight
    u2[i] = u * u;
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
      angles.push_back(views[v].angle);
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
