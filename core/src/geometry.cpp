#include "fdk/core/geometry.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "fdk/core/checked.hpp"
#include "fdk/core/error.hpp"
#include "fdk/core/value_ranges.hpp"

namespace fdk {
namespace {

constexpr double kPi = 3.14159265358979323846;

using Mat3 = std::array<double, 9>;

Mat3 multiply(const Mat3& a, const Mat3& b) {
  Mat3 c{};
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k)
      for (int col = 0; col < 3; ++col) c[r * 3 + col] += a[r * 3 + k] * b[k * 3 + col];
  return c;
}

// RTK builds the rotation with opposite angles because it rotates the volume
// instead of the scanner: rot = Rz(-in) * Rx(-out) * Ry(-gantry).
Mat3 rtk_rotation(double gantry, double out_of_plane, double in_plane) {
  const double cg = std::cos(-gantry), sg = std::sin(-gantry);
  const double co = std::cos(-out_of_plane), so = std::sin(-out_of_plane);
  const double ci = std::cos(-in_plane), si = std::sin(-in_plane);
  const Mat3 ry{cg, 0, sg, 0, 1, 0, -sg, 0, cg};
  const Mat3 rx{1, 0, 0, 0, co, -so, 0, so, co};
  const Mat3 rz{ci, -si, 0, si, ci, 0, 0, 0, 1};
  return multiply(rz, multiply(rx, ry));
}

double wrap_angle(double a) {
  a = std::fmod(a, 2 * kPi);
  if (a < 0) a += 2 * kPi;
  if (a >= 2 * kPi) a = 0;
  return a;
}

// The gantry angle as seen from the detector normal (third row of rot): for
// a pure gantry rotation it is exactly the gantry angle.
double angle_of(const Mat3& rot) { return wrap_angle(std::atan2(rot[6], rot[8])); }

// The ranges of value_ranges.hpp, for the parameters of one view (given or
// decomposed from a matrix); `prefix` says which view ("scan.views[3]: ").
void require_view_ranges(const ViewGeometry& g, const std::string& prefix) {
  require_distance(g.sid, prefix + "SID");
  require_distance(g.sdd, prefix + "SDD");
  require_magnification(g.sid, g.sdd, prefix);
  require_coordinate(g.sox, prefix + "source offset x");
  require_coordinate(g.soy, prefix + "source offset y");
  require_coordinate(g.pox, prefix + "projection offset x");
  require_coordinate(g.poy, prefix + "projection offset y");
}

double dot3(const double* a, const double* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

// The source in world coordinates is rot^T (sox, soy, sid); its azimuth
// about y, as the gantry angle is measured.
double source_angle_of(const ViewGeometry& g) {
  const double* r = g.rot.data();
  const double x = r[0] * g.sox + r[3] * g.soy + r[6] * g.sid;
  const double z = r[2] * g.sox + r[5] * g.soy + r[8] * g.sid;
  return wrap_angle(std::atan2(x, z));
}

}  // namespace

ViewGeometry view_from_parameters(const fdk_view& v, const std::string& prefix) {
  // Angles beyond a million degrees lose the step between views to
  // rounding (1e300 + 1 == 1e300: every view at one angle); no scanner
  // turns so far.
  require_angle(v.gantry_angle_deg, prefix + "gantry angle");
  require_angle(v.in_plane_angle_deg, prefix + "in-plane angle");
  require_angle(v.out_of_plane_angle_deg, prefix + "out-of-plane angle");
  ViewGeometry g;
  g.sid = v.sid;
  g.sdd = v.sdd;
  g.sox = v.source_offset_x;
  g.soy = v.source_offset_y;
  g.pox = v.projection_offset_x;
  g.poy = v.projection_offset_y;
  require_view_ranges(g, prefix);
  const double d2r = kPi / 180.0;
  g.rot = rtk_rotation(v.gantry_angle_deg * d2r, v.out_of_plane_angle_deg * d2r,
                       v.in_plane_angle_deg * d2r);
  g.angle = angle_of(g.rot);
  g.source_angle = source_angle_of(g);
  return g;
}

// RTK's matrix is K * [R | 0] + translation with
// K = [[-sdd, 0, a], [0, -sdd, b], [0, 0, 1]], a = sox - pox, b = soy - poy,
// last column (sdd*sox - a*sid, sdd*soy - b*sid, -sid). An RQ decomposition
// by Gram-Schmidt on the rows recovers every parameter.
ViewGeometry view_from_matrix(const double* p, const std::string& prefix) {
  for (int i = 0; i < 12; ++i)
    if (!std::isfinite(p[i]))
      fail(FDK_ERROR_INVALID_ARGUMENT, prefix + "projection matrix entry " + std::to_string(i) + " is not finite");
  double m[3][4];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) m[r][c] = p[r * 4 + c];
  const double det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
                     m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                     m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
  const double n2 = std::sqrt(dot3(m[2], m[2]));
  if (!(n2 > 0) || det == 0)
    fail(FDK_ERROR_INVALID_ARGUMENT, prefix + "projection matrix is singular");
  // det M = scale^3 * sdd^2 * det R with det R = +1, so the scale has det's sign.
  const double scale = det > 0 ? n2 : -n2;
  for (auto& row : m)
    for (double& x : row) x /= scale;

