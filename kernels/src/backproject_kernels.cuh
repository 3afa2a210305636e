// The backprojection kernels and their launch parameters (passed by value,
// so nothing lives in module-global memory and contexts never share state).
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace fdk::cuda {

constexpr int kMaxBatchViews = 64;  // generic kernel: views per launch
constexpr int kMaxBatchQuads = 32;  // symmetric kernel: quads (4 views) per launch

struct ViewTerms {
  float m[12];      // voxel index -> (column*w, row*w, w)
  float weight;     // generic: a_v * sid^2; quads: sid^2 (a_v is in the texels)
  float row_offset; // first detector row held by the texture
};

struct SlabGeometry {
  int nx, nz, y0, planes;  // slab planes [y0, y0 + planes)
  int columns, rows;       // detector size (the filtered one)
};

struct GenericBatch {
  SlabGeometry g;
  int count;
  ViewTerms view[kMaxBatchViews];
  cudaTextureObject_t tex[kMaxBatchViews];
};

struct QuadBatch {
  SlabGeometry g;
  int count;
  ViewTerms view[kMaxBatchQuads];  // of the quad's first view
  cudaTextureObject_t tex[kMaxBatchQuads];     // half4: the high part
  cudaTextureObject_t tex_lo[kMaxBatchQuads];  // half4: the rest (when split)
  const unsigned* quad_max;  // per quad: bits of max |value| (the texels' scale)
  int split;                 // 1: value = hi + lo (float32 storage); 0: hi only
};

// Voxels per thread along y.
constexpr int kPlanesPerThread = 8;

// slab: planes * nz * nx floats (public layout), accumulated into.
// mask: nz * nx bytes, 1 = in the field of view.
void launch_generic(const GenericBatch& batch, float* slab, const unsigned char* mask, cudaStream_t stream);
// nx == nz, even; thread (i, k) in the first quadrant also updates the
// voxels the 90, 180 and 270 degree rotations map it to.
void launch_quads(const QuadBatch& batch, float* slab, const unsigned char* mask, cudaStream_t stream);

// Packs four filtered projections (rows x columns each, the same window),
// scaled by their angular weights, into four-channel half-precision texels:
// hi = half(x * 2^-e), and when `lo` is not null lo = half(x * 2^-e - hi),
// so hi + lo keeps about 22 bits; 2^e is set by the largest |x| of the quad
// (found first into *quad_max, which must start at 0), so no data range
// underflows or overflows half precision.
void launch_pack_half(const float* const src[4], size_t src_pitch, const float scale[4], unsigned* quad_max,
                      ushort4* hi, ushort4* lo, size_t dst_pitch_texels, int columns, int rows,
                      cudaStream_t stream);

// mask[z * nx + x] &= every listed view sees the column (double precision,
// the same test as the CPU's field_of_view_rows).
void launch_field_of_view(const double* matrices, const double* principal_cols, int count, int nx, int nz,
                          int columns, bool mirror, unsigned char* mask, cudaStream_t stream);

}  // namespace fdk::cuda
