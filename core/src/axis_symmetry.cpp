#include "axis_symmetry.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "fdk/core/thread_pool.hpp"
#include "gaussian_taps.hpp"

namespace fdk::symmetry {
namespace {

constexpr double kPi = 3.14159265358979323846;

// The samples are cut into this many chunks whatever the machine, and the
// chunks' sums added in order: the same tilt on every machine.
constexpr int kChunks = 16;

// fn(k) for k < kChunks, on the pool when there is one.
template <class Fn>
void for_chunks(ThreadPool* pool, const Fn& fn) {
  if (!pool) {
    for (int k = 0; k < kChunks; ++k) fn(k);
  } else {
    pool->parallel_for(kChunks, [&](int k, int) { fn(k); });
  }
}

// Keys' cubic convolution weight (a = -1/2).
double keys(double t) {
  t = std::fabs(t);
  if (t < 1) return (1.5 * t - 2.5) * t * t + 1;
  if (t < 2) return ((-0.5 * t + 2.5) * t - 4) * t + 2;
  return 0;
}

// The sum blurred by a Gaussian of `sigma` binned columns along the normal
// of a line of tilt `tilt`: read between pixels (cubic weights) unblurred,
// the sum of the heads' sharp projections biased the fitted tilt by up to
// 0.044 deg (a prototype on the whole 160 x 128 detector of the
// estimator's tests), blurred 0.005 deg. Along the normal, because a
// reflection about the line maps the normal onto itself, so a symmetric
// sum stays symmetric once blurred (blurred along u, the reflection turns
// the blur by twice the tilt; no case of the suite's has shown the
// difference, and by itself the change left the small heads' tilts as
// they were). Not blurred along v itself: in the kept bands of 11 rows,
// blurred along v to the band's ends it was 0.12 deg off. The normal
// leaves a row by tan(tilt) / aspect rows a column (at most 0.2 row over
// the kernel's reach), read linearly between rows.
std::vector<double> blurred_along_normal(const ViewSum& s, double sigma, double tilt) {
  constexpr int kR = 6;
  std::array<double, 2 * kR + 1> k{};
  double total = 0;
  for (int i = -kR; i <= kR; ++i) total += k[static_cast<size_t>(i + kR)] = std::exp(-0.5 * i * i / (sigma * sigma));
  // Binned rows per binned column along the normal.
  const double slope = -std::tan(tilt) * s.bin / (s.row_bin * s.aspect);
  std::vector<double> out(s.pixels.size());
  const int nu = s.columns;
  size_t first = 0;  // the band's first row, in rows of the sum
  for (const ViewSum::Band& b : s.bands) {
    for (int y = 0; y < b.count; ++y) {
      double* o = out.data() + (first + static_cast<size_t>(y)) * static_cast<size_t>(nu);
      for (int x = 0; x < nu; ++x) {
        double a = 0;
        for (int i = -kR; i <= kR; ++i) {
          const double fy = std::clamp(y + slope * i, 0.0, b.count - 1.0);
          const int y0 = std::min(static_cast<int>(fy), std::max(0, b.count - 2));
          const int y1 = std::min(y0 + 1, b.count - 1);
          const double f = fy - y0;
          const int c = std::clamp(x + i, 0, nu - 1);
          const double* r0 = s.pixels.data() + (first + static_cast<size_t>(y0)) * static_cast<size_t>(nu);
          const double* r1 = s.pixels.data() + (first + static_cast<size_t>(y1)) * static_cast<size_t>(nu);
          a += k[static_cast<size_t>(i + kR)] * ((1 - f) * r0[c] + f * r1[c]);
        }
        o[x] = a / total;
      }
    }
    first += static_cast<size_t>(b.count);
  }
  return out;
}

// A candidate line; its tilt's sine and cosine computed once (a Line is
// never changed in place: a new one is made).
struct Line {
  double column, tilt;
  double sin_tilt = std::sin(tilt), cos_tilt = std::cos(tilt);
};

// One pixel of the sum and where its mirror image lies, in binned units of
// its band.
struct Sample {
  int band;
  double value, x, y;  // its value, its binned column and row (within the band)
};

class Fit {
 public:
  Fit(const ViewSum& s, double row, double blur, double blur_tilt)
      : s_(s), g_(blurred_along_normal(s, blur, blur_tilt)), row_(row) {
    size_t first = 0;
    for (const ViewSum::Band& b : s.bands) {
      offset_.push_back(first);
      first += static_cast<size_t>(b.count) * static_cast<size_t>(s.columns);
    }
    // A compared pixel's own value does not depend on the line: read once
    // here, not at every grid tilt and step.
    own_.assign(g_.size(), 0.0);
    for (int b = 0; b < static_cast<int>(s.bands.size()); ++b)
      for (int y = 0; y < s.bands[static_cast<size_t>(b)].count; y += s.row_stride)
        for (int x = 0; x < s.columns; ++x)
          if (inside(b, x, y, 1.0)) own_[offset_[static_cast<size_t>(b)] + static_cast<size_t>(y) * s.columns + x] = at(b, x, y);
  }

