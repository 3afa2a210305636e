// Analytic ellipsoid phantoms and their exact cone-beam line integrals.
// See fdk/phantom.hpp for the conventions. Nothing here comes from core/:
// this is the independent truth the library is tested against.
#include "fdk/phantom.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace fdk {
namespace phantom {
namespace {

constexpr double kPi = 3.14159265358979323846;

double deg2rad(double d) { return d * (kPi / 180.0); }

// out = Ry(a) * in, Ry(a) = [[c, 0, s], [0, 1, 0], [-s, 0, c]].
void rot_y(double a, const double in[3], double out[3]) {
  const double c = std::cos(a), s = std::sin(a);
  const double x = in[0], y = in[1], z = in[2];
  out[0] = c * x + s * z;
  out[1] = y;
  out[2] = -s * x + c * z;
}

// out = Rx(a) * in, Rx(a) = [[1, 0, 0], [0, c, -s], [0, s, c]].
void rot_x(double a, const double in[3], double out[3]) {
  const double c = std::cos(a), s = std::sin(a);
  const double x = in[0], y = in[1], z = in[2];
  out[0] = x;
  out[1] = c * y - s * z;
  out[2] = s * y + c * z;
}

// out = Rz(a) * in, Rz(a) = [[c, -s, 0], [s, c, 0], [0, 0, 1]].
void rot_z(double a, const double in[3], double out[3]) {
  const double c = std::cos(a), s = std::sin(a);
  const double x = in[0], y = in[1], z = in[2];
  out[0] = c * x - s * y;
  out[1] = s * x + c * y;
  out[2] = z;
}

// world = M_R^T * rotated, M_R = Rz(-ip) Rx(-oop) Ry(-g), so
// M_R^T = Ry(g) Rx(oop) Rz(ip).
void rotated_to_world(const fdk_view& v, const double r[3], double w[3]) {
  double a[3], b[3];
  rot_z(deg2rad(v.in_plane_angle_deg), r, a);
  rot_x(deg2rad(v.out_of_plane_angle_deg), a, b);
  rot_y(deg2rad(v.gantry_angle_deg), b, w);
}

// Local coordinates of a world point (affine) or vector (linear), divided by
// the semi-axes: the ellipsoid becomes the unit ball.
void to_unit_point(const Ellipsoid& e, const double p[3], double out[3]) {
  const double d[3] = {p[0] - e.center[0], p[1] - e.center[1],
                       p[2] - e.center[2]};
  double q[3];
  rot_y(-deg2rad(e.angle_deg), d, q);  // Ry(angle)^T = Ry(-angle)
  for (int i = 0; i < 3; ++i) out[i] = q[i] / e.semi_axes[i];
}

void to_unit_vector(const Ellipsoid& e, const double v[3], double out[3]) {
  double q[3];
  rot_y(-deg2rad(e.angle_deg), v, q);
  for (int i = 0; i < 3; ++i) out[i] = q[i] / e.semi_axes[i];
}

double dot(const double a[3], const double b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

// Chord of the unit ball along o + t d for t in [t_lo, t_hi]; `d_len2` is
// |d|^2 in unit coordinates. Formulated around the closest approach to avoid
// the cancellation of B^2 - AC for far-away sources.
double unit_chord(const double o[3], const double d[3], double t_lo,
                  double t_hi) {
  const double a = dot(d, d);
  if (!(a > 0.0)) return 0.0;
  const double t0 = -dot(o, d) / a;
  const double m[3] = {o[0] + t0 * d[0], o[1] + t0 * d[1], o[2] + t0 * d[2]};
  const double r2 = 1.0 - dot(m, m);
  if (!(r2 > 0.0)) return 0.0;
  const double h = std::sqrt(r2 / a);
  const double t1 = std::max(t0 - h, t_lo);
  const double t2 = std::min(t0 + h, t_hi);
  return t2 > t1 ? t2 - t1 : 0.0;
}

void check_ellipsoid(const Ellipsoid& e) {
  for (int i = 0; i < 3; ++i) {
    if (!(e.semi_axes[i] > 0.0) || !std::isfinite(e.semi_axes[i]))
      throw std::invalid_argument("phantom: semi-axes must be > 0 and finite");
  }
}

void check_detector(const fdk_detector& d) {
  if (d.size[0] < 1 || d.size[1] < 1)
    throw std::invalid_argument("phantom: detector size must be >= 1");
}

}  // namespace

namespace {

// The ellipsoids of Kak & Slaney's table with the given ten densities.
std::vector<Ellipsoid> kak_slaney_3d(double scale, const double (&densities)[10],
                                     const char* who) {
  if (!(scale > 0.0) || !std::isfinite(scale))
    throw std::invalid_argument(std::string(who) + ": scale must be > 0");
  // Kak & Slaney's 3D table: semi-axes (A, B, C), centre (x, y, z), angle
  // about their z (the head axis).
  struct Row {
    double a, b, c, x, y, z, angle;
  };
  static const Row kTable[10] = {
      {0.6900, 0.920, 0.900, 0.00, 0.000, 0.000, 0.0},
      {0.6624, 0.874, 0.880, 0.00, 0.000, 0.000, 0.0},
      {0.4100, 0.160, 0.210, -0.22, 0.000, -0.250, 108.0},
      {0.3100, 0.110, 0.220, 0.22, 0.000, -0.250, 72.0},
      {0.2100, 0.250, 0.500, 0.00, 0.350, -0.250, 0.0},
      {0.0460, 0.046, 0.046, 0.00, 0.100, -0.250, 0.0},
      {0.0460, 0.023, 0.020, -0.08, -0.650, -0.250, 0.0},
      {0.0460, 0.023, 0.020, 0.06, -0.650, -0.250, 90.0},
      {0.0560, 0.040, 0.100, 0.06, -0.105, 0.625, 90.0},
      {0.0560, 0.056, 0.100, 0.00, 0.100, 0.625, 0.0},
  };
  // (x, y, z)_KS -> (x, z, -y)_ours: a proper rotation taking the head axis
  // to our y. A rotation by angle about z_KS (x_KS towards y_KS = -z_ours)
  // becomes Ry(angle) in our frame (Ry takes +x towards -z), so angles are
  // kept.
  std::vector<Ellipsoid> out;
  out.reserve(10);
  for (int k = 0; k < 10; ++k) {
    const Row& r = kTable[k];
    Ellipsoid e{};
    e.center[0] = r.x * scale;
    e.center[1] = r.z * scale;
    e.center[2] = -r.y * scale;
    if (e.center[2] == 0.0) e.center[2] = 0.0;  // no -0
    e.semi_axes[0] = r.a * scale;
    e.semi_axes[1] = r.c * scale;
    e.semi_axes[2] = r.b * scale;
    e.angle_deg = r.angle;
    e.density = densities[k];
    out.push_back(e);
  }
  return out;
}

}  // namespace

std::vector<Ellipsoid> shepp_logan_3d(double scale) {
  static const double kOriginal[10] = {2.0, -0.98, -0.02, -0.02, 0.01,
                                       0.01, 0.01, 0.01, 0.01, 0.01};
  return kak_slaney_3d(scale, kOriginal, "shepp_logan_3d");
}

std::vector<Ellipsoid> modified_shepp_logan_3d(double scale) {
  // Toft's higher-contrast densities (also those of MATLAB's "Modified
  // Shepp-Logan"): the interior differs by 0.1 of the skull instead of
  // 0.01 of 2.
  static const double kModified[10] = {1.0, -0.8, -0.2, -0.2, 0.1,
                                       0.1, 0.1, 0.1, 0.1, 0.1};
  return kak_slaney_3d(scale, kModified, "modified_shepp_logan_3d");
}

bool contains(const Ellipsoid& e, double x, double y, double z) {
  const double p[3] = {x, y, z};
  double q[3];
  to_unit_point(e, p, q);
  return dot(q, q) <= 1.0;
}

double density_at(const std::vector<Ellipsoid>& phantom, double x, double y,
                  double z) {
  double sum = 0.0;
  for (const Ellipsoid& e : phantom) {
    if (contains(e, x, y, z)) sum += e.density;
  }
  return sum;
}

double distance_to_surface(const Ellipsoid& e, double x, double y, double z) {
  check_ellipsoid(e);
  // Local (unscaled) coordinates, reflected into the first octant.
  const double p[3] = {x - e.center[0], y - e.center[1], z - e.center[2]};
  double q[3];
  rot_y(-deg2rad(e.angle_deg), p, q);
  double a[3], y0[3];
  for (int i = 0; i < 3; ++i) {
    a[i] = e.semi_axes[i];
    y0[i] = std::fabs(q[i]);
  }
  // Closest point x_i = a_i^2 y_i / (t + a_i^2) with t the largest root of
  // f(t) = sum (a_i y_i / (t + a_i^2))^2 = 1 (Lagrange). With m = min a_i^2
  // and s = t + m >= 0, the denominators are s + (a_i^2 - m) >= s, computed
  // without cancellation on the smallest axes.
  const double m = std::min({a[0] * a[0], a[1] * a[1], a[2] * a[2]});
  double gap[3];
  bool min_axis_zero = true;  // y_i == 0 on every smallest axis
  for (int i = 0; i < 3; ++i) {
    gap[i] = a[i] * a[i] - m;
    if (gap[i] == 0.0 && y0[i] != 0.0) min_axis_zero = false;
  }
  auto f = [&](double s) {
    double sum = 0.0;
    for (int i = 0; i < 3; ++i) {
      if (y0[i] == 0.0) continue;
      const double r = a[i] * y0[i] / (s + gap[i]);
      sum += r * r;
    }
    return sum;
  };
  if (min_axis_zero && f(0.0) <= 1.0) {
    // Degenerate (inside, on the plane of the smallest axes): t = -m. The
    // smallest-axis components of the closest point share what is left.
    double d2 = 0.0, used = 0.0;
    for (int i = 0; i < 3; ++i) {
      if (gap[i] == 0.0) continue;
      const double xi = a[i] * a[i] * y0[i] / gap[i];
      d2 += (xi - y0[i]) * (xi - y0[i]);
      used += (xi / a[i]) * (xi / a[i]);
    }
    d2 += m * std::max(0.0, 1.0 - used);
    return std::sqrt(d2);
  }
  // f is decreasing on s > 0, f(0+) > 1 and f(hi) <= 1.
  double hi = std::sqrt(a[0] * a[0] * y0[0] * y0[0] +
                        a[1] * a[1] * y0[1] * y0[1] +
                        a[2] * a[2] * y0[2] * y0[2]);
  double lo = 0.0;
  for (int it = 0; it < 2000; ++it) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    if (f(mid) > 1.0) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  const double s = 0.5 * (lo + hi);
  double d2 = 0.0;
  for (int i = 0; i < 3; ++i) {
    const double xi = (y0[i] == 0.0) ? 0.0 : a[i] * a[i] * y0[i] / (s + gap[i]);
    d2 += (xi - y0[i]) * (xi - y0[i]);
  }
  return std::sqrt(d2);
}

double chord_length(const Ellipsoid& e, const double from[3],
                    const double to[3]) {
  check_ellipsoid(e);
  const double v[3] = {to[0] - from[0], to[1] - from[1], to[2] - from[2]};
  const double len = std::sqrt(dot(v, v));
  if (!(len > 0.0)) return 0.0;
  const double dir[3] = {v[0] / len, v[1] / len, v[2] / len};
  double o[3], d[3];
  to_unit_point(e, from, o);
  to_unit_vector(e, dir, d);
  return unit_chord(o, d, 0.0, len);
}

fdk_view view_of(const fdk_config& config, int view) {
  const fdk_scan& scan = config.scan;
  if (view < 0 || view >= scan.num_views)
    throw std::out_of_range("view_of: view " + std::to_string(view) +
                            " outside [0, " + std::to_string(scan.num_views) +
                            ")");
  switch (scan.kind) {
    case FDK_SCAN_UNIFORM: {
      fdk_view v = scan.uniform;
      v.gantry_angle_deg = scan.first_angle_deg +
                           static_cast<double>(view) * scan.arc_deg /
                               static_cast<double>(scan.num_views);
      return v;
    }
    case FDK_SCAN_VIEWS:
      if (scan.views == nullptr)
        throw std::invalid_argument("view_of: scan.views is NULL");
      return scan.views[view];
    default:
      throw std::invalid_argument(
          "view_of: only FDK_SCAN_UNIFORM and FDK_SCAN_VIEWS are supported");
  }
}

void source_position(const fdk_view& view, double out[3]) {
  const double r[3] = {view.source_offset_x, view.source_offset_y, view.sid};
  rotated_to_world(view, r, out);
}

void pixel_position(const fdk_view& view, const fdk_detector& detector, int i,
                    int j, double out[3]) {
  const double u = detector.origin[0] + i * detector.spacing[0];
  const double v = detector.origin[1] + j * detector.spacing[1];
  const double r[3] = {u + view.projection_offset_x,
                       v + view.projection_offset_y, view.sid - view.sdd};
  rotated_to_world(view, r, out);
}

void project_view(const std::vector<Ellipsoid>& phantom, const fdk_view& view,
                  const fdk_detector& detector, float* out) {
  check_detector(detector);
  if (out == nullptr) throw std::invalid_argument("project_view: out is NULL");
  for (const Ellipsoid& e : phantom) check_ellipsoid(e);

  double src[3], origin[3], px[3], py[3];
  source_position(view, src);
  // Pixel (i, j) = origin + i * step_u + j * step_v (affine in i, j).
  pixel_position(view, detector, 0, 0, origin);
  pixel_position(view, detector, 1, 0, px);
  pixel_position(view, detector, 0, 1, py);
  const double step_u[3] = {px[0] - origin[0], px[1] - origin[1],
                            px[2] - origin[2]};
  const double step_v[3] = {py[0] - origin[0], py[1] - origin[1],
                            py[2] - origin[2]};

  // Per ellipsoid: the rotation and the source in unit coordinates.
  struct Prepared {
    double c, s;        // cos, sin of -angle (Ry(angle)^T)
    double inv_a[3];    // 1 / semi-axes
    double src_unit[3];
    double density;
  };
  std::vector<Prepared> prep(phantom.size());
  for (size_t k = 0; k < phantom.size(); ++k) {
    const Ellipsoid& e = phantom[k];
    Prepared& q = prep[k];
    q.c = std::cos(-deg2rad(e.angle_deg));
    q.s = std::sin(-deg2rad(e.angle_deg));
    for (int c = 0; c < 3; ++c) q.inv_a[c] = 1.0 / e.semi_axes[c];
    to_unit_point(e, src, q.src_unit);
    q.density = e.density;
  }

  const int nu = detector.size[0], nv = detector.size[1];
  for (int j = 0; j < nv; ++j) {
    for (int i = 0; i < nu; ++i) {
      double p[3];
      for (int c = 0; c < 3; ++c)
        p[c] = origin[c] + i * step_u[c] + j * step_v[c];
      const double v[3] = {p[0] - src[0], p[1] - src[1], p[2] - src[2]};
      const double len = std::sqrt(dot(v, v));
      double sum = 0.0;
      if (len > 0.0) {
        const double dir[3] = {v[0] / len, v[1] / len, v[2] / len};
        for (const Prepared& q : prep) {
          // Ry(-angle) * dir, then divided by the semi-axes.
          const double d[3] = {(q.c * dir[0] + q.s * dir[2]) * q.inv_a[0],
                               dir[1] * q.inv_a[1],
                               (-q.s * dir[0] + q.c * dir[2]) * q.inv_a[2]};
          sum += q.density * unit_chord(q.src_unit, d, 0.0, len);
        }
      }
      out[static_cast<size_t>(j) * static_cast<size_t>(nu) +
          static_cast<size_t>(i)] = static_cast<float>(sum);
    }
  }
}

void project(const std::vector<Ellipsoid>& phantom, const fdk_config& config,
             int view, float* out) {
  project_view(phantom, view_of(config, view), config.detector, out);
}

}  // namespace phantom
}  // namespace fdk