  double r0[3], r1[3], r2[3] = {m[2][0], m[2][1], m[2][2]};
  const double k12 = dot3(m[1], r2);
  double t1[3];
  for (int i = 0; i < 3; ++i) t1[i] = m[1][i] - k12 * r2[i];
  const double k11 = -std::sqrt(dot3(t1, t1));
  if (k11 == 0) fail(FDK_ERROR_INVALID_ARGUMENT, prefix + "projection matrix is degenerate");
  for (int i = 0; i < 3; ++i) r1[i] = t1[i] / k11;
  const double k02 = dot3(m[0], r2), k01 = dot3(m[0], r1);
  double t0[3];
  for (int i = 0; i < 3; ++i) t0[i] = m[0][i] - k01 * r1[i] - k02 * r2[i];
  const double k00 = -std::sqrt(dot3(t0, t0));
  if (k00 == 0) fail(FDK_ERROR_INVALID_ARGUMENT, prefix + "projection matrix is degenerate");
  for (int i = 0; i < 3; ++i) r0[i] = t0[i] / k00;

  const double sdd = -k00;
  const double tol = 1e-6 * sdd;
  if (std::abs(k01) > tol)
    fail(FDK_ERROR_INVALID_ARGUMENT, prefix + "projection matrix has a skewed detector (not RTK's form)");
  if (std::abs(k11 - k00) > tol)
    fail(FDK_ERROR_INVALID_ARGUMENT,
         prefix + "projection matrix has different u and v scales (not RTK's form)");
  const double cross[3] = {r0[1] * r1[2] - r0[2] * r1[1], r0[2] * r1[0] - r0[0] * r1[2],
                           r0[0] * r1[1] - r0[1] * r1[0]};
  if (dot3(cross, r2) < 0)
    fail(FDK_ERROR_INVALID_ARGUMENT, prefix + "projection matrix mirrors the detector (not RTK's form)");

  ViewGeometry g;
  for (int i = 0; i < 3; ++i) {
    g.rot[i] = r0[i];
    g.rot[3 + i] = r1[i];
    g.rot[6 + i] = r2[i];
  }
  g.sdd = sdd;
  g.sid = -m[2][3];
  if (!(g.sid > 0)) fail(FDK_ERROR_INVALID_ARGUMENT, prefix + "projection matrix puts the source at SID <= 0");
  const double a = k02, b = k12;
  g.sox = (m[0][3] + a * g.sid) / sdd;
  g.soy = (m[1][3] + b * g.sid) / sdd;
  g.pox = g.sox - a;
  g.poy = g.soy - b;
  require_view_ranges(g, prefix);
  g.angle = angle_of(g.rot);
  g.source_angle = source_angle_of(g);
  return g;
}