  // Detector coordinates of binned pixel (x, y) of band b, and back.
  double det_x(double x) const { return s_.bin * x + 0.5 * (s_.bin - 1); }
  double det_y(int b, double y) const {
    return s_.bands[static_cast<size_t>(b)].first_row + s_.row_bin * y + 0.5 * (s_.row_bin - 1);
  }
  double bin_x(double X) const { return (X - 0.5 * (s_.bin - 1)) / s_.bin; }
  double bin_y(int b, double Y) const {
    return (Y - s_.bands[static_cast<size_t>(b)].first_row - 0.5 * (s_.row_bin - 1)) / s_.row_bin;
  }

  // The mirror image of binned pixel (x, y) of band b about `l`, in binned
  // units of the same band: reflected on the detector, in mm (rows scaled
  // by the aspect), so that pixels that are not square mirror as the
  // detector does.
  void mirror(const Line& l, int b, double x, double y, double& mx, double& my) const {
    const double dx = l.sin_tilt, dy = l.cos_tilt;
    const double px = det_x(x) - l.column, py = (det_y(b, y) - row_) * s_.aspect;
    const double t = px * dx + py * dy;
    mx = bin_x(2 * t * dx - px + l.column);
    my = bin_y(b, (2 * t * dy - py) / s_.aspect + row_);
  }

  // Rows a sample may lie on: its reach along v (kRowTaps) inside the
  // band, and the band's margin left out.
  bool inside(int b, double x, double y, double margin) const {
    const int count = s_.bands[static_cast<size_t>(b)].count;
    const double edge = std::max<double>(kRowTaps / 2, s_.margin);
    return x >= 1 + margin && x <= s_.columns - 2 - margin && y >= edge + margin && y <= count - 1 - edge - margin;
  }

  // The blurred sum at (x, y) of band b: cubic along u; along v a Gaussian
  // of kRowSigma rows, for the sample and its mirror image alike. Cubic
  // reading along v is exact on the rows and errs between them, so at tilt
  // 0, where every mirror image lies on its sample's row, the cost had a
  // cusp: the heads scaled to 0.4 fitted a quarter of their tilt (0.08 deg
  // for 0.3). The Gaussian errs alike wherever a point falls.
  double at(int b, double x, double y) const {
    const int x0 = static_cast<int>(std::floor(x)), y0 = static_cast<int>(std::floor(y));
    const double* base = g_.data() + offset_[static_cast<size_t>(b)];
    double wy[kRowTaps], wx[4];
    row_taps_table().weights(y - y0, wy);
    for (int i = 0; i < 4; ++i) wx[i] = keys(x - (x0 - 1 + i));
    double v = 0;
    for (int j = 0; j < kRowTaps; ++j) {
      const double* r =
          base + static_cast<size_t>(y0 - (kRowTaps / 2 - 1) + j) * static_cast<size_t>(s_.columns) + (x0 - 1);
      v += wy[j] * (wx[0] * r[0] + wx[1] * r[1] + wx[2] * r[2] + wx[3] * r[3]);
    }
    return v;
  }

