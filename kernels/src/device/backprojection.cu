// The backprojection and packing kernels: device code only, compiled into
// the fatbin (kernels/CMakeLists.txt); the host launches them by the
// names at the end (backprojection_launch.cpp).
#include <cuda_fp16.h>

#include "../kernel_params.hpp"
#include "../kernel_shapes.hpp"

namespace fdk::cuda {
namespace {


// The volume plane of output plane t0 (the first of a thread's run, which
// stays within one chunk) of a run of one stride: these kernels' runs are
// launched one by one (for_each_run). Measured: a second run's branch here
// cost (b)'s mirror pairs 1.6% more kernel time on one H200.
__device__ __forceinline__ int volume_plane(const SlabGeometry& g, int t0) {
  return g.y0 + (t0 / g.chunk) * g.stride + t0 % g.chunk;
}

// The volume plane of output plane p, in either of g's runs.
__device__ __forceinline__ int run_plane(const SlabGeometry& g, int p) {
  if (p < g.split) return volume_plane(g, p);
  const int d = p - g.split;
  return g.y0_b + (d / g.chunk) * g.stride_b + d % g.chunk;
}

// Where volume plane y lies in the slab (its output plane, the second run's
// moved by g.gap), or -1 where the run does not hold it (plane pairs: both
// of g's runs in one launch).
__device__ __forceinline__ int output_plane(const SlabGeometry& g, int y) {
  const auto in_run = [&](int d, int stride, int first, int end) {
    if (d < 0) return -1;
    const int r = d % stride, p = first + (d / stride) * g.chunk + r;
    return r < g.chunk && p < end ? p : -1;
  };
  const int a = in_run(y - g.y0, g.stride, 0, min(g.split, g.planes));
  if (a >= 0 || g.split >= g.planes) return a;
  const int b = in_run(y - g.y0_b, g.stride_b, g.split, g.planes);
  return b < 0 ? b : b + g.gap;
}

__device__ __forceinline__ bool inside(float u, float v, const SlabGeometry& g) {
  return u >= 0.0f && u <= g.columns - 1 && v >= 0.0f && v <= g.rows - 1;
}

__device__ __forceinline__ void generic_kernel(const GenericBatch& b, float* slab, const unsigned char* mask) {
  const int i = blockIdx.x * kBlockX + threadIdx.x;
  const int k = blockIdx.y * kBlockZ + threadIdx.y;
  const int t0 = blockIdx.z * kPlanesPerThread;
  const SlabGeometry& g = b.g;
  if (i >= g.nx || k >= g.nz || !mask[static_cast<size_t>(k) * g.nx + i]) return;
  float acc[kPlanesPerThread];
#pragma unroll
  for (int t = 0; t < kPlanesPerThread; ++t) acc[t] = 0.0f;
  const float x = static_cast<float>(i), z = static_cast<float>(k);
  for (int q = 0; q < b.count; ++q) {
    const float* m = b.view[q].m;
    const float ub = m[0] * x + m[2] * z + m[3];
    const float vb = m[4] * x + m[6] * z + m[7];
    const float wb = m[8] * x + m[10] * z + m[11];
#pragma unroll
    for (int t = 0; t < kPlanesPerThread; ++t) {
      const float y = static_cast<float>(volume_plane(g, t0) + t);
      const float w = wb + m[9] * y;
      if (!(w > 0.0f)) continue;
      const float inv = 1.0f / w;
      const float u = (ub + m[1] * y) * inv;
      const float v = (vb + m[5] * y) * inv;
      if (!inside(u, v, g)) continue;
      // The texel centre's half first, then the window's first row (an
      // exact subtraction: ColumnLookup says why).
      const float h = v + 0.5f;
      acc[t] += b.view[q].weight * inv * inv * tex2D<float>(b.tex[q], u + 0.5f, h - b.view[q].row_offset);
    }
  }
#pragma unroll
  for (int t = 0; t < kPlanesPerThread; ++t)
    if (t0 + t < g.planes) slab[(static_cast<size_t>(t0 + t) * g.nz + k) * g.nx + i] += acc[t];
}

// Thread (i, k) of the first quadrant owns the orbit p_e = R^e(p_0) of its
// voxel column under 90-degree rotations (e = 0..3). View c of a quad sits at
// beta + c * 90 degrees, so voxel p_d seen from view c projects where p_(d-c)
// projects in view 0: four base-view lookups (one per orbit voxel e) give, in
// their four channels, the sixteen (voxel, view) pairs: channel c of lookup e
// belongs to voxel p_(e+c).
// 2^e of the packing: max |x| / 2^e in [0.5, 1).
__device__ __forceinline__ int pack_exponent(unsigned max_bits) {
  int e = 0;
  frexpf(__uint_as_float(max_bits), &e);
  return e;
}

// Where an untilted view sees voxel column (x, z): the texture column, the
// column's weight (scale / depth^2), and its detector row plus one half,
// h, at each volume plane. False when the column is behind the source or
// off the detector's width.
// A voxel's texture position must not depend on which slab (streamed,
// whichever plan) or chunk (resident) holds it, so that the volume's bits
// do not depend on the slab plan, hence on the GPU count:
// - planes are taken in blocks of a kernel's planes per thread, from
//   multiples of it: plane y = a + j gives h = fma(dv, j, fma(dv, a, c0)),
//   rounded the same whichever run of a thread computes it (a run starting
//   off a block's start spans two blocks: Aligned false);
// - a streamed slab's texture holds a window of rows from row_offset on.
//   h >= row_offset, both multiples of h's last bit (row_offset is an
//   integer, h < 2^23), so h - row_offset is exact: the texture unit sees
//   the same position whichever window holds the row.
// Written with explicit roundings (__fmaf_rn, __fmul_rn) so that no
// contraction differs between the kernels' variants. Measured: h computed
// from the plane in one piece, fma(dv, y, c0), cost (b) 6.7% more kernel
// time than the step within a block.
struct ColumnLookup {
  float tu, c0, dv, wt, row_offset;
  __device__ __forceinline__ bool at(const ViewTerms& view, float x, float z, float scale, int columns) {
    const float* m = view.m;
    const float w = m[8] * x + m[10] * z + m[11];
    if (!(w > 0.0f)) return false;
    const float inv = 1.0f / w;
    const float u = (m[0] * x + m[2] * z + m[3]) * inv;
    if (!(u >= 0.0f && u <= columns - 1)) return false;
    c0 = __fmaf_rn(__fmaf_rn(m[4], x, __fmaf_rn(m[6], z, m[7])), inv, 0.5f);
    dv = __fmul_rn(m[5], inv);
    wt = view.weight * scale * inv * inv;
    tu = u + 0.5f;
    row_offset = view.row_offset;
    return true;
  }
  // h at the block starting at plane a, and at plane j of that block.
  __device__ __forceinline__ float block(float a) const { return __fmaf_rn(dv, a, c0); }
  __device__ __forceinline__ float row(float h_block, int j) const {
    return __fmaf_rn(dv, static_cast<float>(j), h_block);
  }
  // Whether h falls on the detector (0 <= row <= rows - 1).
  __device__ __forceinline__ static bool on_detector(float h, int rows) { return h >= 0.5f && h <= rows - 0.5f; }
};

// A thread's run of Planes planes from volume plane `first`, in blocks of
// Planes (ColumnLookup): the first block's start and the run's offset in
// it (0 when Aligned).
template <int Planes, bool Aligned>
struct PlaneRun {
  float block0;
  int skew;
  __device__ __forceinline__ explicit PlaneRun(int first)
      : block0(static_cast<float>(first - (Aligned ? 0 : first % Planes))), skew(Aligned ? 0 : first % Planes) {}
  // The blocks' h for one lookup: the first, and (not Aligned) the next.
  struct Blocks {
    float h0, h1;
  };
  __device__ __forceinline__ Blocks blocks(const ColumnLookup& c) const {
    return {c.block(block0), Aligned ? 0.0f : c.block(block0 + Planes)};
  }
  // h of the run's plane t.
  __device__ __forceinline__ float row(const ColumnLookup& c, const Blocks& b, int t) const {
    if (Aligned) return c.row(b.h0, t);
    const int j = skew + t;
    return j < Planes ? c.row(b.h0, j) : c.row(b.h1, j - Planes);
  }
};

template <bool Aligned>
__device__ __forceinline__ void quad_kernel(const QuadBatch& b, float* slab, const unsigned char* mask) {
  const SlabGeometry& g = b.g;
  const int n = g.nx, half = g.nx / 2;
  const int i = blockIdx.x * kBlockX + threadIdx.x;
  const int k = blockIdx.y * kBlockZ + threadIdx.y;
  const int t0 = blockIdx.z * kPlanesPerThread;
  if (i >= half || k >= half) return;
  // p_(e+1) = R(p_e) with R(i, k) = (k, n-1-i): the map under which view
  // c of the quad equals view 0 (find_symmetric_quads checked it).
  const int xs[4] = {i, k, n - 1 - i, n - 1 - k};
  const int zs[4] = {k, n - 1 - i, n - 1 - k, i};
  bool any = false;
  bool in[4];
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    in[e] = mask[static_cast<size_t>(zs[e]) * n + xs[e]] != 0;
    any |= in[e];
  }
  if (!any) return;
  float acc[4][kPlanesPerThread];
#pragma unroll
  for (int e = 0; e < 4; ++e)
#pragma unroll
    for (int t = 0; t < kPlanesPerThread; ++t) acc[e][t] = 0.0f;
  const PlaneRun<kPlanesPerThread, Aligned> run(volume_plane(g, t0));
  for (int q = 0; q < b.count; ++q) {
    const float unscale = ldexpf(1.0f, pack_exponent(b.quad_max[q]));
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      ColumnLookup c;
      if (!c.at(b.view[q], static_cast<float>(xs[e]), static_cast<float>(zs[e]), unscale, g.columns)) continue;
      const float wt = c.wt;
      const auto blocks = run.blocks(c);
#pragma unroll
      for (int t = 0; t < kPlanesPerThread; ++t) {
        const float h = run.row(c, blocks, t);
        if (!ColumnLookup::on_detector(h, g.rows)) continue;
        const float4 f = tex2D<float4>(b.tex[q], c.tu, h - c.row_offset);
        acc[e][t] += wt * f.x;
        acc[(e + 1) & 3][t] += wt * f.y;
        acc[(e + 2) & 3][t] += wt * f.z;
        acc[(e + 3) & 3][t] += wt * f.w;
      }
    }
  }
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    if (!in[e]) continue;
#pragma unroll
    for (int t = 0; t < kPlanesPerThread; ++t)
      if (t0 + t < g.planes) slab[(static_cast<size_t>(t0 + t) * g.nz + zs[e]) * g.nx + xs[e]] += acc[e][t];
  }
}

