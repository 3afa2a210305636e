#include "conjugate_rays.hpp"

#include "fdk/core/thread_pool.hpp"
#include "gaussian_taps.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <cmath>
#include <cstring>
#include <thread>

namespace fdk {
namespace conjugate {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kTiltGoal = 2.0 * kPi / 180.0;  // tilts the central band should follow

double wrap_2pi(double a) {
  a = std::fmod(a, 2 * kPi);
  if (a < 0) a += 2 * kPi;
  return a >= 2 * kPi ? 0 : a;
}

double wrap_pi(double a) {
  a = wrap_2pi(a);
  return a > kPi ? a - 2 * kPi : a;
}

// The detector row and column of the principal point of the first view.
double principal_row(const fdk_view& v, const fdk_detector& d) {
  return (-v.projection_offset_y - d.origin[1]) / d.spacing[1];
}
double principal_column(const fdk_view& v, const fdk_detector& d) {
  return (-v.projection_offset_x - d.origin[0]) / d.spacing[0];
}

Band band_about(int centre, int half, int rows) {
  Band b;
  b.first_row = std::max(0, centre - half);
  b.count = std::min(rows - 1, centre + half) - b.first_row + 1;
  return b;
}

// Half-height of every band: the goal, or what `bands` bands of the memory
// limit allow.
int band_half(int goal, int bands, uint64_t rows_allowed) {
  const int64_t per_band = static_cast<int64_t>(rows_allowed) / std::max(1, bands);
  return static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(goal, (per_band - 1) / 2)));
}

// Keys' cubic convolution (a = -0.5): weights and their derivatives at t.
void cubic_weights(double t, double w[4], double dw[4]) {
  w[0] = ((-0.5 * t + 1.0) * t - 0.5) * t;
  w[1] = (1.5 * t - 2.5) * t * t + 1.0;
  w[2] = ((-1.5 * t + 2.0) * t + 0.5) * t;
  w[3] = (0.5 * t - 0.5) * t * t;
  dw[0] = (-1.5 * t + 2.0) * t - 0.5;
  dw[1] = (4.5 * t - 5.0) * t;
  dw[2] = (-4.5 * t + 4.0) * t + 0.5;
  dw[3] = (1.5 * t - 1.0) * t;
}

struct Sample {
  double value = 0, dcol = 0, drow = 0;  // per detector pixel
};

// Reading along v (gaussian_taps.hpp: kRowTaps, kRowSigma). At tilt 0 both
// samples of a pair lie at one height, so a reading that is exact on the
// rows and errs between them (linear, cubic) errs alike in both and the
// error cancels, at that tilt only: the cost had a cusp at exactly 0 that
// captured noisy fits (the short scan's blobs at 0.3 deg, 1e4 photons:
// 0.006 deg reported, sigma 0.049; docs/ACCURACY.md). The Gaussian's error
// and noise gain hardly depend on where a sample falls between rows, so no
// tilt is special.

// The rows a sample at `row_in_band` reads and their weights (and the
// weights' derivatives along v): the Gaussian in bands of kRowTaps rows or
// more; else cubic in the orbit plane's band of 4 rows or more, else
// linear. Outside the band, the nearest edge.
struct RowTaps {
  int n = 0;
  int rows[kRowTaps] = {};
  double w[kRowTaps] = {}, dw[kRowTaps] = {};
};

