// Why conjugate rays between individual views. In the plane of the source
// orbit the fan-beam relation p(beta, gamma) = p(beta + pi - 2 gamma, -gamma)
// is exact, so for every pair of views whose azimuths differ by pi - 2 gamma
// (gamma inside the fan) there is one column x of the first view whose ray
// the second view measures again at -x. Comparing those two pixels needs
// interpolation along u only (cubic), never across views, so the cost is
// exact whatever the angular step, the arc (short scans keep the pairs near
// both ends) or the detector's reach (half-fan scans keep the pairs inside
// the doubly measured band), and per-view angles enter as they are. The
// detector offset moves every column; the in-plane tilt turns the orbit
// plane's line across the rows, so rows about the principal point are kept
// and read along the candidate's tilted line. Lines half-way to the edges
// add the tilt's shear; there conjugate rays are only approximate (rays at
// one detector height cross near the axis and drift apart by the cone
// angle), a bias the accuracy tests measure in cone beam. (offset, tilt) is
// found by a grid over the offset, then Gauss-Newton on both; the offset
// reported by a search on the cost's values (searched_offset). Tilt check:
// the tilt is fitted again on the orbit plane's line alone (exact; read
// along v with a Gaussian, since under a tilt it runs between rows, and a
// reading exact on the rows favours tilt 0: conjugate_rays.cpp). Where
// that fit's own sigma (curvature and block spread) pins the tilt and the
// same line read with cubic weights agrees (the Gaussian's blur can bias
// it), it is reported on its own, unless a full scan's views' sum says
// otherwise; elsewhere the all-lines tilt is, its sigma widened by the
// fits' disagreement (the off-plane lines mistake structure along y for a
// tilt).
// LEAP's find_centerCol and Mantid's 0-180 degree correlation mirror a row
// of one view onto the view pi later: exact in parallel beam only, and it
// needs a view at exactly +pi; TomoPy's find_center_vo scores a parallel
// sinogram's Fourier symmetry, again parallel beam and no tilt. Views that do
// not change with angle (a centred uniform cylinder) leave only the profile's
// two edges to go by, with nothing to cross-check them: the share of the
// kept rows' variance that changes with angle (noise removed) sets the
// confidence and LOW_STRUCTURE; the spread between four disjoint blocks of
// pairs widens the sigmas. Where the conjugate rays leave the tilt loose, a
// full scan's views' sum gives it by its mirror symmetry about the axis's
// image (axis_symmetry.hpp), read in the same kept rows.
#include "fdk/core/geometry_estimator.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <thread>
#include <utility>

#include "mirror_tilt.hpp"
#include "row_sums.hpp"
#include "axis_symmetry.hpp"
#include "conjugate_rays.hpp"
#include "fixed_pattern.hpp"
#include "fdk/core/thread_pool.hpp"
#include "fdk/core/error.hpp"