// The packing scales of a batch of pairs, once per block: a load per pair
// and thread would stall every pair's start. Every thread of the block
// calls it (it synchronises them).
__device__ __forceinline__ void load_unscales(const PairBatch& b, float* unscales) {
  const int lane = threadIdx.y * kBlockX + threadIdx.x;
  if (lane < b.count) unscales[lane] = ldexpf(1.0f, pack_exponent(b.pair_max[lane]));
  __syncthreads();
}

// Thread (i, k) owns voxel columns p_0 = (i, k) and its mirror p_1 (Kind:
// launch_pairs). The pair's second view sees p_1 where the first sees p_0,
// with the detector flipped (the packing flipped it back): the lookup for
// p_e at the first view gives, in channel a, voxel p_e and in channel b
// voxel p_(1-e). A column on the mirror line (p_1 == p_0, the diagonal
// kinds only) takes one lookup, both channels its own.
template <int Planes, int Kind, bool Aligned>
__device__ __forceinline__ void pair_kernel(const PairBatch& b, float* slab, const unsigned char* mask) {
  __shared__ float unscales[kMaxBatchPairs];
  load_unscales(b, unscales);
  const SlabGeometry& g = b.g;
  const int i = blockIdx.x * kBlockX + threadIdx.x;
  const int k = blockIdx.y * kBlockZ + threadIdx.y;
  const int t0 = blockIdx.z * Planes;
  const int last = g.nx - 1;
  if (i >= g.nx) return;
  if (Kind == 0 && k >= g.nz / 2) return;
  if (Kind == 1 && k < i) return;
  if (Kind == 2 && i + k > last) return;
  const int xs[2] = {i, Kind == 0 ? i : Kind == 1 ? k : last - k};
  const int zs[2] = {k, Kind == 0 ? g.nz - 1 - k : Kind == 1 ? i : last - i};
  const bool self = Kind != 0 && xs[1] == i && zs[1] == k;
  const bool in[2] = {mask[static_cast<size_t>(zs[0]) * g.nx + xs[0]] != 0,
                      mask[static_cast<size_t>(zs[1]) * g.nx + xs[1]] != 0};
  if (!in[0] && !in[1]) return;
  float acc[2][Planes];
#pragma unroll
  for (int e = 0; e < 2; ++e)
#pragma unroll
    for (int t = 0; t < Planes; ++t) acc[e][t] = 0.0f;
  const PlaneRun<Planes, Aligned> run(volume_plane(g, t0));
  for (int q = 0; q < b.count; ++q) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      if (e == 1 && self) continue;
      ColumnLookup c;
      if (!c.at(b.view[q], static_cast<float>(xs[e]), static_cast<float>(zs[e]), unscales[q], g.columns)) continue;
      const float wt = c.wt;
      const auto blocks = run.blocks(c);
#pragma unroll
      for (int t = 0; t < Planes; ++t) {
        const float h = run.row(c, blocks, t);
        if (!ColumnLookup::on_detector(h, g.rows)) continue;
        const float2 f = tex2D<float2>(b.tex[q], c.tu, h - c.row_offset);
        acc[e][t] += wt * f.x;
        acc[1 - e][t] += wt * f.y;
      }
    }
  }
  if (self) {
#pragma unroll
    for (int t = 0; t < Planes; ++t)
      if (t0 + t < g.planes) slab[(static_cast<size_t>(t0 + t) * g.nz + k) * g.nx + i] += acc[0][t] + acc[1][t];
    return;
  }