RowTaps row_taps(const Band& band, double row_in_band, bool cubic_rows) {
  RowTaps t;
  if (band.count == 1) {
    t.n = 1;
    t.w[0] = 1;
    return t;
  }
  const double r = std::min(std::max(row_in_band, 0.0), band.count - 1.0);
  const int r0 = std::min(static_cast<int>(r), band.count - 2);
  const double f = r - r0;
  if (band.count >= kRowTaps && !cubic_rows) {
    t.n = kRowTaps;
    row_taps_table().weights(f, t.w, t.dw);
    for (int k = 0; k < kRowTaps; ++k)
      t.rows[k] = std::min(std::max(r0 - (kRowTaps / 2 - 1) + k, 0), band.count - 1);
    return t;
  }
  if ((!band.cubic && !cubic_rows) || band.count < 4) {
    t.n = 2;
    t.rows[0] = r0;
    t.rows[1] = r0 + 1;
    t.w[0] = 1 - f;
    t.w[1] = f;
    t.dw[0] = -1;
    t.dw[1] = 1;
    return t;
  }
  t.n = 4;
  cubic_weights(f, t.w, t.dw);
  for (int k = 0; k < 4; ++k) t.rows[k] = std::min(std::max(r0 - 1 + k, 0), band.count - 1);
  return t;
}

// The first of the four columns a cubic sample at `col` reads (clamped to
// the detector, as the taps are) and its fraction.
int column_taps(double& col, int columns, int taps[4]) {
  col = std::min(std::max(col, 0.0), columns - 1.0);
  const int c0 = std::min(static_cast<int>(col), columns - 2);
  for (int k = 0; k < 4; ++k) taps[k] = std::min(std::max(c0 - 1 + k, 0), columns - 1);
  return c0;
}

// Gaussian reading along u (Reading::smooth): sigma one column, 8 taps
// from c0 - 3, normalised. The noise a sample carries is then the same
// wherever it falls between columns (its gain, the sum of w^2, varies
// 0.04 % with the fraction; Keys' cubic's 44 %: 1 on a column, 0.64
// half-way).
constexpr int kSmoothTaps = 8;
const GaussianTaps<kSmoothTaps>& column_gaussian() {
  static const GaussianTaps<kSmoothTaps> table(1.0);
  return table;
}

int smooth_taps(double& col, int columns, int taps[kSmoothTaps]) {
  col = std::min(std::max(col, 0.0), columns - 1.0);
  const int c0 = std::min(static_cast<int>(col), columns - 2);
  for (int k = 0; k < kSmoothTaps; ++k)
    taps[k] = std::min(std::max(c0 - (kSmoothTaps / 2 - 1) + k, 0), columns - 1);
  return c0;
}

// Cubic (or Gaussian: Reading) along u, the offset's direction, where
// sub-pixel shifts need it; the row taps along v. The derivatives only
// where asked: a cost's value alone (the offset's search, most of the
// estimate's evaluations) reads the same taps for half the sums.
Sample sample(const KeptView& kv, const Band& band, int columns, double col, double row_in_band, Reading reading,
              bool cubic_rows, bool derivatives) {
  int taps[kSmoothTaps];
  double w[kSmoothTaps], dw[kSmoothTaps];
  int n = 4;
  if (reading == Reading::smooth) {
    n = kSmoothTaps;
    const int c0 = smooth_taps(col, columns, taps);
    column_gaussian().weights(col - c0, w, dw);
  } else {
    const int c0 = column_taps(col, columns, taps);
    cubic_weights(col - c0, w, dw);
  }
  const RowTaps rt = row_taps(band, row_in_band, cubic_rows);
  double value = 0, dcol = 0, drow = 0;
  if (!derivatives) {
    for (int m = 0; m < rt.n; ++m) {
      const uint16_t* q = kv.q + static_cast<size_t>(band.offset + rt.rows[m]) * columns;
      double v = 0;
      for (int k = 0; k < n; ++k) v += w[k] * q[taps[k]];
      value += rt.w[m] * v;
    }
    Sample s;
    s.value = kv.base + kv.step * value;
    return s;
  }
  for (int m = 0; m < rt.n; ++m) {
    const uint16_t* q = kv.q + static_cast<size_t>(band.offset + rt.rows[m]) * columns;
    double v = 0, d = 0;
    for (int k = 0; k < n; ++k) {
      v += w[k] * q[taps[k]];
      d += dw[k] * q[taps[k]];
    }
    value += rt.w[m] * v;
    dcol += rt.w[m] * d;
    drow += rt.dw[m] * v;
  }
  Sample s;
  s.value = kv.base + kv.step * value;
  s.dcol = kv.step * dcol;
  s.drow = kv.step * drow;
  return s;
}

}  // namespace

