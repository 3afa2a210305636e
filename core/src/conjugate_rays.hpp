// The conjugate-ray model behind GeometryEstimator (geometry_estimator.cpp
// says why this method): which detector rows are kept, which pairs of views
// see the same orbit-plane rays, and the mismatch of those rays for a
// candidate (offset, tilt) with its derivatives.
#pragma once
#include <fdk/fdk.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace fdk {

class ThreadPool;
namespace conjugate {

// A band of contiguous kept rows; the bands are stored one after the other.
struct Band {
  int first_row = 0;  // detector row of the band's first kept row
  int count = 0;      // rows in the band
  int offset = 0;     // index of its first row among all kept rows
  bool cubic = false; // the orbit plane's band: cubic along v where too narrow for the Gaussian
};

// A line of constant height in the ideal (untilted, centred) detector frame,
// compared between conjugate views; height 0 is the orbit plane, where the
// fan-beam relation is exact.
struct Line {
  int band = 0;
  double height = 0;  // mm, detector coordinates, from the principal point
};

// Rows each band keeps beyond what its lines and cubic taps reach, for the
// Gaussian's taps along v (gaussian_taps.hpp: kRowTaps).
constexpr int kRowMargin = 3;

struct RowPlan {
  std::vector<Band> bands;
  std::vector<Line> lines;
  int rows = 0;             // rows kept per view, all bands together
  int margin = 0;           // rows at each edge of a band kept for the Gaussian's taps only
  double tilt_reach = 0;    // radians: tilts the central band follows across the detector
  bool reduced = false;     // the memory limit cut the bands below their goal
};

// The rows to keep: a central band about the principal row (wide enough for
// the orbit plane's line to stay inside it across the detector under tilts
// up to about 2 degrees) and two bands half-way to the top and bottom edges
// (where a tilt shears the rows the most), narrowed as the memory limit
// demands (2 bytes a pixel).
RowPlan plan_rows(const std::vector<fdk_view>& views, const fdk_detector& detector, uint64_t memory_limit);

// One view's kept rows, quantised to 16 bits against its own range (the
// step is range / 65535: far below any noise a projection carries).
struct KeptView {
  const uint16_t* q = nullptr;  // rows x columns, owned by `storage`
  float base = 0, step = 0;
  std::shared_ptr<const uint16_t> storage;
};

// `slot`: plan.rows x columns codes to write into (a slot of memory
// allocated and touched beforehand, so that the push does not fault new
// pages in), or null to allocate. `pool`: threads to share the rows with
// (null: the caller's alone); the codes are the same either way.
std::shared_ptr<const KeptView> keep_rows(const RowPlan& plan, int columns, const float* pixels, size_t pitch_bytes,
                                          std::shared_ptr<uint16_t> slot = nullptr, ThreadPool* pool = nullptr);

// What the pair model needs of a view's nominal geometry.
struct ViewPose {
  double beta = 0;  // source azimuth, radians in [0, 2pi)
  double sdd = 0, pox = 0, poy = 0, in_plane = 0;
};

std::vector<ViewPose> poses_of(const std::vector<fdk_view>& views);

// Views i and j whose sources see the orbit-plane ray through ideal
// detector coordinate x of view i as the ray through -x of view j
// (beta_j = beta_i + pi - 2 atan(x / sdd)): no interpolation across views.
struct Pair {
  int i = 0, j = 0;
  double x = 0;  // mm, ideal frame of view i
};

// Pairs among the views present (`present[k]`), whose two columns lie at
// least `margin` columns inside the detector when the offset is `offset_mm`,
// ordered by view i's azimuth.
std::vector<Pair> find_pairs(const std::vector<ViewPose>& poses, const std::vector<char>& present,
                             const fdk_detector& detector, double offset_mm, double margin);

struct Candidate {
  double offset = 0;  // mm, added to projection_offset_x
  double tilt = 0;    // radians, added to the in-plane angle
};

// Sums over pairs and lines of the squared mismatch r and, for Gauss-Newton,
// J^T J and J^T r with J = dr/d(offset, tilt).
struct Fit {
  double cost = 0;
  double jtj[3] = {0, 0, 0};  // dd, dt, tt
  double jtr[2] = {0, 0};
  long samples = 0;
};

// How a sample is read along u: Keys' cubic (sharp: the tilt fits, whose
// signal is in the edges), or a Gaussian of one column (the offset's final
// fit: cubic reading of noisy rows biased a half-fan scan's offset by -0.2
// pixel at 1e4 photons, whatever the noise's seed; docs/ACCURACY.md).
enum class Reading { cubic, smooth };

struct Problem {
  const RowPlan* plan = nullptr;
  const fdk_detector* detector = nullptr;
  const std::vector<ViewPose>* poses = nullptr;
  const std::vector<std::shared_ptr<const KeptView>>* kept = nullptr;
  // The threads that evaluate the cost's chunks (null: this thread alone).
  // A pool made once per estimate: a thread started per evaluation cost
  // the GPU machine's sandbox more than the evaluation.
  ThreadPool* pool = nullptr;
  Reading reading = Reading::cubic;
  // Read along v with cubic weights, not the Gaussian of kRowSigma rows,
  // in bands of 4 rows or more (the orbit line's check: geometry_estimator.cpp).
  bool cubic_rows = false;
};

// `lines`: indices into plan->lines; pairs [begin, end) of `pairs`.
// `scale` > 0 weighs each sample by 1 / (1 + (r / scale)^2) (Cauchy): the
// analytic projections' pixel-centre samples of a steep edge alias, and so
// does a real detector's unblurred edge; those few samples would otherwise
// dominate the fit. `residuals`, when given, receives |r| of every sample.
Fit evaluate(const Problem& p, const std::vector<Pair>& pairs, size_t begin, size_t end, const std::vector<int>& lines,
             const Candidate& c, bool jacobian, double scale = 0, std::vector<float>* residuals = nullptr);

// The mean squared mismatch of pairs on plan line `line` at tilt 0 for the
// offsets k * step_mm, k = -half..half (the grid that finds the offset's
// basin). The same sums as evaluate(), arranged for a grid: a probe's row
// does not depend on the offset, so each probe is read along v once.
std::vector<double> offset_scan(const Problem& p, const std::vector<Pair>& pairs, int line, double step_mm, int half);

}  // namespace conjugate
}  // namespace fdk
