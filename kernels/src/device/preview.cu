// The live preview's kernel (device_preview.hpp): device code only,
// #included into the one unity .cu that becomes the fatbin.
#include "../kernel_params.hpp"
#include "../kernel_shapes.hpp"

namespace fdk::cuda {
namespace {

// Thread (i, k) adds the batch's views to planes [t0, t0 + kPlanesPerThread)
// of its column, each pixel interpolated in float from the four around it.
__device__ __forceinline__ void preview_kernel(const PreviewBatch& b, float* vol, const unsigned char* mask) {
  const int i = blockIdx.x * kBlockX + threadIdx.x;
  const int k = blockIdx.y * kBlockZ + threadIdx.y;
  const int t0 = blockIdx.z * kPlanesPerThread;
  const SlabGeometry& g = b.g;
  if (i >= g.nx || k >= g.nz || !mask[static_cast<size_t>(k) * g.nx + i]) return;
  float acc[kPlanesPerThread];
#pragma unroll
  for (int t = 0; t < kPlanesPerThread; ++t) acc[t] = 0.0f;
  const float x = static_cast<float>(i), z = static_cast<float>(k);
  const size_t pitch = b.pitch;
  for (int q = 0; q < b.count; ++q) {
    const float* m = b.view[q].m;
    const float* src = b.src[q];
    const float ub = m[0] * x + m[2] * z + m[3];
    const float vb = m[4] * x + m[6] * z + m[7];
    const float wb = m[8] * x + m[10] * z + m[11];
#pragma unroll
    for (int t = 0; t < kPlanesPerThread; ++t) {
      const float y = static_cast<float>(t0 + t);
      const float w = wb + m[9] * y;
      if (!(w > 0.0f)) continue;
      const float inv = 1.0f / w;
      const float u = (ub + m[1] * y) * inv;
      const float v = (vb + m[5] * y) * inv;
      if (!(u >= 0.0f && u <= g.columns - 1 && v >= 0.0f && v <= g.rows - 1)) continue;
      const int iu = min(static_cast<int>(u), g.columns - 2);
      const int iv = min(static_cast<int>(v), g.rows - 2);
      const float fu = u - static_cast<float>(iu), fv = v - static_cast<float>(iv);
      const float* p = src + static_cast<size_t>(iv) * pitch + iu;
      const float top = __ldg(p) + fu * (__ldg(p + 1) - __ldg(p));
      const float bottom = __ldg(p + pitch) + fu * (__ldg(p + pitch + 1) - __ldg(p + pitch));
      acc[t] += b.view[q].weight * inv * inv * (top + fv * (bottom - top));
    }
  }
#pragma unroll
  for (int t = 0; t < kPlanesPerThread; ++t)
    if (t0 + t < g.planes) vol[(static_cast<size_t>(t0 + t) * g.nz + k) * g.nx + i] += acc[t];
}

}  // namespace
}  // namespace fdk::cuda

extern "C" __global__ void __launch_bounds__(fdk::cuda::kBlockX* fdk::cuda::kBlockZ)
    fdk_preview_views(const __grid_constant__ fdk::cuda::PreviewBatch b, float* vol, const unsigned char* mask) {
  fdk::cuda::preview_kernel(b, vol, mask);
}