RowPlan plan_rows(const std::vector<fdk_view>& views, const fdk_detector& detector, uint64_t memory_limit) {
  const int nu = detector.size[0], nv = detector.size[1];
  const double su = detector.spacing[0], sv = detector.spacing[1];
  const int centre = std::min(std::max(static_cast<int>(std::lround(principal_row(views[0], detector))), 0), nv - 1);
  const double c0 = principal_column(views[0], detector);
  const double reach_mm = std::max(std::fabs(c0), std::fabs(nu - 1 - c0)) * su;  // principal point to the far edge
  // Two rows for the lines beside the centre and the taps, kRowMargin more
  // for the Gaussian's reach.
  const int goal = static_cast<int>(std::ceil(std::tan(kTiltGoal) * reach_mm / sv)) + 2 + kRowMargin;
  const uint64_t row_bytes = static_cast<uint64_t>(views.size()) * static_cast<uint64_t>(nu) * sizeof(uint16_t);
  const uint64_t rows_allowed = std::max<uint64_t>(1, memory_limit / std::max<uint64_t>(1, row_bytes));

  RowPlan plan;
  const int room = std::min(centre, nv - 1 - centre);  // rows above and below the centre
  const int off = room / 2;
  int bands = 3;
  int half = band_half(goal, bands, rows_allowed);
  if (half < 1 || off < 2 * half + 1) {
    bands = 1;  // a short detector or a small limit: the orbit plane only
    half = band_half(goal, bands, rows_allowed);
  }
  plan.reduced = half < goal;
  const int centres[3] = {centre, centre - off, centre + off};
  for (int b = 0; b < bands; ++b) {
    Band band = band_about(centres[b], half, nv);
    band.offset = plan.rows;
    band.cubic = b == 0;
    plan.rows += band.count;
    plan.bands.push_back(band);
    // Heights from the principal point: the orbit plane is height 0 exactly.
    const double base = b == 0 ? 0.0 : (centres[b] - principal_row(views[0], detector)) * sv;
    for (int k = -1; k <= 1; ++k)
      if (half >= 1 || k == 0) plan.lines.push_back(Line{b, base + k * sv});
  }
  plan.tilt_reach = std::atan(std::max(0, half - 2 - kRowMargin) * sv / std::max(reach_mm, su));
  plan.margin = std::max(0, std::min(kRowMargin, half - 1));
  return plan;
}