namespace fdk {

namespace {

using conjugate::Candidate;
using conjugate::Fit;
using conjugate::Pair;
using conjugate::Problem;

constexpr double kPi = 3.14159265358979323846;
constexpr uint64_t kDefaultMemoryLimit = uint64_t{256} << 20;
constexpr size_t kMinPairs = 8;
constexpr size_t kCoarseSamples = 9000;  // pairs x lines the offset grid looks at
constexpr size_t kStartPairs = 2000;   // pairs the unweighted start looks at
constexpr size_t kMaxPairs = 6000;     // pairs the estimate uses at most
constexpr size_t kMaxKeptViews = 360;  // views whose rows are kept, at most
constexpr uint64_t kSumPixels = 80000000;  // pixels the rows' sums read in a scan, about
constexpr int kBlocks = 4;  // disjoint blocks of pairs for the spread
// The orbit line's tilt sigma (radians: curvature and block spread) below
// which its tilt is taken alone.
constexpr double kOrbitTiltPinned = 0.01 * kPi / 180.0;
// How far (radians) the orbit line's tilts read along v with the Gaussian
// and with cubic weights may differ and still be taken alone (check_tilt).
constexpr double kReadingBias = 0.03 * kPi / 180.0;
// Tilt sigma (degrees) at which the precision term halves the confidence:
// issue 41 asks for 0.05 deg.
constexpr double kTiltSigmaScale = 0.05;
// The largest tilt sigma (degrees) reported: twice it within the 0.05 deg
// that matters. At 0.05 a short scan's modified head in a wide cone was
// reported 0.067 deg off with a sigma of 0.045.
constexpr double kTiltReportSigma = 0.5 * kTiltSigmaScale;
// How far (degrees) the mirror fit may stand from a pinned orbit line and
// not contradict it: sampling a sharp-edged sum has put the mirror fit up
// to 0.055 deg from the truth (the drilled cylinder).
constexpr double kMirrorBias = 0.06;
// Share of the angle-varying variance below which the views are taken as
// structureless (calibrated: a centred uniform cylinder with Poisson noise
// stays below 2e-4, the drilled low-contrast cylinder of the tests is at
// 3e-3; the scale halves the confidence at 5e-4, so the one is low and the
// other not held down by its low contrast).
constexpr double kStructureScale = 5e-4;

// Every line of the plan, or only the orbit plane's (exact) one.
std::vector<int> all_lines(const conjugate::RowPlan& plan) {
  std::vector<int> lines(plan.lines.size());
  for (size_t k = 0; k < lines.size(); ++k) lines[k] = static_cast<int>(k);
  return lines;
}
std::vector<int> orbit_line(const conjugate::RowPlan& plan) {
  for (size_t k = 0; k < plan.lines.size(); ++k)
    if (plan.lines[k].band == 0 && plan.lines[k].height == 0.0) return {static_cast<int>(k)};
  return {0};
}

// Every `stride`-th pair: the grid needs the cost's shape, not its precision.
std::vector<Pair> thinned(const std::vector<Pair>& pairs, size_t keep) {
  const size_t stride = std::max<size_t>(1, pairs.size() / keep);
  std::vector<Pair> out;
  for (size_t k = 0; k < pairs.size(); k += stride) out.push_back(pairs[k]);
  return out;
}

// The vertex of the parabola through three equally spaced costs, in steps
// from the middle one.
double parabola_vertex(double left, double mid, double right) {
  const double curvature = left - 2 * mid + right;
  return curvature > 0 ? std::clamp(0.5 * (left - right) / curvature, -1.0, 1.0) : 0.0;
}

// The offset by a grid of half columns over +-15 % of the detector's width,
// summed over every kept line (a few-view scan has few pairs, and the
// orbit line alone gives each pair one sample: 135 for 90 views in a
// narrow fan, too few to see the object through the noise; a long scan's
// pairs thinned to kCoarseSamples in all), refined by a
// parabola: a start inside the basin of Gauss-Newton, whatever the offset.
// Its `rival`: how far (mm) from that start the grid finds another offset
// whose cost lies within the noise of the best (4.2 standard deviations
// of a mean of squared Gaussian residuals, cost * sqrt(2 / samples), for
// the difference of two), at least 2 columns off: a second minimum the
// scan cannot tell from the first, which the local sigmas never see (a
// 90-view scan at 2000 photons was pinned at -22 columns, sigma 0.15, for
// 0.3). 0 where there is none.
struct CoarseOffset {
  double offset = 0, rival = 0;
};
CoarseOffset coarse_offset(const Problem& p, const std::vector<Pair>& pairs) {
  const std::vector<int> lines = all_lines(*p.plan);
  const std::vector<Pair> few = thinned(pairs, kCoarseSamples / lines.size());
  const double step = 0.5 * p.detector->spacing[0];
  const int half = std::max(2, static_cast<int>(0.15 * p.detector->size[0] / 0.5));
  std::vector<double> cost(static_cast<size_t>(2 * half + 1), 0.0);
  for (int l : lines) {
    const std::vector<double> one = conjugate::offset_scan(p, few, l, step, half);
    for (size_t g = 0; g < cost.size(); ++g) cost[g] += one[g];
  }
  const int best = static_cast<int>(std::min_element(cost.begin() + 1, cost.end() - 1) - cost.begin());
  CoarseOffset out;
  out.offset = (best - half + parabola_vertex(cost[best - 1], cost[best], cost[best + 1])) * step;
  const double samples = static_cast<double>(few.size() * lines.size());
  const double within = cost[best] * (1.0 + 3.0 * std::sqrt(2.0) * std::sqrt(2.0 / std::max(samples, 1.0)));
  for (int g = 0; g < static_cast<int>(cost.size()); ++g) {
    const double apart = std::abs(g - best) * step;
    if (apart >= 2.0 * p.detector->spacing[0] && cost[static_cast<size_t>(g)] <= within)
      out.rival = std::max(out.rival, apart);
  }
  return out;
}

struct Solution {
  Candidate c;
  Fit fit;  // at c, with the Jacobian
};

// The offset alone, by its cost's values: downhill from the start in
// steps of a quarter column to the nearest minimum, then parabolas through
// three values at steps shrinking fourfold, to `tolerance_columns`.
// Not Gauss-Newton: in a noisy scan the views' own noise swells J^T J far
// beyond the cost's curvature (a full scan at 2e4 photons: 18.7 against
// 2.9 from the cost's values; a 270 deg arc 1.04 where the cost is flat
// within its noise), so its steps fell short and twelve of them stopped
// 0.4 column from the cost's minimum, and the blocks of pairs, four steps
// each from the same start, agreed with it (their spread said 0.06 column
// for errors up to 0.37). A search over a wider bracket found other
// minima for a block.
Candidate searched_offset(const Problem& p, const std::vector<Pair>& pairs, size_t begin, size_t end, Candidate c,
                          double scale, const std::vector<int>& lines, double tolerance_columns) {
  const double col = p.detector->spacing[0];
  const auto cost = [&](double offset) {
    return conjugate::evaluate(p, pairs, begin, end, lines, Candidate{offset, c.tilt}, false, scale).cost;
  };
  double x = c.offset, fx = cost(x), h = 0.25 * col;
  for (int walked = 0; h > tolerance_columns * col && walked < 40;) {
    const double fl = cost(x - h), fr = cost(x + h);
    if (fl < fx || fr < fx) {  // downhill, at most ten columns
      ++walked;
      if (fl < fr) {
        x -= h, fx = fl;
      } else {
        x += h, fx = fr;
      }
      continue;
    }
    const double v = x + parabola_vertex(fl, fx, fr) * h, fv = cost(v);
    if (fv < fx) x = v, fx = fv;
    h *= 0.25;
  }
  c.offset = x;
  return c;
}

// Levenberg-Marquardt on (offset, tilt), or searched_offset on the offset
// alone (the rows kept cannot tell the tilt, or it is set), its fit then
// evaluated with the Jacobian (curvature_sigmas). The tilt stays within
// what the kept rows can follow.
Solution refine(const Problem& p, const std::vector<Pair>& pairs, size_t begin, size_t end, Candidate c,
                bool with_tilt, int iterations, double scale, const std::vector<int>& lines) {
  if (!with_tilt) {
    c = searched_offset(p, pairs, begin, end, c, scale, lines, 1e-3);
    return Solution{c, conjugate::evaluate(p, pairs, begin, end, lines, c, true, scale)};
  }
  const double reach = std::max(p.plan->tilt_reach, 1e-3);
  Fit fit = conjugate::evaluate(p, pairs, begin, end, lines, c, true, scale);
  double lambda = 1e-3;
  for (int it = 0; it < iterations; ++it) {
    const double a = fit.jtj[0] * (1 + lambda), b = fit.jtj[1], d = fit.jtj[2] * (1 + lambda) + 1e-30;
    Candidate next = c;
    const double det = a * d - b * b;
    if (!(det > 0)) break;
    next.offset -= (d * fit.jtr[0] - b * fit.jtr[1]) / det;
    next.tilt = std::clamp(c.tilt - (a * fit.jtr[1] - b * fit.jtr[0]) / det, -reach, reach);
    const Fit trial = conjugate::evaluate(p, pairs, begin, end, lines, next, true, scale);
    if (trial.cost <= fit.cost) {
      const bool settled = std::fabs(next.offset - c.offset) < 1e-5 * p.detector->spacing[0] &&
                           std::fabs(next.tilt - c.tilt) < 1e-7;
      c = next;
      fit = trial;
      lambda = std::max(lambda * 0.1, 1e-6);
      if (settled) break;
    } else {
      lambda *= 10;
    }
  }
  return Solution{c, fit};
}

// The Cauchy weights' scale: twice the median |r| of a least-squares fit
// (a typical sample's mismatch: noise, interpolation), so that the aliased
// edges' far larger mismatches count little.
double residual_scale(const Problem& p, const std::vector<Pair>& pairs, const Candidate& c,
                      const std::vector<int>& lines) {
  std::vector<float> r;
  conjugate::evaluate(p, pairs, 0, pairs.size(), lines, c, false, 0.0, &r);
  if (r.empty()) return 0.0;
  std::nth_element(r.begin(), r.begin() + r.size() / 2, r.end());
  return std::max(2.0 * r[r.size() / 2], 1e-6);
}

// One standard deviation of offset (mm) and tilt (radians) from the
// curvature of the cost and its residual.
std::array<double, 2> curvature_sigmas(const Fit& f, bool with_tilt) {
  const double dof = std::max(1.0, static_cast<double>(f.samples) - 2.0);
  const double s2 = f.cost / dof;
  if (!with_tilt) return {std::sqrt(s2 / std::max(f.jtj[0], 1e-300)), 0.0};
  const double det = std::max(f.jtj[0] * f.jtj[2] - f.jtj[1] * f.jtj[1], 1e-300);
  return {std::sqrt(s2 * f.jtj[2] / det), std::sqrt(s2 * f.jtj[0] / det)};
}

// The standard error of the mean of the estimates of disjoint blocks of
// pairs (ordered by azimuth: each block sees the object from its own side).
std::array<double, 2> block_sigmas(const Problem& p, const std::vector<Pair>& pairs, const Candidate& c,
                                   bool with_tilt, double scale, const std::vector<int>& lines, int tilt_steps = 4) {
  if (pairs.size() < kBlocks * kMinPairs) return {0.0, 0.0};
  double sum[2] = {0, 0}, sum2[2] = {0, 0};
  for (int b = 0; b < kBlocks; ++b) {
    const size_t begin = pairs.size() * b / kBlocks, end = pairs.size() * (b + 1) / kBlocks;
    // `tilt_steps` steps with the tilt, a hundredth of a column without.
    const Candidate e = with_tilt ? refine(p, pairs, begin, end, c, true, tilt_steps, scale, lines).c
                                  : searched_offset(p, pairs, begin, end, c, scale, lines, 1e-2);
    const double v[2] = {e.offset, e.tilt};
    for (int k = 0; k < 2; ++k) sum[k] += v[k], sum2[k] += v[k] * v[k];
  }
  std::array<double, 2> out{};
  for (int k = 0; k < 2; ++k) {
    const double mean = sum[k] / kBlocks;
    const double var = std::max(0.0, (sum2[k] - kBlocks * mean * mean) / (kBlocks - 1));
    out[k] = std::sqrt(var / kBlocks);
  }
  return out;
}

// The offset at tilt c.tilt, on the lines of the orbit plane's band alone
// (where conjugate rays are exact; the lines off the plane pair rays that
// only cross), read along u with the Gaussian (conjugate::Reading::smooth),
// and its sigma (mm: curvature and block spread). Read with cubic weights
// along u, noisy rows biased a half-fan scan's offset: the heads' by -0.17
// to -0.28 pixel at 1e4 photons, over seven noise seeds and either set of
// lines; read so, 0.02 at most (docs/ACCURACY.md). The tilt comes from the
// other fits: the sharp cubic reading along u serves them better.
struct OffsetFit {
  Candidate c;
  double sigma = 0;
};
OffsetFit orbit_offset(const Problem& problem, const std::vector<Pair>& pairs, const Candidate& c,
                       bool with_spread = true) {
  Problem p = problem;
  p.reading = conjugate::Reading::smooth;
  std::vector<int> band;
  for (size_t k = 0; k < p.plan->lines.size(); ++k)
    if (p.plan->lines[k].band == 0) band.push_back(static_cast<int>(k));
  const double scale = residual_scale(p, thinned(pairs, kStartPairs), c, band);
  const Solution o = refine(p, pairs, 0, pairs.size(), c, false, 12, scale, band);
  const double curv = curvature_sigmas(o.fit, false)[0];
  const double spread = with_spread ? block_sigmas(p, pairs, o.c, false, scale, band)[0] : 0.0;
  return OffsetFit{o.c, std::max(curv, spread)};
}

struct TiltCheck {
  bool orbit = false;       // the orbit line pins the tilt on its own
  double tilt = 0, sigma = 0;  // radians: the orbit line's tilt and sigma, where it pins it
  double all_sigma = 0;     // radians: what the check adds to the all-lines tilt's uncertainty
};

// The orbit plane's line alone is exact (the fan-beam relation; read along
// v with the Gaussian, which errs alike wherever the line falls between
// rows), but tells the tilt only where the object changes along y at the
// orbit plane; the lines off the plane add the shear
// a tilt makes, but there conjugate rays only cross (at the chord's middle),
// and an object that changes along y mismatches them in the very pattern of
// a tilt (docs/ACCURACY.md). So the tilt is fitted on the orbit line too:
// where its own sigma (curvature and the spread of disjoint blocks of pairs)
// pins it down and its two readings agree (below), it is the tilt
// reported, whatever the off-plane lines say;
// elsewhere the all-lines tilt is, with the two fits' disagreement in its
// sigma, so an unchecked tilt never looks precise.
TiltCheck check_tilt(const Problem& p, const std::vector<Pair>& pairs, const Solution& all, double scale) {
  const std::vector<int> line = orbit_line(*p.plan);
  // Two starts: the all-lines tilt (possibly biased) and none; the orbit
  // line's cost has side minima a biased start can fall into.
  Solution orbit = refine(p, pairs, 0, pairs.size(), all.c, true, 12, scale, line);
  const Solution level = refine(p, pairs, 0, pairs.size(), Candidate{all.c.offset, 0.0}, true, 12, scale, line);
  if (level.fit.cost < orbit.fit.cost) orbit = level;
  // Its blocks take the fit's twelve steps: on a flat cost four kept them
  // by their common start (docs/ACCURACY.md, "Session 41").
  const double orbit_sigma = std::max(curvature_sigmas(orbit.fit, true)[1],
                                      block_sigmas(p, pairs, orbit.c, true, scale, line, 12)[1]);
  const double unchecked = std::max(std::fabs(orbit.c.tilt - all.c.tilt), orbit_sigma);
  if (orbit_sigma >= kOrbitTiltPinned) return TiltCheck{false, 0, 0, unchecked};
  // The Gaussian's blur across rows meets rows that span different heights
  // in the two views of a pair (their magnifications differ), and where the
  // object changes sharply along y at the orbit plane that lends the tilt a
  // bias its sigma does not see: the short scan's blobs 0.024-0.026 deg, a
  // modified head in a wide cone (SID 400 mm) 0.076 deg (sigma 0.005).
  // Read with cubic weights instead (no blur, but a cusp at tilt 0 that
  // noise falls into), from the Gaussian's tilt: where both readings agree
  // within that bias, the cubic one is reported (the blobs' then within
  // 0.002 deg) with the Gaussian's sigma, which bounds the noise (the cubic
  // fit's own spread over blocks of pairs does not: 0.033 deg on the
  // 128-column scan of test_convert_estimate, whose cubic tilt is 0.008 deg
  // off); where they do not, the orbit line is not taken alone.
  Problem cubic = p;
  cubic.cubic_rows = true;
  const Solution sharp = refine(cubic, pairs, 0, pairs.size(), orbit.c, true, 12, scale, line);
  const double apart = std::fabs(sharp.c.tilt - orbit.c.tilt);
  // The all-lines sigma (used where the views' sum contradicts the orbit
  // line) keeps the readings' disagreement too.
  if (apart <= kReadingBias)
    return TiltCheck{true, sharp.c.tilt, std::max(orbit_sigma, curvature_sigmas(sharp.fit, true)[1]),
                     std::max(unchecked, apart)};
  return TiltCheck{false, 0, 0, std::max(unchecked, apart)};
}

// The orbit plane's row of every kept view, in line integrals.
std::vector<std::vector<double>> orbit_rows(const conjugate::RowPlan& plan, int columns,
                                            const std::vector<std::shared_ptr<const conjugate::KeptView>>& kept,
                                            int principal_row) {
  const conjugate::Band& band = plan.bands[0];
  const int r = std::clamp(principal_row - band.first_row, 0, band.count - 1);
  std::vector<std::vector<double>> rows;
  for (const auto& kv : kept) {
    if (!kv) continue;
    const uint16_t* q = kv->q + static_cast<size_t>(band.offset + r) * columns;
    std::vector<double> row(static_cast<size_t>(columns));
    for (int c = 0; c < columns; ++c) row[c] = kv->base + kv->step * q[c];
    rows.push_back(std::move(row));
  }
  return rows;
}

// The noise variance of one pixel, from second differences along u (a
// smooth profile's are small; the largest 2 %, edges, are left out).
double noise_variance(const std::vector<std::vector<double>>& rows) {
  std::vector<double> d2;
  for (const auto& row : rows)
    for (size_t c = 1; c + 1 < row.size(); ++c) {
      const double s = row[c - 1] - 2 * row[c] + row[c + 1];
      d2.push_back(s * s);
    }
  if (d2.empty()) return 0.0;
  const size_t keep = std::max<size_t>(1, d2.size() * 98 / 100);
  std::nth_element(d2.begin(), d2.begin() + (keep - 1), d2.end());
  double sum = 0;
  for (size_t k = 0; k < keep; ++k) sum += d2[k];
  return sum / keep / 6.0;
}

// The share of the orbit row's variance that changes with the view (its
// noise removed) against the variance of the mean profile: 0 for views that
// are all alike.
double angular_share(const std::vector<std::vector<double>>& rows) {
  if (rows.size() < 2) return 0.0;
  const size_t n = rows[0].size();
  std::vector<double> mean(n, 0.0);
  for (const auto& row : rows)
    for (size_t c = 0; c < n; ++c) mean[c] += row[c] / rows.size();
  double changing = 0;
  for (const auto& row : rows)
    for (size_t c = 0; c < n; ++c) changing += (row[c] - mean[c]) * (row[c] - mean[c]);
  changing /= static_cast<double>(rows.size() * n);
  double level = 0, spread = 0;
  for (double m : mean) level += m / n;
  for (double m : mean) spread += (m - level) * (m - level) / n;
  const double noise = noise_variance(rows) * (1.0 - 1.0 / rows.size());
  return spread > 0 ? std::max(0.0, changing - noise) / spread : 0.0;
}

// The arc the views cover, radians: 2 pi less the widest gap.
double covered_arc(const std::vector<conjugate::ViewPose>& poses, const std::vector<char>& present) {
  std::vector<double> b;
  for (size_t k = 0; k < poses.size(); ++k)
    if (present[k]) b.push_back(poses[k].beta);
  if (b.size() < 2) return 0.0;
  std::sort(b.begin(), b.end());
  double gap = b.front() + 2 * kPi - b.back();
  for (size_t k = 1; k < b.size(); ++k) gap = std::max(gap, b[k] - b[k - 1]);
  return 2 * kPi - gap;
}

// A whole turn, give or take the gaps between views (`step`: the arc over
// the views present).
bool full_turn(double arc, double step) { return arc > 2 * kPi - 2.5 * step; }

std::string scan_words(double arc, double step, const fdk_view& v, const fdk_detector& d) {
  std::string s = full_turn(arc, step) ? "full scan" : "arc of " + std::to_string(std::lround(arc * 180 / kPi)) + " deg";
  const double c = (-v.projection_offset_x - d.origin[0]) / d.spacing[0];
  if (std::fabs(c - 0.5 * (d.size[0] - 1)) > 0.1 * d.size[0]) s += ", offset detector";
  return s;
}

// x with one decimal, without a locale.
std::string tenths(double x) {
  const long t = std::lround(std::fabs(x) * 10);
  return (x < 0 && t ? "-" : "") + std::to_string(t / 10) + "." + std::to_string(t % 10);
}

std::string hundredths(double x) {
  const long t = std::lround(std::fabs(x) * 100);
  const std::string cents = std::to_string(t % 100);
  return (x < 0 && t ? "-" : "") + std::to_string(t / 100) + "." + (cents.size() < 2 ? "0" : "") + cents;
}

std::string clipped(std::string s) {
  if (s.size() > 255) s.resize(255);
  return s;
}

}  // namespace

GeometryEstimator::GeometryEstimator(std::vector<fdk_view> views, const fdk_detector& detector, uint64_t memory_limit)
    : views_(std::move(views)), detector_(detector), memory_limit_(memory_limit ? memory_limit : kDefaultMemoryLimit) {
  if (views_.size() < 2) fail(FDK_ERROR_INVALID_ARGUMENT, "geometry estimation needs at least 2 views");
  if (detector_.size[0] < 8) fail(FDK_ERROR_INVALID_ARGUMENT, "geometry estimation needs at least 8 detector columns");
  // Every view of a long scan costs its push a copy of the bands and adds
  // pairs beyond the cap: an evenly spread subset is kept (a 1200-view
  // scan's every 4th view still pairs each view with those of the fan).
  stride_ = static_cast<int>((views_.size() + kMaxKeptViews - 1) / kMaxKeptViews);
  std::vector<fdk_view> kept_views;
  for (size_t k = 0; k < views_.size(); k += static_cast<size_t>(stride_)) kept_views.push_back(views_[k]);
  // Every row binned takes a quarter of the limit at most, the bands the rest.
  // Of a large detector's kept views, every sum_stride_-th: (b)'s 300 kept
  // views' rows (506 read of 1012, 155 M pixels) made its push 0.11 s
  // longer on an H200 host; 80 M pixels at most.
  const uint64_t pixels = static_cast<uint64_t>(kept_views.size()) *
                          static_cast<uint64_t>(std::min(detector_.size[1], 512)) *
                          static_cast<uint64_t>(detector_.size[0]);
  sum_stride_ = static_cast<int>(std::max<uint64_t>(1, (pixels + kSumPixels - 1) / kSumPixels));
  sums_ = std::make_unique<symmetry::RowSums>((kept_views.size() + sum_stride_ - 1) / sum_stride_, detector_.size[1],
                                              detector_.size[0], memory_limit_ / 4);
  plan_ = std::make_shared<const conjugate::RowPlan>(
      conjugate::plan_rows(kept_views, detector_, memory_limit_ - sums_->memory_bytes()));
  kept_.resize(views_.size());
  // One block for every kept view's rows, zeroed (so touched) here: fresh
  // pages faulted in during the push cost the GPU machine's sandbox 0.5 ms
  // a view of (b), more than reading the rows.
  slot_size_ = static_cast<size_t>(plan_->rows) * static_cast<size_t>(detector_.size[0]);
  block_ = std::shared_ptr<uint16_t>(new uint16_t[kept_views.size() * slot_size_](), std::default_delete<uint16_t[]>());
  slot_taken_.assign(kept_views.size(), 0);
}

GeometryEstimator::~GeometryEstimator() = default;

uint64_t GeometryEstimator::memory_bytes() const {
  const uint64_t kept = (views_.size() + static_cast<size_t>(stride_) - 1) / static_cast<size_t>(stride_);
  return kept * static_cast<uint64_t>(plan_->rows) * static_cast<uint64_t>(detector_.size[0]) * sizeof(uint16_t) +
         sums_->memory_bytes();
}

void GeometryEstimator::add_view(int index, const float* pixels, size_t pitch_bytes, ThreadPool* pool) {
  if (index % stride_ != 0) return;  // not in the kept subset
  // A view's first push writes its slot of the block; one pushed again
  // gets rows of its own, so that an estimate reading the first never sees
  // them change.
  const size_t slot_index = static_cast<size_t>(index / stride_);
  std::shared_ptr<uint16_t> slot;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!slot_taken_.at(slot_index)) {
      slot_taken_[slot_index] = 1;
      slot = std::shared_ptr<uint16_t>(block_, block_.get() + slot_index * slot_size_);
    }
  }
  auto kv = conjugate::keep_rows(*plan_, detector_.size[0], pixels, pitch_bytes, std::move(slot), pool);
  if (slot_index % static_cast<size_t>(sum_stride_) == 0)
    sums_->add(slot_index / static_cast<size_t>(sum_stride_), pixels, pitch_bytes, pool);
  std::lock_guard<std::mutex> lock(mutex_);
  kept_.at(static_cast<size_t>(index)) = std::move(kv);
  ++revision_;
}

