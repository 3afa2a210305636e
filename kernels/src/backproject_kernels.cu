#include "backproject_kernels.cuh"
#include "cuda_check.hpp"

namespace fdk::cuda {
namespace {

constexpr int kBlockX = 32, kBlockZ = 4;

__device__ __forceinline__ bool inside(float u, float v, const SlabGeometry& g) {
  return u >= 0.0f && u <= g.columns - 1 && v >= 0.0f && v <= g.rows - 1;
}

__global__ void __launch_bounds__(kBlockX* kBlockZ) generic_kernel(const __grid_constant__ GenericBatch b,
                                                                   float* slab, const unsigned char* mask) {
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
      const float y = static_cast<float>(g.y0 + t0 + t);
      const float w = wb + m[9] * y;
      if (!(w > 0.0f)) continue;
      const float inv = 1.0f / w;
      const float u = (ub + m[1] * y) * inv;
      const float v = (vb + m[5] * y) * inv;
      if (!inside(u, v, g)) continue;
      acc[t] += b.view[q].weight * inv * inv * tex2D<float>(b.tex[q], u + 0.5f, v - b.view[q].row_offset + 0.5f);
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
__global__ void __launch_bounds__(kBlockX* kBlockZ) quad_kernel(const __grid_constant__ QuadBatch b, float* slab,
                                                                const unsigned char* mask) {
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
  const float ybase = static_cast<float>(g.y0 + t0);
  for (int q = 0; q < b.count; ++q) {
    const float* m = b.view[q].m;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float x = static_cast<float>(xs[e]), z = static_cast<float>(zs[e]);
      const float w = m[8] * x + m[10] * z + m[11];
      if (!(w > 0.0f)) continue;
      const float inv = 1.0f / w;
      const float u = (m[0] * x + m[2] * z + m[3]) * inv;
      if (!(u >= 0.0f && u <= g.columns - 1)) continue;
      const float v0 = (m[4] * x + m[5] * ybase + m[6] * z + m[7]) * inv;
      const float dv = m[5] * inv;
      const float wt = b.view[q].weight * inv * inv;
      const float tu = u + 0.5f, tv = v0 - b.view[q].row_offset + 0.5f;
#pragma unroll
      for (int t = 0; t < kPlanesPerThread; ++t) {
        const float v = v0 + dv * t;
        if (!(v >= 0.0f && v <= g.rows - 1)) continue;
        const float4 f = tex2D<float4>(b.tex[q], tu, tv + dv * t);
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

template <class Texel>
__device__ Texel make_texel(float a, float b, float c, float d);
template <>
__device__ float4 make_texel<float4>(float a, float b, float c, float d) {
  return make_float4(a, b, c, d);
}
template <>
__device__ ushort4 make_texel<ushort4>(float a, float b, float c, float d) {
  return make_ushort4(__half_as_ushort(__float2half_rn(a)), __half_as_ushort(__float2half_rn(b)),
                      __half_as_ushort(__float2half_rn(c)), __half_as_ushort(__float2half_rn(d)));
}

struct PackArgs {
  const float* src[4];
  size_t src_pitch;
  float scale[4];
};

template <class Texel>
__global__ void pack_kernel(PackArgs a, Texel* dst, size_t pitch, int columns, int rows) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y;
  if (c >= columns || r >= rows) return;
  const size_t s = static_cast<size_t>(r) * a.src_pitch + c;
  dst[static_cast<size_t>(r) * pitch + c] = make_texel<Texel>(a.scale[0] * a.src[0][s], a.scale[1] * a.src[1][s],
                                                              a.scale[2] * a.src[2][s], a.scale[3] * a.src[3][s]);
}

__global__ void fov_kernel(const double* matrices, const double* principal_cols, int count, int nx, int nz,
                           int columns, bool mirror, unsigned char* mask) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int k = blockIdx.y;
  if (i >= nx || k >= nz) return;
  unsigned char& cell = mask[static_cast<size_t>(k) * nx + i];
  if (!cell) return;
  const double last = columns - 1;
  for (int v = 0; v < count; ++v) {
    const double* m = matrices + 12 * v;
    const double w = m[8] * i + m[10] * k + m[11];
    bool seen = false;
    if (w > 0) {
      const double u = (m[0] * i + m[2] * k + m[3]) / w;
      seen = u >= 0 && u <= last;
      if (!seen && mirror) {
        const double mirrored = 2 * principal_cols[v] - u;
        seen = mirrored >= 0 && mirrored <= last;
      }
    }
    if (!seen) {
      cell = 0;
      return;
    }
  }
}

}  // namespace

void launch_generic(const GenericBatch& batch, float* slab, const unsigned char* mask, cudaStream_t stream) {
  const dim3 block(kBlockX, kBlockZ);
  const dim3 grid((batch.g.nx + kBlockX - 1) / kBlockX, (batch.g.nz + kBlockZ - 1) / kBlockZ,
                  (batch.g.planes + kPlanesPerThread - 1) / kPlanesPerThread);
  generic_kernel<<<grid, block, 0, stream>>>(batch, slab, mask);
  check_launch("backprojection (generic)");
}

void launch_quads(const QuadBatch& batch, float* slab, const unsigned char* mask, cudaStream_t stream) {
  const int half = batch.g.nx / 2;
  const dim3 block(kBlockX, kBlockZ);
  const dim3 grid((half + kBlockX - 1) / kBlockX, (half + kBlockZ - 1) / kBlockZ,
                  (batch.g.planes + kPlanesPerThread - 1) / kPlanesPerThread);
  quad_kernel<<<grid, block, 0, stream>>>(batch, slab, mask);
  check_launch("backprojection (symmetric quads)");
}

template <class Texel>
void launch_pack(const float* const src[4], size_t src_pitch, const float scale[4], Texel* dst, size_t pitch,
                 int columns, int rows, cudaStream_t stream) {
  PackArgs a;
  a.src_pitch = src_pitch;
  for (int c = 0; c < 4; ++c) {
    a.src[c] = src[c];
    a.scale[c] = scale[c];
  }
  pack_kernel<Texel><<<dim3((columns + 127) / 128, rows), 128, 0, stream>>>(a, dst, pitch, columns, rows);
  check_launch("pack_kernel");
}

template void launch_pack<float4>(const float* const[4], size_t, const float[4], float4*, size_t, int, int,
                                  cudaStream_t);
template void launch_pack<ushort4>(const float* const[4], size_t, const float[4], ushort4*, size_t, int, int,
                                   cudaStream_t);

void launch_field_of_view(const double* matrices, const double* principal_cols, int count, int nx, int nz,
                          int columns, bool mirror, unsigned char* mask, cudaStream_t stream) {
  fov_kernel<<<dim3((nx + 127) / 128, nz), 128, 0, stream>>>(matrices, principal_cols, count, nx, nz, columns, mirror,
                                                             mask);
  check_launch("field_of_view");
}

}  // namespace fdk::cuda