std::shared_ptr<const KeptView> keep_rows(const RowPlan& plan, int columns, const float* pixels, size_t pitch_bytes,
                                          std::shared_ptr<uint16_t> slot, ThreadPool* pool) {
  // Read from the caller's view twice (range, then codes), never copied
  // whole: this runs in the push, on the caller's thread, with `pool`'s
  // threads when given. On one thread (b)'s 300 kept views of 141 rows of
  // 1024 took 0.12 s of a 0.14 s push on the H200 host (2026-11-29).
  const size_t nu = static_cast<size_t>(columns);
  std::vector<const float*> source(static_cast<size_t>(plan.rows));
  for (const Band& b : plan.bands)
    for (int r = 0; r < b.count; ++r)
      source[static_cast<size_t>(b.offset + r)] = reinterpret_cast<const float*>(
          reinterpret_cast<const char*>(pixels) + static_cast<size_t>(b.first_row + r) * pitch_bytes);
  // Chunks of rows, as many as the pool takes: the codes do not depend on
  // how the rows are shared out (the range is a minimum and a maximum).
  const int rows = plan.rows;
  const int chunks = pool && pool->size() > 1 ? std::min(rows, 4 * pool->size()) : 1;
  const auto run = [&](const std::function<void(int)>& fn) {
    if (chunks > 1) {
      pool->parallel_for(chunks, [&](int k, int) { fn(k); });
    } else {
      fn(0);
    }
  };
  // The range in eight lanes, whose compare chains overlap, and the codes
  // through int32, which vectorises: 4.7 ns a pixel with one chain, 1.1 ns
  // so (development machine, (a)'s and (b)'s bands).
  std::vector<float> lows(static_cast<size_t>(chunks), std::numeric_limits<float>::max());
  std::vector<float> highs(static_cast<size_t>(chunks), std::numeric_limits<float>::lowest());
  run([&](int k) {
    float lo = lows[static_cast<size_t>(k)], hi = highs[static_cast<size_t>(k)];
    for (int r = rows * k / chunks; r < rows * (k + 1) / chunks; ++r) {
      const float* row = source[static_cast<size_t>(r)];
      float lo8[8], hi8[8];
      for (int l = 0; l < 8; ++l) lo8[l] = lo, hi8[l] = hi;
      size_t i = 0;
      for (; i + 8 <= nu; i += 8)
        for (int l = 0; l < 8; ++l) {
          const float x = row[i + l];
          lo8[l] = x < lo8[l] ? x : lo8[l];
          hi8[l] = x > hi8[l] ? x : hi8[l];
        }
      for (; i < nu; ++i) {
        lo = row[i] < lo ? row[i] : lo;
        hi = row[i] > hi ? row[i] : hi;
      }
      for (int l = 0; l < 8; ++l) {
        lo = lo8[l] < lo ? lo8[l] : lo;
        hi = hi8[l] > hi ? hi8[l] : hi;
      }
    }
    lows[static_cast<size_t>(k)] = lo, highs[static_cast<size_t>(k)] = hi;
  });
  const float lo = *std::min_element(lows.begin(), lows.end());
  const float hi = *std::max_element(highs.begin(), highs.end());
  auto kv = std::make_shared<KeptView>();
  kv->base = lo;
  kv->step = (hi - lo) / 65535.0f;
  const float inverse = kv->step > 0 ? 1.0f / kv->step : 0.0f;
  if (!slot) slot = std::shared_ptr<uint16_t>(new uint16_t[static_cast<size_t>(plan.rows) * nu],
                                               std::default_delete<uint16_t[]>());
  kv->q = slot.get();
  kv->storage = slot;
  uint16_t* codes = slot.get();
  run([&](int k) {
    for (int r = rows * k / chunks; r < rows * (k + 1) / chunks; ++r) {
      const float* row = source[static_cast<size_t>(r)];
      uint16_t* q = codes + static_cast<size_t>(r) * nu;
      for (size_t i = 0; i < nu; ++i) {
        const float code = (row[i] - lo) * inverse + 0.5f;  // >= 0.5: row[i] >= lo
        q[i] = static_cast<uint16_t>(static_cast<int32_t>(code < 65535.0f ? code : 65535.0f));
      }
    }
  });
  return kv;
}

std::vector<ViewPose> poses_of(const std::vector<fdk_view>& views) {
  std::vector<ViewPose> poses(views.size());
  for (size_t k = 0; k < views.size(); ++k) {
    const fdk_view& v = views[k];
    poses[k].beta = wrap_2pi(v.gantry_angle_deg * kPi / 180.0);
    poses[k].sdd = v.sdd;
    poses[k].pox = v.projection_offset_x;
    poses[k].poy = v.projection_offset_y;
    poses[k].in_plane = v.in_plane_angle_deg * kPi / 180.0;
  }
  return poses;
}

namespace {

bool inside(double u, const ViewPose& p, const fdk_detector& d, double offset, double margin) {
  const double col = (u - p.pox - offset - d.origin[0]) / d.spacing[0];
  return col >= margin && col <= d.size[0] - 1 - margin;
}

// The widest fan angle any view's detector reaches, radians.
double widest_fan(const std::vector<ViewPose>& poses, const fdk_detector& d) {
  double g = 0;
  for (const ViewPose& p : poses) {
    const double a = d.origin[0] + p.pox, b = a + (d.size[0] - 1) * d.spacing[0];
    g = std::max(g, std::atan(std::max(std::fabs(a), std::fabs(b)) / p.sdd));
  }
  return g;
}

}  // namespace