double ViewGeometry::source_radius() const { return std::hypot(sid, sox); }

// l: where the ray meets the plane z = 0 of the rotated frame (parallel to
// the detector, through the axis); then the projective map onto the line
// through the axis normal to the source-to-axis ray (R. Clackdoyle's note,
// as in RTK). Both maps are linear-fractional, so their inverses are too.
double ViewGeometry::untilted_u(double u) const {
  const double r = source_radius();
  const double l = (u + pox - sox) * sid / sdd + sox;
  return l * sid / (r - l * sox / r);
}

double ViewGeometry::detector_u(double untilted) const {
  const double r = source_radius();
  const double l = untilted * r / (sid + untilted * sox / r);
  return (l - sox) * sdd / sid + sox - pox;
}

double ViewGeometry::fan_angle(double u) const { return std::atan(untilted_u(u) / source_radius()); }

std::array<double, 12> rtk_matrix(const ViewGeometry& g) {
  const double a = g.principal_u(), b = g.principal_v();
  const double k[3][3] = {{-g.sdd, 0, a}, {0, -g.sdd, b}, {0, 0, 1}};
  const double t[3] = {g.sdd * g.sox - a * g.sid, g.sdd * g.soy - b * g.sid, -g.sid};
  std::array<double, 12> out{};
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c)
      for (int i = 0; i < 3; ++i) out[r * 4 + c] += k[r][i] * g.rot[i * 3 + c];
    out[r * 4 + 3] = t[r];
  }
  return out;
}

std::vector<fdk_view> scan_parameters(const fdk_scan& scan, const std::string& what) {
  if (scan.kind == FDK_SCAN_MATRICES)
    fail(FDK_ERROR_INVALID_ARGUMENT, what + " needs the views' RTK parameters; a scan given as matrices has none");
  scan_views(scan);  // every value checked, with the message naming it
  std::vector<fdk_view> views(static_cast<size_t>(scan.num_views));
  for (int i = 0; i < scan.num_views; ++i) {
    if (scan.kind == FDK_SCAN_VIEWS) {
      views[static_cast<size_t>(i)] = scan.views[i];
    } else {
      views[static_cast<size_t>(i)] = scan.uniform;
      views[static_cast<size_t>(i)].gantry_angle_deg = scan.first_angle_deg + i * scan.arc_deg / scan.num_views;
    }
  }
  return views;
}

std::vector<ViewGeometry> scan_views(const fdk_scan& scan) {
  if (scan.num_views < 1)
    fail(FDK_ERROR_INVALID_ARGUMENT, "scan.num_views is " + std::to_string(scan.num_views) + ": it must be >= 1");
  std::vector<ViewGeometry> views;
  views.reserve(static_cast<size_t>(scan.num_views));
  switch (scan.kind) {
    case FDK_SCAN_UNIFORM: {
      require_angle(scan.first_angle_deg, "scan.first_angle_deg");
      if (!(scan.arc_deg >= -360 && scan.arc_deg <= 360 && scan.arc_deg != 0))
        fail(FDK_ERROR_INVALID_ARGUMENT, "scan.arc_deg is " + number_text(scan.arc_deg) +
                                             ": it must be non-zero and lie within [-360, 360] degrees");
      for (int i = 0; i < scan.num_views; ++i) {
        fdk_view v = scan.uniform;
        v.gantry_angle_deg = scan.first_angle_deg + i * scan.arc_deg / scan.num_views;
        views.push_back(view_from_parameters(v, "scan.uniform: "));
      }
      break;
    }
    case FDK_SCAN_VIEWS:
      if (!scan.views) fail(FDK_ERROR_INVALID_ARGUMENT, "scan.views is NULL");
      for (int i = 0; i < scan.num_views; ++i)
        views.push_back(view_from_parameters(scan.views[i], "scan.views[" + std::to_string(i) + "]: "));
      break;
    case FDK_SCAN_MATRICES:
      if (!scan.matrices) fail(FDK_ERROR_INVALID_ARGUMENT, "scan.matrices is NULL");
      for (int i = 0; i < scan.num_views; ++i)
        views.push_back(view_from_matrix(scan.matrices + 12 * static_cast<size_t>(i),
                                         "scan.matrices[" + std::to_string(i) + "]: "));
      break;
    default:
      fail(FDK_ERROR_INVALID_ARGUMENT, "scan.kind is not a fdk_scan_kind");
  }
  return views;
}

