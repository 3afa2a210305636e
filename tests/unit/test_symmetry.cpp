// The view symmetries the CUDA backend's fast kernels rely on, found from
// the projection matrices alone (no GPU needed): mirror pairs of a centred
// detector complete within their half of the scan; an off-centre detector
// or an odd grid has none; quads need a square grid.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "fdk/core/geometry.hpp"
#include "symmetry.hpp"

namespace {

struct Scan {
  fdk_volume volume{};
  fdk_detector detector{};
  std::vector<fdk::ViewGeometry> views;
  std::vector<fdk::IndexMatrix> matrices;
};

Scan circular(int n, int nz, int views, int columns, double detector_shift_px = 0, double first_deg = 0) {
  Scan s;
  for (int a = 0; a < 3; ++a) {
    const int size = a == 2 ? nz : n;
    s.volume.size[a] = size;
    s.volume.spacing[a] = 256.0 / n;
    s.volume.origin[a] = -0.5 * (size - 1) * s.volume.spacing[a];
  }
  s.detector.size[0] = columns;
  s.detector.size[1] = columns;
  for (int a = 0; a < 2; ++a) {
    s.detector.spacing[a] = 1.5 * 256.0 / columns;
    s.detector.origin[a] = -0.5 * (columns - 1) * s.detector.spacing[a];
  }
  s.detector.origin[0] += detector_shift_px * s.detector.spacing[0];
  fdk_scan scan{};
  scan.struct_size = sizeof(scan);
  scan.kind = FDK_SCAN_UNIFORM;
  scan.num_views = views;
  scan.first_angle_deg = first_deg;
  scan.arc_deg = 360;
  scan.uniform.sid = 1000;
  scan.uniform.sdd = 1500;
  s.views = fdk::scan_views(scan);
  for (const auto& v : s.views) s.matrices.push_back(fdk::index_matrix(v, s.volume, s.detector));
  return s;
}

TEST(Symmetry, MirrorPairsCoverACentredScanAndCompleteWithinTheirHalf) {
  const Scan s = circular(64, 64, 120, 96);
  const auto pairs = fdk::cuda::find_mirror_pairs(s.views, s.matrices, s.volume, s.detector.size[0]);
  std::vector<int> seen(s.views.size(), 0);
  for (const auto& p : pairs) {
    ++seen[static_cast<size_t>(p[0])];
    if (p[1] != p[0]) ++seen[static_cast<size_t>(p[1])];
    // Partners sit at 180 degrees minus each other's angle: both within the
    // same half turn, so a pair is complete by the end of that half.
    const double a = s.views[static_cast<size_t>(p[0])].angle, b = s.views[static_cast<size_t>(p[1])].angle;
    EXPECT_NEAR(std::remainder(a + b - M_PI, 2 * M_PI), 0.0, 1e-9);
    EXPECT_EQ(a < M_PI + 1e-9, b < M_PI + 1e-9) << p[0] << " " << p[1];
  }
  for (size_t v = 0; v < seen.size(); ++v) EXPECT_EQ(seen[v], 1) << "view " << v;
  // 90 and 270 degrees are their own partners.
  const long self = std::count_if(pairs.begin(), pairs.end(), [](const auto& p) { return p[0] == p[1]; });
  EXPECT_EQ(self, 2);
}

TEST(Symmetry, MirrorPairsNeedACentredDetectorAndAnEvenGrid) {
  const Scan shifted = circular(64, 64, 120, 96, 3.0);
  EXPECT_TRUE(fdk::cuda::find_mirror_pairs(shifted.views, shifted.matrices, shifted.volume, 96).empty());
  const Scan odd = circular(64, 63, 120, 96);
  EXPECT_TRUE(fdk::cuda::find_mirror_pairs(odd.views, odd.matrices, odd.volume, 96).empty());
  // A first angle whose mirror image misses the views' grid: no pairs, but
  // the 90-degree rotations still map views onto views.
  const Scan turned = circular(64, 64, 120, 96, 0, 1.0);
  EXPECT_TRUE(fdk::cuda::find_mirror_pairs(turned.views, turned.matrices, turned.volume, 96).empty());
  EXPECT_EQ(fdk::cuda::find_symmetric_quads(turned.views, turned.matrices, turned.volume).size(), 30u);
  // The detector offset breaks mirrors, not rotations.
  EXPECT_EQ(fdk::cuda::find_symmetric_quads(shifted.views, shifted.matrices, shifted.volume).size(), 30u);
}

// Where view m sees voxel (i, j, k): detector column and row.
std::array<double, 2> project(const fdk::IndexMatrix& m, double i, double j, double k) {
  const double* a = m.m.data();
  const double w = a[8] * i + a[9] * j + a[10] * k + a[11];
  return {(a[0] * i + a[1] * j + a[2] * k + a[3]) / w, (a[4] * i + a[5] * j + a[6] * k + a[7]) / w};
}

// The voxel the pair's mirror maps (i, j, k) to.
std::array<int, 3> partner(fdk::cuda::MirrorKind kind, int i, int j, int k, int n, int nz) {
  switch (kind) {
    case fdk::cuda::MirrorKind::Depth: return {i, j, nz - 1 - k};
    case fdk::cuda::MirrorKind::Diagonal: return {k, j, i};
    default: return {n - 1 - k, j, n - 1 - i};
  }
}

TEST(Symmetry, EarliestPairsSeeEachOthersMirrorAndCompleteWithinTheirQuarter) {
  const int n = 64, views = 120, columns = 96;
  const Scan s = circular(n, n, views, columns);
  const auto pairs = fdk::cuda::find_earliest_mirror_pairs(s.views, s.matrices, s.volume, columns);
  std::vector<int> seen(s.views.size(), 0);
  int kinds[3] = {0, 0, 0};
  for (const auto& p : pairs) {
    const int a = p.views[0], b = p.views[1];
    ++seen[static_cast<size_t>(a)];
    if (b != a) ++seen[static_cast<size_t>(b)];
    ++kinds[static_cast<int>(p.kind)];
    // View b sees the mirror image of a voxel where view a sees the voxel,
    // the detector flipped: checked on voxels all over the grid.
    for (int i = 0; i < n; i += 7)
      for (int j = 0; j < n; j += 13)
        for (int k = 0; k < n; k += 5) {
          const auto q = partner(p.kind, i, j, k, n, n);
          const auto ua = project(s.matrices[static_cast<size_t>(a)], i, j, k);
          const auto ub = project(s.matrices[static_cast<size_t>(b)], q[0], q[1], q[2]);
          ASSERT_NEAR(ua[0], columns - 1 - ub[0], 1e-6) << a << " " << b << " kind " << static_cast<int>(p.kind);
          ASSERT_NEAR(ua[1], ub[1], 1e-6) << a << " " << b;
        }
    // The later view no later than the end of the earlier one's quarter
    // turn (0, 90, 180 or 270 degrees included): a pair completes within it.
    const int first = std::min(a, b), later = std::max(a, b);
    EXPECT_LE(later, (4 * first / views + 1) * views / 4) << a << " " << b;
  }
  for (size_t v = 0; v < seen.size(); ++v) EXPECT_EQ(seen[v], 1) << "view " << v;
  // Only the diagonal mirrors: the depth mirror's pairs span half a turn.
  EXPECT_EQ(kinds[0], 0);
  EXPECT_GT(kinds[1], 0);
  EXPECT_GT(kinds[2], 0);
  // Views arriving in index order: by the end of the first quarter every
  // pair within it is complete (none of the depth mirror's is).
  const auto complete_by = [&](int arrived) {
    return std::count_if(pairs.begin(), pairs.end(), [&](const auto& p) { return std::max(p.views[0], p.views[1]) < arrived; });
  };
  EXPECT_GE(complete_by(views / 4 + 1), views / 8);
  const auto depth = fdk::cuda::find_mirror_pairs(s.views, s.matrices, s.volume, columns);
  EXPECT_EQ(std::count_if(depth.begin(), depth.end(), [&](const auto& p) { return std::max(p[0], p[1]) < views / 4; }), 0);
}

TEST(Symmetry, EarliestPairsOfAGridThatIsNotSquareAreTheDepthMirrors) {
  const Scan flat = circular(64, 32, 120, 96);
  const auto pairs = fdk::cuda::find_earliest_mirror_pairs(flat.views, flat.matrices, flat.volume, 96);
  const auto depth = fdk::cuda::find_mirror_pairs(flat.views, flat.matrices, flat.volume, 96);
  ASSERT_EQ(pairs.size(), depth.size());
  for (size_t p = 0; p < pairs.size(); ++p) {
    EXPECT_EQ(pairs[p].kind, fdk::cuda::MirrorKind::Depth);
    EXPECT_EQ(pairs[p].views, depth[p]);
  }
  const Scan shifted = circular(64, 64, 120, 96, 3.0);
  EXPECT_TRUE(fdk::cuda::find_earliest_mirror_pairs(shifted.views, shifted.matrices, shifted.volume, 96).empty());
}

// A resident volume's plan for a scan: its earliest mirror pairs, the first
// quarter's views as plane pairs where the geometry allows.
std::vector<fdk::cuda::MirrorPair> resident_plan(const Scan& s, int columns, int rows) {
  return fdk::cuda::plan_resident_pairs(
      fdk::cuda::find_earliest_mirror_pairs(s.views, s.matrices, s.volume, columns), s.matrices, s.volume.size[1],
      rows);
}

// A view sees plane ny-1-j at row rows-1-v where it sees plane j at row v:
// the first quarter's views need no partner, so a resident volume's GPUs
// start with the scan's first views (view 0's orbit is complete at view 0,
// where the earliest mirror pair completes only at an eighth of the scan).
TEST(Symmetry, TheFirstQuartersViewsArePlanePairsOfTheirOwn) {
  const int n = 64, views = 120, columns = 96;
  const Scan s = circular(n, n, views, columns);
  const auto plan = resident_plan(s, columns, columns);
  std::vector<int> seen(s.views.size(), 0);
  int previous = -1;
  for (const auto& p : plan) {
    const int a = p.views[0], b = p.views[1];
    ++seen[static_cast<size_t>(a)];
    if (b != a) ++seen[static_cast<size_t>(b)];
    const bool plane = p.kind == fdk::cuda::MirrorKind::Plane;
    EXPECT_EQ(plane, 4 * std::max(a, b) <= views) << a << " " << b;
    if (plane) {
      EXPECT_EQ(a, b);
      // Checked on voxels all over the grid, at their own view.
      for (int i = 0; i < n; i += 7)
        for (int j = 0; j < n; j += 3)
          for (int k = 0; k < n; k += 5) {
            const auto lower = project(s.matrices[static_cast<size_t>(a)], i, j, k);
            const auto upper = project(s.matrices[static_cast<size_t>(a)], i, n - 1 - j, k);
            ASSERT_NEAR(lower[0], upper[0], 1e-6) << a;
            ASSERT_NEAR(lower[1], columns - 1 - upper[1], 1e-6) << a;
          }
    }
    // In the order they complete.
    EXPECT_GE(std::max(a, b), previous);
    previous = std::max(a, b);
  }
  for (size_t v = 0; v < seen.size(); ++v) EXPECT_EQ(seen[v], 1) << "view " << v;
  ASSERT_FALSE(plan.empty());
  EXPECT_EQ(plan.front().views[0], 0);
  EXPECT_EQ(plan.front().views[1], 0);
  EXPECT_EQ(std::count_if(plan.begin(), plan.end(),
                          [](const auto& p) { return p.kind == fdk::cuda::MirrorKind::Plane; }),
            views / 4 + 1);
}

TEST(Symmetry, PlanePairsNeedADetectorCentredInHeightAndWholeBlocksOfPlanes) {
  const auto planes = [](const std::vector<fdk::cuda::MirrorPair>& plan) {
    return std::count_if(plan.begin(), plan.end(),
                         [](const auto& p) { return p.kind == fdk::cuda::MirrorKind::Plane; });
  };
  Scan raised = circular(64, 64, 120, 96);
  raised.detector.origin[1] += 2 * raised.detector.spacing[1];
  raised.matrices.clear();
  for (const auto& v : raised.views) raised.matrices.push_back(fdk::index_matrix(v, raised.volume, raised.detector));
  const auto plan = resident_plan(raised, 96, 96);
  EXPECT_EQ(planes(plan), 0);
  // The mirror pairs are left as they were.
  const auto earliest = fdk::cuda::find_earliest_mirror_pairs(raised.views, raised.matrices, raised.volume, 96);
  EXPECT_EQ(plan.size(), earliest.size());
  EXPECT_FALSE(fdk::cuda::sees_planes_mirrored(raised.matrices[0], 64, 96));
  // 48 planes: no whole 16-plane blocks in each half.
  Scan low = circular(64, 64, 120, 96);
  low.volume.size[1] = 48;
  low.volume.origin[1] = -0.5 * 47 * low.volume.spacing[1];
  low.matrices.clear();
  for (const auto& v : low.views) low.matrices.push_back(fdk::index_matrix(v, low.volume, low.detector));
  EXPECT_TRUE(fdk::cuda::sees_planes_mirrored(low.matrices[0], 48, 96));
  EXPECT_EQ(planes(resident_plan(low, 96, 96)), 0);
}

TEST(Symmetry, QuadsNeedASquareGrid) {
  const Scan flat = circular(64, 32, 120, 96);
  EXPECT_TRUE(fdk::cuda::find_symmetric_quads(flat.views, flat.matrices, flat.volume).empty());
  // Mirrors only need the grid centred in z.
  EXPECT_EQ(fdk::cuda::find_mirror_pairs(flat.views, flat.matrices, flat.volume, 96).size(), 61u);
}

}  // namespace