std::vector<Pair> find_pairs(const std::vector<ViewPose>& poses, const std::vector<char>& present,
                             const fdk_detector& detector, double offset_mm, double margin) {
  std::vector<int> order;
  for (size_t k = 0; k < poses.size(); ++k)
    if (present[k]) order.push_back(static_cast<int>(k));
  std::sort(order.begin(), order.end(), [&](int a, int b) { return poses[a].beta < poses[b].beta; });
  std::vector<double> betas(order.size());
  for (size_t k = 0; k < order.size(); ++k) betas[k] = poses[order[k]].beta;

  const double window = 2 * widest_fan(poses, detector);
  std::vector<Pair> pairs;
  auto consider = [&](int i, int j) {
    if (j <= i) return;  // each unordered pair once
    const ViewPose& a = poses[i];
    const double delta = wrap_pi(poses[j].beta - a.beta - kPi);
    const double x = -a.sdd * std::tan(0.5 * delta);
    if (inside(x, a, detector, offset_mm, margin) && inside(-x, poses[j], detector, offset_mm, margin))
      pairs.push_back(Pair{i, j, x});
  };
  auto scan_range = [&](int i, double lo, double hi) {
    auto first = std::lower_bound(betas.begin(), betas.end(), lo);
    for (auto it = first; it != betas.end() && *it <= hi; ++it) consider(i, order[it - betas.begin()]);
  };
  for (int i : order) {
    const double lo = wrap_2pi(poses[i].beta + kPi - window), hi = wrap_2pi(poses[i].beta + kPi + window);
    if (lo <= hi) {
      scan_range(i, lo, hi);
    } else {
      scan_range(i, lo, 2 * kPi);
      scan_range(i, 0, hi);
    }
  }
  return pairs;
}