void GeometryEstimator::set_view(int index, const fdk_view& view) {
  std::lock_guard<std::mutex> lock(mutex_);
  views_.at(static_cast<size_t>(index)) = view;
  ++revision_;
}

GeometryEstimator::Snapshot GeometryEstimator::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return Snapshot{kept_, views_, revision_};
}

GeometryEstimate GeometryEstimator::estimate() const {
  Snapshot snap = snapshot();
  {
    std::lock_guard<std::mutex> lock(result_mutex_);
    if (pending_.valid() && pending_revision_ == snap.revision) {
      result_ = pending_.get();  // rethrows what it threw
      result_revision_ = snap.revision;
      return *result_;
    }
    if (result_ && result_revision_ == snap.revision) return *result_;
  }
  GeometryEstimate e = compute(snap);
  std::lock_guard<std::mutex> lock(result_mutex_);
  result_ = e;
  result_revision_ = snap.revision;
  return e;
}

void GeometryEstimator::start_estimate() {
  try {
    Snapshot snap = snapshot();
    std::lock_guard<std::mutex> lock(result_mutex_);
    if ((result_ && result_revision_ == snap.revision) || (pending_.valid() && pending_revision_ == snap.revision))
      return;
    const uint64_t revision = snap.revision;
    pending_ = std::async(std::launch::async, [this, s = std::move(snap)] { return compute(s); });
    pending_revision_ = revision;
  } catch (const std::exception&) {
    // No thread or memory to be had now: estimate() computes it when asked.
  }
}

