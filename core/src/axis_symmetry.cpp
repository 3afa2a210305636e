#include "axis_symmetry.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace fdk::symmetry {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Keys' cubic convolution weight (a = -1/2).
double keys(double t) {
  t = std::fabs(t);
  if (t < 1) return (1.5 * t - 2.5) * t * t + 1;
  if (t < 2) return ((-0.5 * t + 2.5) * t - 4) * t + 2;
  return 0;
}

// The sum blurred along u by a Gaussian of `sigma` binned pixels: read
// between pixels (cubic weights) unblurred, the sum of the heads' sharp
// projections biased the fitted tilt by up to 0.044 deg (a prototype on
// the whole 160 x 128 detector of the estimator's tests), blurred 0.005
// deg. Not along v: in the kept bands of 11 rows, blurred along v too (to
// the band's ends) it was 0.12 deg, along u only 0.016 deg.
std::vector<double> blurred_along_u(const ViewSum& s, double sigma) {
  constexpr int kR = 6;
  std::array<double, 2 * kR + 1> k{};
  double total = 0;
  for (int i = -kR; i <= kR; ++i) total += k[static_cast<size_t>(i + kR)] = std::exp(-0.5 * i * i / (sigma * sigma));
  std::vector<double> out(s.pixels.size());
  const int nu = s.columns;
  for (size_t row = 0; row * static_cast<size_t>(nu) < s.pixels.size(); ++row) {
    const double* in = s.pixels.data() + row * static_cast<size_t>(nu);
    double* o = out.data() + row * static_cast<size_t>(nu);
    for (int x = 0; x < nu; ++x) {
      double a = 0;
      for (int i = -kR; i <= kR; ++i) a += k[static_cast<size_t>(i + kR)] * in[std::clamp(x + i, 0, nu - 1)];
      o[x] = a / total;
    }
  }
  return out;
}

struct Line {
  double column, tilt;
};

// One pixel of the sum and where its mirror image lies, in binned units of
// its band.
struct Sample {
  int band;
  double value, x, y;  // its value, its binned column and row (within the band)
};

class Fit {
 public:
  Fit(const ViewSum& s, double row, double blur) : s_(s), g_(blurred_along_u(s, blur)), row_(row) {
    size_t at = 0;
    for (const ViewSum::Band& b : s.bands) {
      offset_.push_back(at);
      at += static_cast<size_t>(b.count) * static_cast<size_t>(s.columns);
    }
  }

  // Detector coordinates of binned pixel (x, y) of band b, and back.
  double det_x(double x) const { return s_.bin * x + 0.5 * (s_.bin - 1); }
  double det_y(int b, double y) const { return s_.bands[static_cast<size_t>(b)].first_row + s_.bin * y + 0.5 * (s_.bin - 1); }
  double bin_x(double X) const { return (X - 0.5 * (s_.bin - 1)) / s_.bin; }
  double bin_y(int b, double Y) const {
    return (Y - s_.bands[static_cast<size_t>(b)].first_row - 0.5 * (s_.bin - 1)) / s_.bin;
  }

  // The mirror image of binned pixel (x, y) of band b about `l`, in binned
  // units of the same band.
  void mirror(const Line& l, int b, double x, double y, double& mx, double& my) const {
    const double dx = std::sin(l.tilt), dy = std::cos(l.tilt);
    const double px = det_x(x) - l.column, py = det_y(b, y) - row_;
    const double t = px * dx + py * dy;
    mx = bin_x(2 * t * dx - px + l.column);
    my = bin_y(b, 2 * t * dy - py + row_);
  }

  bool inside(int b, double x, double y, double margin) const {
    return x >= 1 + margin && x <= s_.columns - 2 - margin && y >= 1 + margin &&
           y <= s_.bands[static_cast<size_t>(b)].count - 2 - margin;
  }

