#include "symmetry.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace fdk::cuda {
namespace {

constexpr double kPi = 3.14159265358979323846;

// The matrix of view b applied to partner c of voxel (i, j, k), as a matrix
// on (i, j, k, 1): partner 1 is (k, j, n-1-i), 2 is (n-1-i, j, n-1-k), 3 is
// (n-1-k, j, i).
std::array<double, 12> composed(const IndexMatrix& b, int c, int n) {
  std::array<double, 12> out{};
  const double last = n - 1;
  for (int r = 0; r < 3; ++r) {
    const double* m = b.m.data() + 4 * r;
    double* o = out.data() + 4 * r;
    o[1] = m[1];
    switch (c) {
      case 1: o[0] = -m[2]; o[2] = m[0]; o[3] = m[2] * last + m[3]; break;
      case 2: o[0] = -m[0]; o[2] = -m[2]; o[3] = (m[0] + m[2]) * last + m[3]; break;
      default: o[0] = m[2]; o[2] = -m[0]; o[3] = m[0] * last + m[3]; break;
    }
  }
  return out;
}

// The matrix of view b applied to the partner of voxel (i, j, k) under the
// mirror `kind`, its column flipped about the detector's centre.
std::array<double, 12> mirrored(const IndexMatrix& b, MirrorKind kind, int n, int columns) {
  std::array<double, 12> out{};
  const double last = n - 1;
  for (int r = 0; r < 3; ++r) {
    const double* m = b.m.data() + 4 * r;
    double* o = out.data() + 4 * r;
    o[1] = m[1];
    switch (kind) {
      case MirrorKind::Depth: o[0] = m[0]; o[2] = -m[2]; o[3] = m[3] + m[2] * last; break;
      case MirrorKind::Diagonal: o[0] = m[2]; o[2] = m[0]; o[3] = m[3]; break;
      case MirrorKind::AntiDiagonal: o[0] = -m[2]; o[2] = -m[0]; o[3] = m[3] + (m[0] + m[2]) * last; break;
      case MirrorKind::Plane: break;  // no partner view (sees_planes_mirrored)
    }
  }
  for (int c = 0; c < 4; ++c) out[c] = (columns - 1) * out[8 + c] - out[c];
  return out;
}

// Views by angle: the view at a given angle (within 1e-6 rad), or -1.
class AngleIndex {
 public:
  explicit AngleIndex(const std::vector<ViewGeometry>& views) : views_(views), order_(views.size()) {
    std::iota(order_.begin(), order_.end(), 0);
    std::sort(order_.begin(), order_.end(), [&](int a, int b) { return views_[a].angle < views_[b].angle; });
  }
  int operator()(double angle) const {
    constexpr double tol = 1e-6;
    angle = std::fmod(angle, 2 * kPi);
    if (angle < 0) angle += 2 * kPi;
    auto it = std::lower_bound(order_.begin(), order_.end(), angle - tol,
                               [&](int v, double a) { return views_[v].angle < a; });
    if (it != order_.end() && std::abs(views_[*it].angle - angle) <= tol) return *it;
    // Near 0 and 2 pi the same angle may sit at either end.
    if (angle > 2 * kPi - tol && !order_.empty() && views_[order_.front()].angle < tol) return order_.front();
    if (angle < tol && !order_.empty() && views_[order_.back()].angle > 2 * kPi - tol) return order_.back();
    return -1;
  }

 private:
  const std::vector<ViewGeometry>& views_;
  std::vector<int> order_;
};

bool same(const IndexMatrix& a, const std::array<double, 12>& b, int n) {
  for (int r = 0; r < 3; ++r) {
    const double* x = a.m.data() + 4 * r;
    const double* y = b.data() + 4 * r;
    const double scale = (std::abs(x[0]) + std::abs(x[1]) + std::abs(x[2])) * n + std::abs(x[3]) + 1e-30;
    for (int c = 0; c < 4; ++c)
      if (std::abs(x[c] - y[c]) > 1e-7 * scale) return false;
  }
  return true;
}

}  // namespace

std::vector<std::array<int, 4>> find_symmetric_quads(const std::vector<ViewGeometry>& views,
                                                     const std::vector<IndexMatrix>& matrices,
                                                     const fdk_volume& volume) {
  std::vector<std::array<int, 4>> quads;
  const int n = volume.size[0];
  if (volume.size[2] != n || n % 2 != 0) return quads;
  const int count = static_cast<int>(views.size());
  const AngleIndex find(views);
  std::vector<unsigned char> used(static_cast<size_t>(count), 0);
  for (int v = 0; v < count; ++v) {
    // The quad kernel reuses a column's detector column along y: untilted only.
    if (used[v] || !matrices[v].y_separable()) continue;
    std::array<int, 4> quad{v, -1, -1, -1};
    bool ok = true;
    for (int c = 1; c < 4 && ok; ++c) {
      const int w = find(views[v].angle + c * kPi / 2);
      ok = w >= 0 && !used[w] && w != v && matrices[w].y_separable() && std::abs(views[w].sid - views[v].sid) <= 1e-9 * views[v].sid &&
           same(matrices[v], composed(matrices[w], c, n), n);
      quad[c] = w;
    }
    if (!ok) continue;
    for (int w : quad) used[w] = 1;
    quads.push_back(quad);
  }
  return quads;
}

