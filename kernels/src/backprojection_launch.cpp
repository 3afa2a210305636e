#include "backprojection_launch.hpp"

#include <algorithm>

#include "driver/kernel_library.hpp"
#include "fdk/core/error.hpp"
#include "kernel_shapes.hpp"

namespace fdk::cuda {
namespace {

unsigned blocks(int n, int per) { return static_cast<unsigned>((n + per - 1) / per); }

constexpr Dim3 kSlabBlock{static_cast<unsigned>(kBlockX), static_cast<unsigned>(kBlockZ)};

template <int N>
PackArgs<N> pack_args(const float* const src[N], size_t src_pitch, const float scale[N]) {
  PackArgs<N> a{};
  a.src_pitch = src_pitch;
  for (int k = 0; k < N; ++k) {
    a.src[k] = src[k];
    a.scale[k] = scale[k];
  }
  return a;
}

// Whether every thread's run of `planes_per_thread` planes starts on a
// multiple of it (PlaneRun's Aligned): the slab starts on one, and so does
// every chunk (a single chunk starts where the slab does).
bool runs_aligned(const SlabGeometry& g, int planes_per_thread) {
  return g.y0 % planes_per_thread == 0 &&
         (g.chunk >= g.planes || (g.chunk % planes_per_thread == 0 && g.stride % planes_per_thread == 0));
}

// Calls launch(run, slab) for g's first run and, where it has one, its
// second (whose planes lie g.gap planes after the first's in `slab`), each
// a geometry of one run. A voxel's arithmetic does not depend on its run:
// the same bits as one launch over both.
template <class Launch>
void for_each_run(const SlabGeometry& g, float* slab, Launch launch) {
  if (g.split >= g.planes) return launch(g, slab);
  SlabGeometry first = g, second = g;
  first.planes = first.split = g.split;
  second.y0 = g.y0_b;
  second.stride = g.stride_b;
  second.planes = second.split = g.planes - g.split;
  launch(first, slab);
  launch(second, slab + static_cast<size_t>(g.split + g.gap) * g.nz * g.nx);
}


// The maxima kernels' grid over `rows` rows of `columns` values.
Dim3 max_grid(int columns, int rows, int depth = 1) {
  return Dim3{blocks(columns, kMaxBlockThreads), blocks(rows, kMaxRowsPerBlock), static_cast<unsigned>(depth)};
}

}  // namespace

void launch_generic(const GenericBatch& batch, float* slab, const unsigned char* mask, CUstream stream) {
  for_each_run(batch.g, slab, [&](const SlabGeometry& g, float* out) {
    GenericBatch run = batch;
    run.g = g;
    const Dim3 grid{blocks(g.nx, kBlockX), blocks(g.nz, kBlockZ), blocks(g.planes, kPlanesPerThread)};
    launch(Kernel::bp_generic, grid, kSlabBlock, 0, stream, "backprojection (generic)", run, out, mask);
  });
}

void launch_quads(const QuadBatch& batch, float* slab, const unsigned char* mask, CUstream stream) {
  for_each_run(batch.g, slab, [&](const SlabGeometry& g, float* out) {
    QuadBatch run = batch;
    run.g = g;
    const int half = g.nx / 2;
    const Dim3 grid{blocks(half, kBlockX), blocks(half, kBlockZ), blocks(g.planes, kPlanesPerThread)};
    const bool aligned = runs_aligned(g, kPlanesPerThread);
    launch(aligned ? Kernel::bp_quads_aligned : Kernel::bp_quads, grid, kSlabBlock, 0, stream, "backprojection (symmetric quads)", run, out, mask);
  });
}

// Kinds as launch_pairs; grid rows over the half of the grid the kind's
// threads cover, or (diagonals) over all of it, threads past the line
// returning at once.
void launch_pair_kind(int kind, const PairBatch& batch, float* slab, const unsigned char* mask, CUstream stream) {
  // Per kind: aligned, not.
  static const Kernel variants[3][2] = {{Kernel::bp_pairs0_aligned, Kernel::bp_pairs0},
                                        {Kernel::bp_pairs1_aligned, Kernel::bp_pairs1},
                                        {Kernel::bp_pairs2_aligned, Kernel::bp_pairs2}};
  for_each_run(batch.g, slab, [&](const SlabGeometry& g, float* out) {
    PairBatch run = batch;
    run.g = g;
    const int rows_z = kind == 0 ? g.nz / 2 : g.nz;
    const Dim3 grid{blocks(g.nx, kBlockX), blocks(rows_z, kBlockZ), blocks(g.planes, kPairPlanesPerThread)};
    const bool aligned = runs_aligned(g, kPairPlanesPerThread);
    const Kernel k = variants[kind][aligned ? 0 : 1];
    launch(k, grid, kSlabBlock, 0, stream, "backprojection (mirror pairs)", run, out, mask);
  });
}

void launch_plane_pairs(const PairBatch& batch, float* slab, const unsigned char* mask, CUstream stream) {
  if (batch.g.ny % (2 * kPairPlanesPerThread) != 0 || batch.g.chunk % kPairPlanesPerThread != 0)
    fail(FDK_ERROR_INTERNAL, "plane pairs need whole blocks of planes");
  const Dim3 grid{blocks(batch.g.nx, kBlockX), blocks(batch.g.nz, kBlockZ),
                  blocks(batch.g.planes, kPairPlanesPerThread)};
  launch(Kernel::bp_plane_pairs, grid, kSlabBlock, 0, stream, "backprojection (plane pairs)", batch, slab, mask);
}

void launch_pairs(const PairBatch& batch, float* slab, const unsigned char* mask, CUstream stream) {
  if ((batch.kind == 1 || batch.kind == 2) && batch.g.nx != batch.g.nz)
    fail(FDK_ERROR_INTERNAL, "diagonal mirror pairs on a grid that is not square");
  if (batch.kind == 3)
    launch_plane_pairs(batch, slab, mask, stream);
  else
    launch_pair_kind(batch.kind == 1 || batch.kind == 2 ? batch.kind : 0, batch, slab, mask, stream);
}

void launch_pack_pairs(const PackPairBatch& batch, CUstream stream) {
  if (batch.count <= 0) return;
  if (batch.pair[0].max_src[0]) {
    // The same maxima kernel over each view's maximum: one "window" of one
    // value per view, so the scale is exactly that of the whole views.
    PackPairBatch views = batch;
    views.columns = 1;
    views.src_pitch = 1;
    for (int p = 0; p < batch.count; ++p) {
      views.pair[p].src[0] = batch.pair[p].max_src[0];
      views.pair[p].src[1] = batch.pair[p].max_src[1];
      views.pair[p].rows = 1;
    }
    launch(Kernel::pack_pairs_max, Dim3{1, 1, static_cast<unsigned>(batch.count)},
           Dim3{static_cast<unsigned>(kMaxBlockThreads)}, 0, stream, "pack_pairs_max", views);
  } else {
    int rows = 1;
    for (int p = 0; p < batch.count; ++p) rows = std::max(rows, batch.pair[p].rows);
    launch(Kernel::pack_pairs_max, max_grid(batch.columns, rows, batch.count),
           Dim3{static_cast<unsigned>(kMaxBlockThreads)}, 0, stream, "pack_pairs_max", batch);
  }
  const Dim3 texture_grid{blocks(batch.columns, 128), static_cast<unsigned>(batch.texture_rows),
                          static_cast<unsigned>(batch.count)};
  launch(batch.flip_rows ? Kernel::pack_pairs_flip : Kernel::pack_pairs, texture_grid, Dim3{128}, 0, stream, "pack_pairs", batch);
}

void launch_pack_half(const float* const src[4], const float* const max_src[4], size_t src_pitch,
                      const float scale[4], uint32_t* quad_max, void* texels, size_t pitch, int columns,
                      int rows, int texture_rows, CUstream stream) {
  const PackArgs<4> a = pack_args<4>(src, src_pitch, scale);
  if (max_src) {
    launch(Kernel::pack_max4, Dim3{}, Dim3{static_cast<unsigned>(kMaxBlockThreads)}, 0, stream, "pack_max (quad)",
           pack_args<4>(max_src, 1, scale), int32_t{1}, int32_t{1}, quad_max);
  } else {
    launch(Kernel::pack_max4, max_grid(columns, rows), Dim3{static_cast<unsigned>(kMaxBlockThreads)}, 0, stream,
           "pack_max (quad)", a, int32_t{columns}, int32_t{rows}, quad_max);
  }
  launch(Kernel::pack_half, Dim3{blocks(columns, 128), static_cast<unsigned>(texture_rows)}, Dim3{128}, 0, stream,
         "pack_half", a, quad_max, texels, uint64_t{pitch}, int32_t{columns}, int32_t{rows});
}

void launch_window_max(const float* window, size_t pitch, int columns, int rows, unsigned* max_bits,
                       CUstream stream) {
  const float* const src[1] = {window};
  const float one[1] = {1.0f};
  launch(Kernel::pack_max1, max_grid(columns, rows), Dim3{static_cast<unsigned>(kMaxBlockThreads)}, 0, stream,
         "pack_max (window)", pack_args<1>(src, pitch, one), int32_t{columns}, int32_t{rows}, max_bits);
}


void launch_repeat_last_row(float* window, size_t pitch, int columns, int rows, int texture_rows,
                            CUstream stream) {
  if (texture_rows <= rows || rows <= 0) return;
  launch(Kernel::repeat_last_row, Dim3{blocks(columns, 128), static_cast<unsigned>(texture_rows - rows)}, Dim3{128}, 0,
         stream, "repeat_last_row", window, uint64_t{pitch}, int32_t{columns}, int32_t{rows});
}


}  // namespace fdk::cuda