  double at(int b, double x, double y) const {
    const int x0 = static_cast<int>(std::floor(x)), y0 = static_cast<int>(std::floor(y));
    const double* base = g_.data() + offset_[static_cast<size_t>(b)];
    double v = 0;
    for (int j = -1; j <= 2; ++j) {
      const double wy = keys(y - (y0 + j));
      const double* r = base + static_cast<size_t>(y0 + j) * static_cast<size_t>(s_.columns);
      double a = 0;
      for (int i = -1; i <= 2; ++i) a += keys(x - (x0 + i)) * r[x0 + i];
      v += wy * a;
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
      for (int y = 0; y < s_.bands[static_cast<size_t>(b)].count; ++y)
        for (int x = 0; x < s_.columns; ++x) {
          double mx, my;
          mirror(l, b, x, y, mx, my);
          if (!inside(b, mx, my, margin)) continue;
          out.push_back({b, g_[offset_[static_cast<size_t>(b)] + static_cast<size_t>(y) * s_.columns + x],
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
  double cost(const Line& l) const {
    const std::vector<Sample> set = samples(l, 1.0);
    double c = 0;
    for (const Sample& p : set) {
      const double r = residual(l, p);
      c += r * r;
    }
    return set.size() < 64 ? std::numeric_limits<double>::max() : c / static_cast<double>(set.size());
  }

 private:
  const ViewSum& s_;
  std::vector<double> g_;
  std::vector<size_t> offset_;
  double row_;
};

// The line of least mirror asymmetry of `sum` blurred by `blur` binned
// pixels along u, from column `start` and the best of a grid of tilts
// within 2 degrees (`grid`) or tilt `tilt0`.
MirrorAxis fit_line(const ViewSum& sum, double row, double start, double blur, bool grid, double tilt0) {
  MirrorAxis out;
  const Fit fit(sum, row, blur);
  Line l{start, tilt0};
  if (grid) {
    // A step of 0.25 degree moves the far columns by less than the blur.
    double best = std::numeric_limits<double>::max();
    for (int k = -8; k <= 8; ++k) {
      const Line t{start, k * 0.25 * kPi / 180};
      const double c = fit.cost(t);
      if (c < best) best = c, l = t;
    }
  }
  // Gauss-Newton on (column, tilt), the pixels compared fixed per step.
  constexpr double kHc = 0.02, kHt = 2e-5;
  std::array<double, 3> normal{};  // JtJ: cc, ct, tt
  double rss = 0;
  size_t n = 0;
  for (int it = 0; it < 20; ++it) {
    const std::vector<Sample> set = fit.samples(l, 1.0);
    if (set.size() < 64) return out;
    std::array<double, 2> g{};
    normal = {};
    rss = 0;
    for (const Sample& p : set) {
      const double r = fit.residual(l, p);
      const double jc = (fit.residual({l.column + kHc, l.tilt}, p) - fit.residual({l.column - kHc, l.tilt}, p)) / (2 * kHc);
      const double jt = (fit.residual({l.column, l.tilt + kHt}, p) - fit.residual({l.column, l.tilt - kHt}, p)) / (2 * kHt);
      normal[0] += jc * jc, normal[1] += jc * jt, normal[2] += jt * jt;
      g[0] += jc * r, g[1] += jt * r;
      rss += r * r;
    }
    n = set.size();
    const double det = normal[0] * normal[2] - normal[1] * normal[1];
    if (!(det > 0)) return out;
    const double dc = std::clamp(-(normal[2] * g[0] - normal[1] * g[1]) / det, -1.0, 1.0);
    const double dt = std::clamp(-(normal[0] * g[1] - normal[1] * g[0]) / det, -0.005, 0.005);
    l.column += dc;
    l.tilt += dt;
    if (std::fabs(dc) < 1e-4 && std::fabs(dt) < 1e-7) break;
  }
  const double det = normal[0] * normal[2] - normal[1] * normal[1];
  if (!(det > 0) || n < 64 || std::fabs(l.tilt) > 3 * kPi / 180) return out;
  // Neighbouring residuals are alike (the blur and the cubic weights span
  // about five binned pixels along u): the variance counts them as one.
  constexpr double kCorrelated = 5.0;
  const double s2 = rss / static_cast<double>(n - 2) * kCorrelated;
  out.found = true;
  out.column = l.column;
  out.tilt = l.tilt;
  out.sigma = std::sqrt(s2 * normal[0] / det);
  return out;
}

}  // namespace

MirrorAxis mirror_axis(const ViewSum& sum, double row, double start) {
  if (sum.columns < 8 || sum.bands.empty()) return MirrorAxis{};
  MirrorAxis fine = fit_line(sum, row, start, 1.0, true, 0.0);
  if (!fine.found) return fine;
  // Where the sum has features of about a pixel (a small object on a
  // coarse detector: the modified head 20 mm across on 0.8 mm pixels
  // fitted 0.35 deg for a 1 deg tilt, with a sigma of 0.03), reading it
  // between pixels pulls the tilt towards the pixel grid's, and the blur
  // changes it: the fit blurred twice as much bounds that bias.
  const MirrorAxis coarse = fit_line(sum, row, fine.column, 2.0, false, fine.tilt);
  if (!coarse.found) return MirrorAxis{};
  fine.sigma = std::max(fine.sigma, std::fabs(fine.tilt - coarse.tilt));
  return fine;
}

}  // namespace fdk::symmetry
