// The CPU backprojector's sweep of one view through a slab: shared by the
// CPU backend's slabs and the CPU's live preview, so that a preview of a
// grid adds exactly what a slab of that grid would.
#pragma once
#include <vector>

#include "fdk/core/geometry.hpp"

namespace fdk {

class ThreadPool;

// One view's detector rows [row0, row0 + rows) for the current slab, stored
// column by column (rows contiguous) because the backprojector walks along y,
// which moves along detector rows.
struct ViewWindow {
  int view = -1;
  int row0 = 0;
  int rows = 0;  // 0: the slab does not project onto this view's detector
  std::vector<float> columns;
};

struct Scratch {
  std::vector<float> rows;    // row-major decompression target
  std::vector<float> column;  // one column interpolated along u, weighted
};

// Where a sweep writes: the voxel grid's x extent, the detector's columns,
// and the field-of-view mask of the grid's (x, z) columns (1: computed).
struct SweepGrid {
  int nx = 0;
  int columns = 0;
  const unsigned char* fov = nullptr;
};

// Adds one view (its window `win`, its matrix `pm` over the grid, its
// angular weight a_v) to the voxels of z indices [k0, k1) of planes
// [y0, y0 + planes), accumulated y fastest: voxel (i, k) plane t at
// acc[(k * nx + i) * stride + t].
void sweep_view(const SweepGrid& grid, const ViewWindow& win, const IndexMatrix& pm, double a_v, int y0, int planes,
                int stride, int k0, int k1, float* acc, Scratch& scratch);

// The accumulator above (y fastest, columns `stride` apart) as the public
// layout (x fastest, then z, then y), `planes` planes, on `pool`.
void to_public_layout(const float* acc, int nx, int nz, int planes, int stride, float* out, ThreadPool& pool);

}  // namespace fdk