namespace {

// Where ideal point (x, y) of view `v` falls on its detector for the
// offset `offset`: the column, and the row within `band`. `ck`, `sk`: the
// cosine and sine of the view's in-plane angle plus the tilt. The one
// place the pair model maps a point to the detector (evaluate and
// offset_scan both).
struct DetectorPoint {
  double col, row_in_band;
};
DetectorPoint detector_point(const ViewPose& v, double ck, double sk, double x, double y, double offset,
                             const fdk_detector& d, const Band& band) {
  const double u = ck * x + sk * y - v.pox - offset;
  const double w = -sk * x + ck * y - v.poy;
  return {(u - d.origin[0]) / d.spacing[0], (w - d.origin[1]) / d.spacing[1] - band.first_row};
}

// Runs fn(k) for every chunk k < chunks, on the estimate's pool when there
// is one and more than one chunk.
template <class Fn>
void for_chunks(const Problem& p, size_t chunks, const Fn& fn) {
  if (!p.pool || chunks == 1) {
    for (size_t k = 0; k < chunks; ++k) fn(k);
  } else {
    p.pool->parallel_for(static_cast<int>(chunks), [&](int k, int) { fn(static_cast<size_t>(k)); });
  }
}

// The sums of evaluate() over pairs [begin, end); `cs`, `sn`: every view's
// cosine and sine of its in-plane angle plus the candidate's tilt, computed
// once per call rather than once per sample.
Fit evaluate_range(const Problem& p, const std::vector<Pair>& pairs, size_t begin, size_t end,
                   const std::vector<int>& lines, const Candidate& c, const std::vector<double>& cs,
                   const std::vector<double>& sn, bool jacobian, double scale, std::vector<float>* residuals) {
  const fdk_detector& d = *p.detector;
  const int nu = d.size[0];
  const std::vector<ViewPose>& poses = *p.poses;
  const double su = d.spacing[0], sv = d.spacing[1];
  Fit fit;
  // Column, row and their derivatives of ideal point (x, y) in view k.
  auto probe = [&](int k, const Band& band, double x, double y, double* dr_dd, double* dr_dt) {
    const double ck = cs[k], sk = sn[k];
    const DetectorPoint at = detector_point(poses[k], ck, sk, x, y, c.offset, d, band);
    const Sample s = sample(*(*p.kept)[k], band, nu, at.col, at.row_in_band, p.reading, p.cubic_rows, jacobian);
    *dr_dd = -s.dcol / su;
    *dr_dt = s.dcol / su * (-sk * x + ck * y) + s.drow / sv * (-ck * x - sk * y);
    return s.value;
  };
  for (size_t n = begin; n < end; ++n) {
    const Pair& pr = pairs[n];
    for (int l : lines) {
      const Line& line = p.plan->lines[l];
      const Band& band = p.plan->bands[line.band];
      double id, it, jd, jt;
      const double r = probe(pr.i, band, pr.x, line.height, &id, &it) - probe(pr.j, band, -pr.x, line.height, &jd, &jt);
      const double w = scale > 0 ? 1.0 / (1.0 + (r / scale) * (r / scale)) : 1.0;
      fit.cost += scale > 0 ? scale * scale * std::log1p((r / scale) * (r / scale)) : r * r;
      ++fit.samples;
      if (residuals) residuals->push_back(static_cast<float>(std::fabs(r)));
      if (!jacobian) continue;
      const double gd = id - jd, gt = it - jt;
      fit.jtj[0] += w * gd * gd;
      fit.jtj[1] += w * gd * gt;
      fit.jtj[2] += w * gt * gt;
      fit.jtr[0] += w * gd * r;
      fit.jtr[1] += w * gt * r;
    }
  }
  return fit;
}

void accumulate(Fit& total, const Fit& part) {
  total.cost += part.cost;
  for (int k = 0; k < 3; ++k) total.jtj[k] += part.jtj[k];
  for (int k = 0; k < 2; ++k) total.jtr[k] += part.jtr[k];
  total.samples += part.samples;
}

// Samples below which one thread does the work (a sum of fewer than 3200
// goes in chunks of under 200, about 50 us each at 0.27 us a sample). At
// 20000 a sum of (b)'s 3750 pairs x 9 lines ran on one thread: 9 ms an
// evaluation, most of the estimate.
constexpr size_t kSamplesPerThread = 1600;
// The pairs are cut into this many chunks whatever the machine, and the
// chunks' sums are added in order: the same estimate on every machine.
constexpr size_t kChunks = 16;

}  // namespace

Fit evaluate(const Problem& p, const std::vector<Pair>& pairs, size_t begin, size_t end, const std::vector<int>& lines,
             const Candidate& c, bool jacobian, double scale, std::vector<float>* residuals) {
  const std::vector<ViewPose>& poses = *p.poses;
  std::vector<double> cs(poses.size()), sn(poses.size());
  for (size_t k = 0; k < poses.size(); ++k) {
    cs[k] = std::cos(poses[k].in_plane + c.tilt);
    sn[k] = std::sin(poses[k].in_plane + c.tilt);
  }
  const size_t count = end > begin ? end - begin : 0;
  const size_t work = count * std::max<size_t>(1, lines.size());
  const size_t chunks = count >= kChunks && work >= 2 * kSamplesPerThread ? kChunks : 1;
  std::vector<Fit> parts(chunks);
  std::vector<std::vector<float>> kept_residuals(residuals ? chunks : 0);
  auto run_chunk = [&](size_t k) {
    parts[k] = evaluate_range(p, pairs, begin + count * k / chunks, begin + count * (k + 1) / chunks, lines, c, cs, sn,
                              jacobian, scale, residuals ? &kept_residuals[k] : nullptr);
  };
  for_chunks(p, chunks, run_chunk);
  Fit fit;
  for (size_t k = 0; k < chunks; ++k) {
    accumulate(fit, parts[k]);
    if (residuals) residuals->insert(residuals->end(), kept_residuals[k].begin(), kept_residuals[k].end());
  }
  return fit;
}