GeometryEstimate GeometryEstimator::compute(const Snapshot& snap) const {
  const std::vector<std::shared_ptr<const conjugate::KeptView>>& kept = snap.kept;
  const std::vector<fdk_view>& views = snap.views;
  const conjugate::RowPlan& plan = *plan_;
  GeometryEstimate e;
  e.rows_used = plan.rows;
  std::vector<char> present(kept.size());
  for (size_t k = 0; k < kept.size(); ++k) present[k] = kept[k] != nullptr;
  const std::vector<conjugate::ViewPose> poses = conjugate::poses_of(views);
  // One pool for the whole estimate: its evaluations come back to back.
  ThreadPool pool(static_cast<int>(std::min(16u, std::max(1u, std::thread::hardware_concurrency()))));
  const Problem problem{&plan, &detector_, &poses, &kept, &pool};

  std::vector<Pair> pairs = conjugate::find_pairs(poses, present, detector_, 0.0, 2.0);
  if (pairs.size() < kMinPairs) {
    e.flags = FDK_ESTIMATE_FEW_PAIRS;
    e.view_pairs = static_cast<int>(pairs.size());
    e.basis = "not estimated: " + std::to_string(pairs.size()) +
              " pairs of views see the same orbit-plane rays (at least " + std::to_string(kMinPairs) +
              " needed): too few views, or none about 180 degrees apart";
    return e;
  }
  const CoarseOffset coarse = coarse_offset(problem, pairs);
  const double start = coarse.offset;
  std::vector<Pair> near = conjugate::find_pairs(poses, present, detector_, start, 3.0);
  if (near.size() >= kMinPairs) pairs.swap(near);
  // Beyond a few thousand pairs the sigmas shrink and the cost grows with
  // the views: thinned evenly, so (b)'s 1200 views cost what 360 do.
  if (pairs.size() > kMaxPairs) pairs = thinned(pairs, kMaxPairs);

  const bool with_tilt = plan.bands.size() > 1;
  const std::vector<int> lines = all_lines(plan);
  // The unweighted start and the weights' scale need the cost's shape only.
  const std::vector<Pair> few = thinned(pairs, kStartPairs);
  const Solution plain = refine(problem, few, 0, few.size(), Candidate{start, 0.0}, with_tilt, 12, 0.0, lines);
  const double scale = residual_scale(problem, few, plain.c, lines);
  const Solution s = refine(problem, pairs, 0, pairs.size(), plain.c, with_tilt, 12, scale, lines);
  const std::array<double, 2> curv = curvature_sigmas(s.fit, with_tilt);
  const std::array<double, 2> spread = block_sigmas(problem, pairs, s.c, with_tilt, scale, lines);
  const TiltCheck check = with_tilt ? check_tilt(problem, pairs, s, scale) : TiltCheck{};

  const double su = detector_.spacing[0];
  const auto degrees = [](double t) { return t * 180 / kPi; };
  // A pinned orbit line stands on its own sigma: the off-plane lines'
  // curvature and spread describe a different, possibly biased, fit.
  const double all_sigma = degrees(std::max({curv[1], spread[1], check.all_sigma}));
  e.tilt_deg = with_tilt ? degrees(check.orbit ? check.tilt : s.c.tilt) : 0.0;
  e.tilt_sigma_deg = check.orbit ? degrees(check.sigma) : all_sigma;
  // Where the conjugate rays leave the tilt loose (the off-plane lines
  // mistake structure along y for a tilt: the heads), a full scan's views'
  // sum pins it by its mirror symmetry, which is exact; where they pin it,
  // the sum checks them, its own sigma not covering the bias of sampling a
  // sharp-edged sum (the drilled cylinder at -2 px, -0.3 deg: 0.039 deg
  // off, sigma below 0.01; the conjugate rays: 0.001 deg, sigma 0.029).
  const double axis_guess = (-views[0].projection_offset_x - s.c.offset - detector_.origin[0]) / detector_.spacing[0];
  // Every row's sum where the views kept cover the circle, else the bands'.
  symmetry::RowSums::Halves halves;
  std::vector<fdk_view> kept_now;
  const size_t sum_step = static_cast<size_t>(stride_) * static_cast<size_t>(sum_stride_);
  for (size_t k = 0; k < views.size(); k += sum_step) kept_now.push_back(views[k]);
  symmetry::MirrorTilt mirror = sums_->halves(kept_now, halves, &pool)
                                    ? symmetry::rows_mirror_tilt(halves, views[0], detector_, axis_guess, &pool)
                                    : symmetry::MirrorTilt{};
  // The bands' fit where every row's is loose or missing, if at least twice
  // as precise: a small head at magnification 1.1 is fitted 0.455 deg for
  // 0.5 (sigma 0.033) on the bands, 0.379 (sigma 0.080) on every row; one
  // at 1.3, 0.216 for 0.3 (sigma 0.019) on the bands, 0.272 (0.025) on
  // every row.
  if (with_tilt && !(mirror.found && mirror.sigma_deg <= kTiltReportSigma)) {
    const symmetry::MirrorTilt bands = symmetry::bands_mirror_tilt(plan, kept, views, detector_, axis_guess, &pool);
    if (bands.found && (!mirror.found || bands.sigma_deg < 0.5 * mirror.sigma_deg)) mirror = bands;
  }
  // The orbit line read between rows has a bias its sigma does not cover
  // where the object changes sharply along y at the orbit plane (the
  // drilled cylinder at 0.4: 0.027 deg for 0.3, sigma 0.004; the mirror
  // 0.268, sigma 0.003): a mirror fit precise enough to be reported that
  // stands further off than both fits' bias and twice their sigmas keeps
  // it from being taken alone. A loose mirror fit is no check on it (the
  // 128-column scan of test_convert_estimate: the orbit line within 0.02
  // deg of 1 deg, the mirror 0.144 off, sigma 0.049), but is on an
  // all-lines fit where the orbit line pinned nothing (after a refuted
  // one, a biased sum replaced a right fit), at four sigmas; that fit is
  // then as loose as they disagree (docs/ACCURACY.md, session 42).
  const auto apart = [&](double sigmas) {
    return mirror.found && std::fabs(e.tilt_deg - mirror.tilt_deg) >
                               std::max(kMirrorBias, sigmas * std::hypot(e.tilt_sigma_deg, mirror.sigma_deg));
  };
  const bool precise = mirror.sigma_deg <= kTiltReportSigma;
  // A refuted orbit line gives way to the all-lines fit, which the sum
  // checks as well: both conjugate-ray fits can share a bias (a small
  // drilled cylinder at magnification 1.1: 0.228 deg for 0.3, both; the
  // sum 0.311, sigma 0.003).
  const bool refuted = check.orbit && precise && apart(2);
  if (refuted) e.tilt_deg = degrees(s.c.tilt), e.tilt_sigma_deg = all_sigma;
  if ((!check.orbit || refuted) && ((precise && apart(2)) || apart(4)))
    e.tilt_sigma_deg = std::max(e.tilt_sigma_deg, std::fabs(e.tilt_deg - mirror.tilt_deg));
  const bool by_mirror = mirror.found && e.tilt_sigma_deg > kTiltReportSigma && mirror.sigma_deg < e.tilt_sigma_deg;
  if (by_mirror) {
    e.tilt_deg = mirror.tilt_deg;
    e.tilt_sigma_deg = mirror.sigma_deg;
  }
  e.view_pairs = static_cast<int>(pairs.size());
  std::vector<char> used(kept.size(), 0);
  for (const Pair& p : pairs) used[p.i] = used[p.j] = 1;
  e.views_used = static_cast<int>(std::count(used.begin(), used.end(), 1));
  const int principal = static_cast<int>(
      std::lround((-views[0].projection_offset_y - detector_.origin[1]) / detector_.spacing[1]));
  const double share = angular_share(orbit_rows(plan, detector_.size[0], kept, principal));
  const bool low_structure = share < kStructureScale;
  // A tilt is reported, and so applied, only where the scan pins it
  // (kTiltReportSigma): a tilt it leaves loose is no correction at all,
  // and a loose tilt must not take down the confidence of an offset that is
  // pinned (fdk-convert applies an estimate only above confidence 0.5).
  // tilt_sigma_deg still says how loose it was. Not from views that hardly
  // change with angle: their sum's sharp edges are all the mirror fit has,
  // and sampled they pull it (a centred uniform cylinder: 0.262 deg for
  // 0.3, sigma 0.006; a ball on the axis: 0 for 0.3, sigma 0.000).
  const bool tilt_pinned = with_tilt && !low_structure && e.tilt_sigma_deg <= kTiltReportSigma;
  if (!tilt_pinned) e.tilt_deg = 0.0;
  // The offset reported: fitted again at the tilt reported (orbit_offset).
  const OffsetFit o = orbit_offset(problem, pairs, Candidate{s.c.offset, e.tilt_deg * kPi / 180});
  e.offset_u_mm = o.c.offset;
  e.offset_u_pixels = o.c.offset / su;
  // The same without the views' fixed pattern: how far the pattern moves
  // the offset is as much a sigma as the blocks' spread. Only where the
  // views' mean is mirror symmetric about the axis, so that taking it out
  // leaves the truth's mismatch at zero: a full turn, the axis near the
  // detector's middle. Elsewhere the mean's own asymmetry moved the suite's
  // noiseless offsets: a short scan's by 0.14 column, an offset detector's
  // by 1.8.
  const double arc = covered_arc(poses, present);
  const double step = arc / std::max<size_t>(1, std::count(present.begin(), present.end(), 1));
  const double axis_column = (-views[0].projection_offset_x - o.c.offset - detector_.origin[0]) / su;
  const bool mean_symmetric = full_turn(arc, step) &&
                              std::fabs(axis_column - 0.5 * (detector_.size[0] - 1)) <= 0.05 * detector_.size[0];
  double pattern = 0;
  if (mean_symmetric) {
    const conjugate::PatternFree clean = conjugate::without_fixed_pattern(plan, kept, detector_);
    const Problem clean_problem{&clean.plan, &detector_, &poses, &clean.kept, &pool};
    pattern = std::fabs(orbit_offset(clean_problem, pairs, o.c, false).c.offset - o.c.offset);
  }
  // A rival minimum half as far as it lies: the truth may be either.
  e.offset_sigma_pixels = std::max({o.sigma, pattern, 0.5 * coarse.rival}) / su;
  e.flags = FDK_ESTIMATE_OFFSET | (tilt_pinned ? FDK_ESTIMATE_TILT : 0);

  const double structure = share / (share + kStructureScale);
  if (low_structure) e.flags |= FDK_ESTIMATE_LOW_STRUCTURE;
  const double tilt_term = tilt_pinned ? std::pow(e.tilt_sigma_deg / kTiltSigmaScale, 2) : 0.0;
  const double precision = 1.0 / (1.0 + std::pow(e.offset_sigma_pixels / 0.25, 2) + tilt_term);
  const double quantity = std::min(1.0, static_cast<double>(pairs.size()) / 50.0);
  e.confidence = std::clamp(structure * precision * quantity, 0.0, 1.0);

  const std::string tilt_words =
      !with_tilt    ? "tilt not estimated: one band of rows"
      : tilt_pinned && by_mirror ? "tilt from the mirror symmetry of " + std::to_string(mirror.views) + " views' sum" +
                                       (mirror.every_row ? " (every row)" : " (kept rows)")
      : tilt_pinned ? "tilts to +-" + tenths(plan.tilt_reach * 180 / kPi) + " deg"
      : low_structure ? std::string("tilt not estimated: the views hardly change with angle")
                    : "tilt not estimated: pinned to +-" + hundredths(e.tilt_sigma_deg) + " deg only";
  e.basis = clipped("conjugate rays of " + std::to_string(pairs.size()) + " view pairs (" +
                    std::to_string(e.views_used) + " views), " + std::to_string(plan.lines.size()) + " lines in " +
                    std::to_string(plan.bands.size()) + " bands of " + std::to_string(plan.rows) + " rows of " +
                    std::to_string(detector_.size[0]) + " columns" + (plan.reduced ? " (narrowed by the memory limit)" : "") +
                    "; " + tilt_words + "; " + scan_words(arc, step, views[0], detector_) + "; " +
                    std::to_string(std::lround(share * 1000)) + " permille of the variance changes with angle" +
                    (coarse.rival > 0 ? "; an offset " + tenths(coarse.rival / su) + " columns away fits as well" : "") +
                    (pattern > std::max(o.sigma, 0.5 * coarse.rival) ? "; the views' fixed pattern moves it " + hundredths(pattern / su) + " column" : "") +
                    (stride_ > 1 ? "; every " + std::to_string(stride_) + "th view kept" : ""));
  return e;
}

fdk_view GeometryEstimator::apply(const fdk_view& view, const GeometryEstimate& e) {
  fdk_view v = view;
  v.projection_offset_x += e.offset_u_mm;
  v.in_plane_angle_deg += e.tilt_deg;
  return v;
}

}  // namespace fdk
