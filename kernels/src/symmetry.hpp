// Views that the 90-degree rotations of a square, centred voxel grid map
// onto each other: one detector lookup then serves four voxels.
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

}  // namespace fdk::cuda
