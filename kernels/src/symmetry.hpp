// Views that a symmetry of a centred voxel grid maps onto each other, so that
// one detector lookup serves several voxel-view pairs: quads under the
// 90-degree rotations of a square grid, pairs under the mirror z -> -z.
#pragma once
#include <array>
#include <vector>

#include "fdk/core/backend.hpp"

namespace fdk::cuda {

// Quads {v0, v1, v2, v3} with view c at the angle of v0 plus c * 90 degrees
// and a projection matrix equal to v0's composed with that rotation of the
// grid (checked entry by entry), all four untilted (y-separable). Each view
// is in at most one quad. Empty
// when the grid is not square in (x, z) with an even size.
std::vector<std::array<int, 4>> find_symmetric_quads(const std::vector<ViewGeometry>& views,
                                                     const std::vector<IndexMatrix>& matrices,
                                                     const fdk_volume& volume);

// Pairs {a, b}: b at 180 degrees minus a's angle, whose matrix equals a's
// composed with the mirror (i, j, k) -> (i, j, nz-1-k) and the column flip
// u -> columns-1-u (a centred detector). A view at 90 or 270 degrees is its
// own partner (a == b). Both views untilted; each view in at most one pair.
// Pairs complete within the scan's half, where quads need three quarters of
// it. Empty when nz is odd.
std::vector<std::array<int, 2>> find_mirror_pairs(const std::vector<ViewGeometry>& views,
                                                  const std::vector<IndexMatrix>& matrices,
                                                  const fdk_volume& volume, int columns);

// The mirror that maps a pair's voxels onto each other (the kernels' Kind).
enum class MirrorKind : unsigned char {
  Depth = 0,         // (i, j, k) -> (i, j, nz-1-k): partners at 180 degrees minus the angle
  Diagonal = 1,      // (i, j, k) -> (k, j, i)
  AntiDiagonal = 2,  // (i, j, k) -> (n-1-k, j, n-1-i)
  Plane = 3,         // (i, j, k) -> (i, ny-1-j, k) within one view: rows flipped, no partner
};
constexpr int kMirrorKinds = 4;

struct MirrorPair {
  std::array<int, 2> views;
  MirrorKind kind;
};

// Pairs as find_mirror_pairs, under any of the three mirrors (the diagonal
// ones need nx == nz): each view, in index order, takes of its partners not
// yet taken the one with the lowest index, so that when views arrive in
// index order every pair completes as early as it can. On a full circular
// scan a pair lies within a quarter turn (diagonal mirrors) where depth
// pairs span half of one, and none completes in the first quarter.
std::vector<MirrorPair> find_earliest_mirror_pairs(const std::vector<ViewGeometry>& views,
                                                   const std::vector<IndexMatrix>& matrices,
                                                   const fdk_volume& volume, int columns);

// Whether a view sees plane ny-1-j at row rows-1-v where it sees plane j
// at row v, in the same column and depth: untilted, the detector centred
// on the volume's middle plane.
bool sees_planes_mirrored(const IndexMatrix& m, int ny, int rows);

// A resident volume's orbits: `earliest` (find_earliest_mirror_pairs), but
// for the pairs that complete within the scan's first quarter (both views'
// indices at most a quarter of the count): no pair completes before about
// an eighth of the scan, and the GPUs would idle until then. When every view
// of those pairs sees the planes mirrored and ny is a multiple of 32, each
// of their views becomes a pair of its own, kind Plane ({v, v}), which
// needs no partner. In the order they complete when views arrive by index.
std::vector<MirrorPair> plan_resident_pairs(std::vector<MirrorPair> earliest,
                                            const std::vector<IndexMatrix>& matrices, int ny, int rows);

}  // namespace fdk::cuda