  // The pixels whose mirror images about `l` lie inside their band with
  // `margin` binned pixels to spare, so that the residuals of lines within
  // a small step of `l` read only the band's own pixels (at() does not
  // check).
  std::vector<Sample> samples(const Line& l, double margin) const {
    std::vector<Sample> out;
    for (int b = 0; b < static_cast<int>(s_.bands.size()); ++b)
      for (int y = 0; y < s_.bands[static_cast<size_t>(b)].count; y += s_.row_stride)
        for (int x = 0; x < s_.columns; ++x) {
          double mx, my;
          mirror(l, b, x, y, mx, my);
          if (!inside(b, mx, my, margin) || !inside(b, x, y, 1.0)) continue;  // at() reads both
          out.push_back({b, own_[offset_[static_cast<size_t>(b)] + static_cast<size_t>(y) * s_.columns + x],
                         static_cast<double>(x), static_cast<double>(y)});
        }
    return out;
  }

  double residual(const Line& l, const Sample& p) const {
    double mx, my;
    mirror(l, p.band, p.x, p.y, mx, my);
    return p.value - at(p.band, mx, my);
  }

  // The mean squared residual over `l`'s own samples.
  double cost(const Line& l, ThreadPool* pool) const {
    const std::vector<Sample> set = samples(l, 1.0);
    if (set.size() < 64) return std::numeric_limits<double>::max();
    std::array<double, kChunks> part{};
    for_chunks(pool, [&](int k) {
      for (size_t i = set.size() * k / kChunks; i < set.size() * (k + 1) / kChunks; ++i) {
        const double r = residual(l, set[i]);
        part[static_cast<size_t>(k)] += r * r;
      }
    });
    double c = 0;
    for (double v : part) c += v;
    return c / static_cast<double>(set.size());
  }