#pragma unroll
  for (int e = 0; e < 2; ++e) {
    if (!in[e]) continue;
#pragma unroll
    for (int t = 0; t < Planes; ++t)
      if (t0 + t < g.planes) slab[(static_cast<size_t>(t0 + t) * g.nz + zs[e]) * g.nx + xs[e]] += acc[e][t];
  }
}

// Thread (i, k) of grid z takes the run's z-th block of 16 planes, finds
// the lower half's block a .. a+15 of its pair (itself or its mirror image
// ny-16-a .. ny-1-a) and updates both blocks, each where the run holds it;
// a pair of blocks both in the run is left to the lower block's threads.
// One view per "pair": a centred, untilted view sees plane ny-1-y at row
// rows-1-v where it sees plane y at row v (same column and depth), and the
// packing put row rows-1-r next to row r, so one lookup and one fetch
// serve both planes. A voxel's arithmetic depends only on its lower
// plane's block, never on the run: the same bits on any number of GPUs.
template <int Planes>
__device__ __forceinline__ void plane_pair_kernel(const PairBatch& b, float* slab, const unsigned char* mask) {
  __shared__ float unscales[kMaxBatchPairs];
  load_unscales(b, unscales);
  const SlabGeometry& g = b.g;
  // Grid z: the run's blocks of planes. A pair of blocks both in the run
  // is computed once, from its lower block.
  const int y = run_plane(g, blockIdx.z * Planes);
  const int a = min(y, g.ny - Planes - y);
  const int own = output_plane(g, a), mirror = output_plane(g, g.ny - Planes - a);
  if (y != a && own >= 0) return;
  const int i = blockIdx.x * kBlockX + threadIdx.x;
  const int k = blockIdx.y * kBlockZ + threadIdx.y;
  if (i >= g.nx || k >= g.nz || !mask[static_cast<size_t>(k) * g.nx + i]) return;
  float acc[2][Planes];
#pragma unroll
  for (int e = 0; e < 2; ++e)
#pragma unroll
    for (int t = 0; t < Planes; ++t) acc[e][t] = 0.0f;
  const PlaneRun<Planes, true> run(a);
  for (int q = 0; q < b.count; ++q) {
    ColumnLookup c;
    if (!c.at(b.view[q], static_cast<float>(i), static_cast<float>(k), unscales[q], g.columns)) continue;
    const float wt = c.wt;
    const auto blocks = run.blocks(c);
#pragma unroll
    for (int t = 0; t < Planes; ++t) {
      const float h = run.row(c, blocks, t);
      if (!ColumnLookup::on_detector(h, g.rows)) continue;
      const float2 f = tex2D<float2>(b.tex[q], c.tu, h - c.row_offset);
      acc[0][t] += wt * f.x;
      acc[1][t] += wt * f.y;
    }
  }
  const size_t plane = static_cast<size_t>(g.nz) * g.nx, col = static_cast<size_t>(k) * g.nx + i;
  if (own >= 0)
#pragma unroll
    for (int t = 0; t < Planes; ++t) slab[static_cast<size_t>(own + t) * plane + col] += acc[0][t];
  if (mirror >= 0)
#pragma unroll
    for (int t = 0; t < Planes; ++t) slab[static_cast<size_t>(mirror + Planes - 1 - t) * plane + col] += acc[1][t];
}