namespace {

// Each view, in index order, takes the untaken partner with the lowest index
// under the depth mirror (nz even) and, with `diagonals` (nx == nz), the
// diagonal ones; every candidate is checked on the matrices.
std::vector<MirrorPair> earliest_pairs(const std::vector<ViewGeometry>& views, const std::vector<IndexMatrix>& matrices,
                                       const fdk_volume& volume, int columns, bool diagonals) {
  std::vector<MirrorPair> pairs;
  const int nx = volume.size[0], nz = volume.size[2];
  const bool depth = nz % 2 == 0;
  diagonals = diagonals && nx == nz;
  const int count = static_cast<int>(views.size());
  const AngleIndex find(views);
  std::vector<unsigned char> used(static_cast<size_t>(count), 0);
  for (int v = 0; v < count; ++v) {
    // The pair kernels reuse a column's detector column along y: untilted only.
    if (used[v] || !matrices[v].y_separable()) continue;
    int best = -1;
    MirrorKind best_kind = MirrorKind::Depth;
    const auto consider = [&](MirrorKind kind, double partner_angle) {
      const int w = find(partner_angle);
      if (w < 0 || used[w] || (best >= 0 && w >= best) || !matrices[w].y_separable() ||
          std::abs(views[w].sid - views[v].sid) > 1e-9 * views[v].sid ||
          !same(matrices[v], mirrored(matrices[w], kind, kind == MirrorKind::Depth ? nz : nx, columns),
                std::max(nz, nx)))
        return;
      best = w;
      best_kind = kind;
    };
    const double a = views[v].angle;
    if (depth) consider(MirrorKind::Depth, kPi - a);
    // Which diagonal maps which angles depends on the axes' orientation:
    // the matrices decide.
    if (diagonals)
      for (MirrorKind kind : {MirrorKind::Diagonal, MirrorKind::AntiDiagonal}) {
        consider(kind, kPi / 2 - a);
        consider(kind, 3 * kPi / 2 - a);
      }
    if (best < 0) continue;
    used[v] = used[best] = 1;
    pairs.push_back({{v, best}, best_kind});
  }
  return pairs;
}

}  // namespace

std::vector<std::array<int, 2>> find_mirror_pairs(const std::vector<ViewGeometry>& views,
                                                  const std::vector<IndexMatrix>& matrices,
                                                  const fdk_volume& volume, int columns) {
  std::vector<std::array<int, 2>> pairs;
  for (const MirrorPair& p : earliest_pairs(views, matrices, volume, columns, false)) pairs.push_back(p.views);
  return pairs;
}

std::vector<MirrorPair> find_earliest_mirror_pairs(const std::vector<ViewGeometry>& views,
                                                   const std::vector<IndexMatrix>& matrices,
                                                   const fdk_volume& volume, int columns) {
  return earliest_pairs(views, matrices, volume, columns, true);
}

bool sees_planes_mirrored(const IndexMatrix& m, int ny, int rows) {
  if (!m.y_separable()) return false;
  // The matrix applied to (i, ny-1-j, k), its row flipped about the
  // detector's centre.
  const double last = ny - 1;
  std::array<double, 12> o{};
  for (int r = 0; r < 3; ++r) {
    const double* x = m.m.data() + 4 * r;
    double* y = o.data() + 4 * r;
    y[0] = x[0];
    y[1] = -x[1];
    y[2] = x[2];
    y[3] = x[3] + x[1] * last;
  }
  for (int c = 0; c < 4; ++c) o[4 + c] = (rows - 1) * o[8 + c] - o[4 + c];
  return same(m, o, ny);
}

std::vector<MirrorPair> plan_resident_pairs(std::vector<MirrorPair> earliest,
                                            const std::vector<IndexMatrix>& matrices, int ny, int rows) {
  const int count = static_cast<int>(matrices.size());
  const auto early = [&](const MirrorPair& p) { return 4 * std::max(p.views[0], p.views[1]) <= count; };
  bool split = ny % 32 == 0;
  for (const MirrorPair& p : earliest)
    if (split && early(p))
      for (int v : p.views) split = split && sees_planes_mirrored(matrices[static_cast<size_t>(v)], ny, rows);
  std::vector<MirrorPair> planned;
  for (const MirrorPair& p : earliest) {
    if (!split || !early(p)) {
      planned.push_back(p);
      continue;
    }
    planned.push_back({{p.views[0], p.views[0]}, MirrorKind::Plane});
    if (p.views[1] != p.views[0]) planned.push_back({{p.views[1], p.views[1]}, MirrorKind::Plane});
  }
  std::stable_sort(planned.begin(), planned.end(), [](const MirrorPair& a, const MirrorPair& b) {
    return std::max(a.views[0], a.views[1]) < std::max(b.views[0], b.views[1]);
  });
  return planned;
}

}  // namespace fdk::cuda