 private:
  const ViewSum& s_;
  std::vector<double> g_;
  std::vector<size_t> offset_;
  std::vector<double> own_;  // at(b, x, y) of the pixels samples() may compare
  double row_;
};

// Gauss-Newton on (column, tilt) from `l` on the sum blurred along the
// normal of `l`'s tilt (Fit), the pixels compared fixed per step.
struct GaussNewton {
  Line l;
  std::array<double, 3> normal{};  // JtJ: cc, ct, tt
  double rss = 0;
  size_t n = 0;
  bool ok = false;
};

GaussNewton gauss_newton(const Fit& fit, Line l, ThreadPool* pool) {
  GaussNewton out;
  constexpr double kHc = 0.02, kHt = 2e-5;
  std::array<double, 3>& normal = out.normal;
  double& rss = out.rss;
  size_t& n = out.n;
  for (int it = 0; it < 20; ++it) {
    const std::vector<Sample> set = fit.samples(l, 1.0);
    if (set.size() < 64) return out;
    // Per chunk: JtJ (3), Jtr (2), rss.
    std::array<std::array<double, 6>, kChunks> part{};
    for_chunks(pool, [&](int k) {
      std::array<double, 6>& a = part[static_cast<size_t>(k)];
      for (size_t i = set.size() * k / kChunks; i < set.size() * (k + 1) / kChunks; ++i) {
        const Sample& p = set[i];
        const double r = fit.residual(l, p);
        const double jc =
            (fit.residual({l.column + kHc, l.tilt}, p) - fit.residual({l.column - kHc, l.tilt}, p)) / (2 * kHc);
        const double jt =
            (fit.residual({l.column, l.tilt + kHt}, p) - fit.residual({l.column, l.tilt - kHt}, p)) / (2 * kHt);
        a[0] += jc * jc, a[1] += jc * jt, a[2] += jt * jt;
        a[3] += jc * r, a[4] += jt * r;
        a[5] += r * r;
      }
    });
    std::array<double, 2> g{};
    normal = {};
    rss = 0;
    for (const auto& a : part) {
      normal[0] += a[0], normal[1] += a[1], normal[2] += a[2];
      g[0] += a[3], g[1] += a[4];
      rss += a[5];
    }
    n = set.size();
    const double det = normal[0] * normal[2] - normal[1] * normal[1];
    if (!(det > 0)) return out;
    const double dc = std::clamp(-(normal[2] * g[0] - normal[1] * g[1]) / det, -1.0, 1.0);
    const double dt = std::clamp(-(normal[0] * g[1] - normal[1] * g[0]) / det, -0.005, 0.005);
    l = Line{l.column + dc, l.tilt + dt};  // its sine and cosine anew
    if (std::fabs(dc) < 1e-4 && std::fabs(dt) < 1e-7) break;
  }
  out.l = l;
  out.ok = n >= 64 && normal[0] * normal[2] - normal[1] * normal[1] > 0;
  return out;
}

// The tilt's standard deviation (radians) by the sandwich rule: the cost's
// curvature measured from the cost itself, over steps that move the far
// columns' mirror images by half a binned pixel, and the gradient's variance
// from the residuals. Gauss-Newton's J^T J takes the curvature to be the
// mean squared derivative of the residuals, but in a noisy sum the noise's
// own gradient swells J while the cost hardly curves more: a scan at 2e4
// photons whose 8 flat frames lent every view the same noise (so the two
// halves of the views agreed) was fitted 0.27 deg for 0.05 with a
// Gauss-Newton sigma of 0.0095 deg, where the cost's curvature says 0.17.
double sandwich_tilt_sigma(const ViewSum& sum, const Fit& fit, const Line& l, ThreadPool* pool) {
  // Steps that move every mirror image by half a binned pixel at most, so
  // that Gauss-Newton's samples (a binned pixel to spare) stay inside.
  const std::vector<Sample> set = fit.samples(l, 1.0);
  if (set.size() < 64) return std::numeric_limits<double>::infinity();
  const double hc = 0.25 * sum.bin, ht = 0.5 / std::max(1, sum.columns);
  // Per chunk: the cost at the stencil's nine points (index (i + 1) * 3 +
  // (j + 1) for column step i, tilt step j), then the gradient's outer
  // products (cc, ct, tt).
  std::array<std::array<double, 12>, kChunks> part{};
  for_chunks(pool, [&](int k) {
    std::array<double, 12>& a = part[static_cast<size_t>(k)];
    for (size_t n = set.size() * k / kChunks; n < set.size() * (k + 1) / kChunks; ++n) {
      double r[3][3];
      for (int i = -1; i <= 1; ++i)
        for (int j = -1; j <= 1; ++j) {
          r[i + 1][j + 1] = fit.residual({l.column + i * hc, l.tilt + j * ht}, set[n]);
          a[static_cast<size_t>((i + 1) * 3 + (j + 1))] += r[i + 1][j + 1] * r[i + 1][j + 1];
        }
      const double jc = (r[2][1] - r[0][1]) / (2 * hc), jt = (r[1][2] - r[1][0]) / (2 * ht);
      const double r2 = r[1][1] * r[1][1];
      a[9] += r2 * jc * jc, a[10] += r2 * jc * jt, a[11] += r2 * jt * jt;
    }
  });
  std::array<double, 12> t{};
  for (const auto& a : part)
    for (size_t i = 0; i < t.size(); ++i) t[i] += a[i];
  const auto F = [&](int i, int j) { return t[static_cast<size_t>((i + 1) * 3 + (j + 1))]; };
  const double hcc = (F(1, 0) + F(-1, 0) - 2 * F(0, 0)) / (hc * hc);
  const double htt = (F(0, 1) + F(0, -1) - 2 * F(0, 0)) / (ht * ht);
  const double hct = (F(1, 1) - F(1, -1) - F(-1, 1) + F(-1, -1)) / (4 * hc * ht);
  const double det = hcc * htt - hct * hct;
  if (!(hcc > 0 && det > 0)) return std::numeric_limits<double>::infinity();
  // H^-1 V H^-1 for the cost F = sum r^2: its gradient 2 sum r J has the
  // variance 4 sum r^2 J J^T, neighbouring residuals counted as one in five.
  constexpr double kCorrelated = 5.0;
  const double vcc = 4 * kCorrelated * t[9], vct = 4 * kCorrelated * t[10], vtt = 4 * kCorrelated * t[11];
  // The tilt's row of H^-1: (-hct, hcc) / det.
  const double a = -hct / det, b = hcc / det;
  return std::sqrt(std::max(0.0, a * a * vcc + 2 * a * b * vct + b * b * vtt));
}

// The line of least mirror asymmetry of `sum` blurred by `blur` binned
// columns, from column `start` and the best of a grid of tilts within 2
// degrees (`grid`) or tilt `tilt0`, on the sum blurred along the normal
// of that start (within 0.125 deg of the tilt found: the grid's half step).
// Its sigma takes the sandwich rule's too where `sandwich` (a fit whose
// sigma is reported; the coarser blur's only lends its tilt).
MirrorAxis fit_line(const ViewSum& sum, double row, double start, double blur, bool grid, double tilt0, bool sandwich,
                    ThreadPool* pool) {
  MirrorAxis out;
  Line l{start, tilt0};
  if (grid) {
    const Fit fit(sum, row, blur, 0.0);
    // A step of 0.25 degree moves the far columns by less than the blur.
    double best = std::numeric_limits<double>::max();
    for (int k = -8; k <= 8; ++k) {
      const Line t{start, k * 0.25 * kPi / 180};
      const double c = fit.cost(t, pool);
      if (c < best) best = c, l = t;
    }
  }
  const Fit fit(sum, row, blur, l.tilt);
  const GaussNewton gn = gauss_newton(fit, l, pool);
  if (!gn.ok) return out;
  l = gn.l;
  if (std::fabs(l.tilt) > 3 * kPi / 180) return out;
  const std::array<double, 3>& normal = gn.normal;
  const double rss = gn.rss;
  const size_t n = gn.n;
  const double det = normal[0] * normal[2] - normal[1] * normal[1];
  // Neighbouring residuals are alike (the blur and the cubic weights span
  // about five binned pixels along u): the variance counts them as one.
  constexpr double kCorrelated = 5.0;
  const double s2 = rss / static_cast<double>(n - 2) * kCorrelated;
  out.found = true;
  out.column = l.column;
  out.tilt = l.tilt;
  out.sigma = std::sqrt(s2 * normal[0] / det);
  if (sandwich) out.sigma = std::max(out.sigma, sandwich_tilt_sigma(sum, fit, l, pool));
  return out;
}

}  // namespace

MirrorAxis mirror_axis(const ViewSum& sum, double row, double start, ThreadPool* pool) {
  if (sum.columns < 8 || sum.bands.empty()) return MirrorAxis{};
  MirrorAxis fine = fit_line(sum, row, start, 1.0, true, 0.0, true, pool);
  if (!fine.found) return fine;
  // Where the sum has features of about a pixel (a small object on a
  // coarse detector: the modified head 20 mm across on 0.8 mm pixels
  // fitted 0.35 deg for a 1 deg tilt, with a sigma of 0.03), reading it
  // between pixels pulls the tilt towards the pixel grid's, and the blur
  // changes it: the fit blurred twice as much bounds that bias.
  const MirrorAxis coarse = fit_line(sum, row, fine.column, 2.0, false, fine.tilt, false, pool);  // its tilt alone
  if (!coarse.found) return MirrorAxis{};
  fine.sigma = std::max(fine.sigma, std::fabs(fine.tilt - coarse.tilt));
  return fine;
}

MirrorAxis mirror_line_near(const ViewSum& sum, double row, const MirrorAxis& near, ThreadPool* pool) {
  if (sum.columns < 8 || sum.bands.empty() || !near.found) return MirrorAxis{};
  return fit_line(sum, row, near.column, 1.0, false, near.tilt, false, pool);
}

}  // namespace fdk::symmetry