// Rows of the windows each block of pack_max_kernel scans: one atomic per
// block, not per warp and row (131072 atomics on one word per pair of
// 2048^2 views serialised the kernel: 60 us per pair).

// A thread's largest |scale * x| over its column of the N windows, in the
// block's rows.
template <int N>
__device__ __forceinline__ float column_max(const DevicePtr<const float>* src, const float* scale, size_t pitch, int columns,
                                            int rows) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r0 = blockIdx.y * kMaxRowsPerBlock, r1 = min(rows, r0 + kMaxRowsPerBlock);
  float m = 0.0f;
  if (c < columns)
    for (int r = r0; r < r1; ++r) {
      const size_t s = static_cast<size_t>(r) * pitch + c;
#pragma unroll
      for (int k = 0; k < N; ++k) m = fmaxf(m, fabsf(scale[k] * src[k][s]));
    }
  return m;
}

// *max_bits = max(*max_bits, the block's largest m), m >= 0 (non-negative
// floats order like their bit patterns). Every thread of the block calls it.
__device__ __forceinline__ void block_max_into(float m, unsigned* max_bits) {
  for (int offset = 16; offset > 0; offset /= 2) m = fmaxf(m, __shfl_down_sync(0xffffffffu, m, offset));
  __shared__ float warp_max[kMaxBlockThreads / 32];
  if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kMaxBlockThreads / 32; ++w) m = fmaxf(m, warp_max[w]);
    if (m > 0.0f) atomicMax(max_bits, __float_as_uint(m));
  }
}

