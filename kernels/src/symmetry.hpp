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

}  // namespace fdk::cuda