bool IndexMatrix::y_separable() const {
  const double scale_u = std::abs(m[0]) + std::abs(m[2]);
  const double scale_w = std::abs(m[8]) + std::abs(m[10]);
  return std::abs(m[1]) <= 1e-12 * scale_u && std::abs(m[9]) <= 1e-12 * scale_w;
}

IndexMatrix index_matrix(const ViewGeometry& g, const fdk_volume& vol, const fdk_detector& det) {
  const double* R = g.rot.data();
  const double a = g.principal_u(), b = g.principal_v();
  // Physical homogeneous rows (u*w, v*w, w) with w = sid - Zr.
  double phys[3][4];
  for (int c = 0; c < 3; ++c) {
    phys[0][c] = g.sdd * R[c] - a * R[6 + c];
    phys[1][c] = g.sdd * R[3 + c] - b * R[6 + c];
    phys[2][c] = -R[6 + c];
  }
  phys[0][3] = -g.sdd * g.sox + a * g.sid;
  phys[1][3] = -g.sdd * g.soy + b * g.sid;
  phys[2][3] = g.sid;
  // Physical detector -> pixel index: (u - origin) / spacing.
  double det_rows[3][4];
  for (int c = 0; c < 4; ++c) {
    det_rows[0][c] = (phys[0][c] - det.origin[0] * phys[2][c]) / det.spacing[0];
    det_rows[1][c] = (phys[1][c] - det.origin[1] * phys[2][c]) / det.spacing[1];
    det_rows[2][c] = phys[2][c];
  }
  // Voxel index -> physical: origin + index * spacing.
  IndexMatrix out;
  out.sid = g.sid;
  for (int r = 0; r < 3; ++r) {
    double t = det_rows[r][3];
    for (int c = 0; c < 3; ++c) {
      out.m[r * 4 + c] = det_rows[r][c] * vol.spacing[c];
      t += det_rows[r][c] * vol.origin[c];
    }
    out.m[r * 4 + 3] = t;
  }
  return out;
}

std::array<int, 2> rows_for_slab(const IndexMatrix& p, const fdk_volume& vol, int detector_rows,
                                 int y0, int y1) {
  double lo = 1e300, hi = -1e300;
  const double xs[2] = {-0.5, vol.size[0] - 0.5};
  const double ys[2] = {y0 - 0.5, y1 - 0.5};
  const double zs[2] = {-0.5, vol.size[2] - 0.5};
  const double* m = p.m.data();
  for (double x : xs)
    for (double y : ys)
      for (double z : zs) {
        const double w = m[8] * x + m[9] * y + m[10] * z + m[11];
        if (!(w > 0)) return {0, detector_rows - 1};  // slab reaches behind the source
        const double row = (m[4] * x + m[5] * y + m[6] * z + m[7]) / w;
        lo = std::min(lo, row);
        hi = std::max(hi, row);
      }
  // Clamped in double before converting: a corner just in front of the
  // source projects arbitrarily far (billions of rows), beyond int.
  const int first = clamp_to_int(std::floor(lo) - 1, 0, detector_rows, 0);
  const int last = clamp_to_int(std::ceil(hi) + 1, -1, detector_rows - 1, detector_rows - 1);
  return {first, last};
}

}  // namespace fdk