// *max_bits = max(*max_bits, the largest |scale * x| of the N windows). A
// pair's flip maps the detector onto itself, so its maximum needs no flip.
template <int N>
__device__ __forceinline__ void pack_max_kernel(const PackArgs<N>& a, int columns, int rows, unsigned* max_bits) {
  block_max_into(column_max<N>(a.src, a.scale, a.src_pitch, columns, rows), max_bits);
}

// pack_max_kernel for a batch of pairs, one per grid z.
__device__ __forceinline__ void pack_pairs_max_kernel(const PackPairBatch& b) {
  const PackPair& p = b.pair[blockIdx.z];
  block_max_into(column_max<2>(p.src, p.scale, b.src_pitch, b.columns, p.rows), b.pair_max + blockIdx.z);
}


// x in half precision, rounded to nearest (one half per value for both
// storage precisions: docs/DECISIONS.md, "One half per texel value").
__device__ __forceinline__ unsigned short to_half(float x) { return __half_as_ushort(__float2half_rn(x)); }

// Grid rows are texture rows; past the window's `rows` they repeat its last.
__device__ __forceinline__ void pack_half_kernel(const PackArgs<4>& a, const unsigned* quad_max, ushort4* texels,
                                                 size_t pitch, int columns, int rows) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y;
  if (c >= columns) return;
  const float to_unit = ldexpf(1.0f, -pack_exponent(*quad_max));
  const size_t s = static_cast<size_t>(min(r, rows - 1)) * a.src_pitch + c;
  unsigned short h[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) h[k] = to_half(a.scale[k] * a.src[k][s] * to_unit);
  texels[static_cast<size_t>(r) * pitch + c] = make_ushort4(h[0], h[1], h[2], h[3]);
}