std::vector<double> offset_scan(const Problem& p, const std::vector<Pair>& pairs, int line_index, double step_mm,
                                int half) {
  const fdk_detector& d = *p.detector;
  const int nu = d.size[0];
  const Line& line = p.plan->lines[static_cast<size_t>(line_index)];
  const Band& band = p.plan->bands[static_cast<size_t>(line.band)];
  const int n = 2 * half + 1;
  const double shift = step_mm / d.spacing[0];  // columns per grid step
  const size_t chunks = pairs.size() >= kChunks ? kChunks : 1;
  std::vector<std::vector<double>> parts(chunks, std::vector<double>(static_cast<size_t>(n), 0.0));
  auto run_chunk = [&](size_t chunk) {
    std::vector<double>& cost = parts[chunk];
    std::vector<double> values[2], profile;
    for (auto& v : values) v.resize(static_cast<size_t>(n));
    for (size_t m = pairs.size() * chunk / chunks; m < pairs.size() * (chunk + 1) / chunks; ++m) {
      const Pair& pr = pairs[m];
      for (int side = 0; side < 2; ++side) {
        const int k = side ? pr.j : pr.i;
        const double x = side ? -pr.x : pr.x;
        const ViewPose& v = (*p.poses)[static_cast<size_t>(k)];
        const KeptView& kv = *(*p.kept)[static_cast<size_t>(k)];
        const DetectorPoint at =
            detector_point(v, std::cos(v.in_plane), std::sin(v.in_plane), x, line.height, 0.0, d, band);
        const double col0 = at.col;
        const RowTaps rt = row_taps(band, at.row_in_band, false);
        // The columns the grid's samples read, read along v once.
        const double reach = std::min(col0 + half * shift, 2.0 * nu) + 2;  // finite whatever col0
        const int lo = std::clamp(static_cast<int>(std::floor(std::max(col0 - half * shift, -2.0 * nu))) - 2, 0, nu - 1);
        const int hi = std::clamp(static_cast<int>(std::ceil(reach)), lo, nu - 1);
        profile.assign(static_cast<size_t>(hi - lo + 1), 0.0);
        for (int r = 0; r < rt.n; ++r) {
          const uint16_t* q = kv.q + static_cast<size_t>(band.offset + rt.rows[r]) * nu;
          for (int c = lo; c <= hi; ++c) profile[static_cast<size_t>(c - lo)] += rt.w[r] * q[c];
        }
        for (int g = 0; g < n; ++g) {
          double col = col0 - (g - half) * shift;
          int taps[4];
          const int c0 = column_taps(col, nu, taps);
          double w[4], dw[4];
          cubic_weights(col - c0, w, dw);
          double value = 0;
          for (int t = 0; t < 4; ++t) {
            const int c = std::min(std::max(taps[t], lo), hi);  // clamped columns are lo or hi already
            value += w[t] * profile[static_cast<size_t>(c - lo)];
          }
          values[side][static_cast<size_t>(g)] = kv.base + kv.step * value;
        }
      }
      for (int g = 0; g < n; ++g) {
        const double r = values[0][static_cast<size_t>(g)] - values[1][static_cast<size_t>(g)];
        cost[static_cast<size_t>(g)] += r * r;
      }
    }
  };
  for_chunks(p, chunks, run_chunk);
  std::vector<double> mean(static_cast<size_t>(n), 0.0);
  for (const auto& part : parts)
    for (int g = 0; g < n; ++g) mean[static_cast<size_t>(g)] += part[static_cast<size_t>(g)];
  for (double& m : mean) m /= static_cast<double>(std::max<size_t>(1, pairs.size()));
  return mean;
}

}  // namespace conjugate
}  // namespace fdk
