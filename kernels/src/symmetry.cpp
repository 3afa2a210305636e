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
  std::vector<int> order(static_cast<size_t>(count));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return views[a].angle < views[b].angle; });
  const double tol = 1e-6;
  auto find = [&](double angle) -> int {
    angle = std::fmod(angle, 2 * kPi);
    auto it = std::lower_bound(order.begin(), order.end(), angle - tol,
                               [&](int v, double a) { return views[v].angle < a; });
    if (it != order.end() && std::abs(views[*it].angle - angle) <= tol) return *it;
    // Near 0 and 2 pi the same angle may sit at either end.
    if (angle > 2 * kPi - tol && !order.empty() && views[order.front()].angle < tol) return order.front();
    if (angle < tol && !order.empty() && views[order.back()].angle > 2 * kPi - tol) return order.back();
    return -1;
  };
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

}  // namespace fdk::cuda