// Grid: (columns, texture rows, pair); rows past a pair's window repeat its last.
// FlipRows: b's texels hold its row rows-1-r, not its column columns-1-c
// (plane pairs; a compile-time choice, so that mirror pairs pay nothing).
template <bool FlipRows>
__device__ __forceinline__ void pack_pairs_kernel(const PackPairBatch& b) {
  const PackPair& p = b.pair[blockIdx.z];
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y;
  if (c >= b.columns) return;
  const float to_unit = ldexpf(1.0f, -pack_exponent(b.pair_max[blockIdx.z]));
  const int src_row = min(r, p.rows - 1);
  const size_t row = static_cast<size_t>(src_row) * b.src_pitch;
  const size_t flipped = FlipRows ? static_cast<size_t>(p.rows - 1 - src_row) * b.src_pitch + c
                                  : row + (b.columns - 1 - c);
  const float x[2] = {p.scale[0] * p.src[0][row + c] * to_unit, p.scale[1] * p.src[1][flipped] * to_unit};
  static_cast<ushort2*>(static_cast<void*>(p.texels))[static_cast<size_t>(r) * b.dst_pitch + c] =
      make_ushort2(to_half(x[0]), to_half(x[1]));
}


__device__ __forceinline__ void repeat_last_row_kernel(float* window, size_t pitch, int columns, int rows) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= columns) return;
  window[static_cast<size_t>(rows + blockIdx.y) * pitch + c] = window[static_cast<size_t>(rows - 1) * pitch + c];
}

}  // namespace
}  // namespace fdk::cuda

// The entry points, by the names the host looks them up with
// (kernel_names.hpp): one per variant of each templated kernel, C linkage
// so that the names do not depend on a compiler's mangling. The batches
// are __grid_constant__: read in place from the parameter space, never
// copied to each thread.
using namespace fdk::cuda;
#define FDK_SLAB_KERNEL(name, Batch, ...)                                                                 \
  extern "C" __global__ void __launch_bounds__(kBlockX* kBlockZ)                                         \
      name(const __grid_constant__ Batch b, float* slab, const unsigned char* mask) {                   \
    __VA_ARGS__(b, slab, mask);                                                                          \
  }
FDK_SLAB_KERNEL(fdk_bp_generic, GenericBatch, generic_kernel)
FDK_SLAB_KERNEL(fdk_bp_quads_aligned, QuadBatch, quad_kernel<true>)
FDK_SLAB_KERNEL(fdk_bp_quads, QuadBatch, quad_kernel<false>)
#define FDK_PAIR_KERNELS(kind)                                                                         \
  FDK_SLAB_KERNEL(fdk_bp_pairs##kind##_aligned, PairBatch, pair_kernel<kPairPlanesPerThread, kind, true>) \
  FDK_SLAB_KERNEL(fdk_bp_pairs##kind, PairBatch, pair_kernel<kPairPlanesPerThread, kind, false>)
FDK_PAIR_KERNELS(0)
FDK_PAIR_KERNELS(1)
FDK_PAIR_KERNELS(2)
FDK_SLAB_KERNEL(fdk_bp_plane_pairs, PairBatch, plane_pair_kernel<kPairPlanesPerThread>)

extern "C" __global__ void __launch_bounds__(kMaxBlockThreads)
    fdk_pack_max4(const __grid_constant__ PackArgs<4> a, int32_t columns, int32_t rows, uint32_t* max_bits) {
  pack_max_kernel<4>(a, columns, rows, max_bits);
}
extern "C" __global__ void __launch_bounds__(kMaxBlockThreads)
    fdk_pack_max1(const __grid_constant__ PackArgs<1> a, int32_t columns, int32_t rows, uint32_t* max_bits) {
  pack_max_kernel<1>(a, columns, rows, max_bits);
}
extern "C" __global__ void __launch_bounds__(kMaxBlockThreads)
    fdk_pack_pairs_max(const __grid_constant__ PackPairBatch b) {
  pack_pairs_max_kernel(b);
}
extern "C" __global__ void fdk_pack_half(const __grid_constant__ PackArgs<4> a, const uint32_t* quad_max,
                                         ushort4* texels, uint64_t pitch, int32_t columns, int32_t rows) {
  pack_half_kernel(a, quad_max, texels, pitch, columns, rows);
}
#define FDK_PACK_PAIRS_KERNEL(name, flip) \
  extern "C" __global__ void name(const __grid_constant__ PackPairBatch b) { pack_pairs_kernel<flip>(b); }
FDK_PACK_PAIRS_KERNEL(fdk_pack_pairs_flip, true)
FDK_PACK_PAIRS_KERNEL(fdk_pack_pairs, false)
extern "C" __global__ void fdk_repeat_last_row(float* window, uint64_t pitch, int32_t columns, int32_t rows) {
  repeat_last_row_kernel(window, pitch, columns, rows);
}
