#include "column_kernels.hpp"

#include <algorithm>

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define FDK_X86_SIMD 1
#include <immintrin.h>
#else
#define FDK_X86_SIMD 0
#endif

namespace fdk {
namespace {

void interpolate_scalar(float* col, const float* a, const float* b, float fu, float weight, int count) {
  for (int h = 0; h < count; ++h) col[h] = weight * (a[h] + fu * (b[h] - a[h]));
}

void accumulate_scalar(float* dst, const float* col, float r0, float dr, int t0, int t1, int last) {
  const float top = static_cast<float>(last + 1);
  for (int t = t0; t <= t1; ++t) {
    const float r = std::min(std::max(r0 + dr * static_cast<float>(t), 0.0f), top);
    const int ir = std::min(static_cast<int>(r), last);
    const float fr = r - static_cast<float>(ir);
    dst[t] += col[ir] + fr * (col[ir + 1] - col[ir]);
  }
}

#if FDK_X86_SIMD
__attribute__((target("avx2,fma"))) void interpolate_avx2(float* col, const float* a, const float* b, float fu,
                                                          float weight, int count) {
  const __m256 f = _mm256_set1_ps(fu), w = _mm256_set1_ps(weight);
  int h = 0;
  for (; h + 8 <= count; h += 8) {
    const __m256 va = _mm256_loadu_ps(a + h), vb = _mm256_loadu_ps(b + h);
    _mm256_storeu_ps(col + h, _mm256_mul_ps(w, _mm256_fmadd_ps(f, _mm256_sub_ps(vb, va), va)));
  }
  for (; h < count; ++h) col[h] = weight * (a[h] + fu * (b[h] - a[h]));
}

// Eight voxels per step from an aligned-down start, lanes outside [t0, t1]
// masked to zero, so there is no scalar tail.
__attribute__((target("avx2,fma"))) void accumulate_avx2(float* dst, const float* col, float r0, float dr, int t0,
                                                         int t1, int last) {
  const __m256 top = _mm256_set1_ps(static_cast<float>(last + 1));
  const __m256 zero = _mm256_setzero_ps();
  const __m256i last_index = _mm256_set1_epi32(last);
  const __m256 step = _mm256_set1_ps(dr);
  const __m256 start = _mm256_set1_ps(r0);
  const __m256i lo = _mm256_set1_epi32(t0 - 1), hi = _mm256_set1_epi32(t1 + 1);
  const int first = t0 & ~7;
  __m256i t_int = _mm256_add_epi32(_mm256_set1_epi32(first), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const __m256i eight = _mm256_set1_epi32(8);
  for (int t = first; t <= t1; t += 8) {
    const __m256 t_f = _mm256_cvtepi32_ps(t_int);
    __m256 r = _mm256_fmadd_ps(t_f, step, start);
    r = _mm256_min_ps(_mm256_max_ps(r, zero), top);
    const __m256i ir = _mm256_min_epi32(_mm256_cvttps_epi32(r), last_index);
    const __m256 fr = _mm256_sub_ps(r, _mm256_cvtepi32_ps(ir));
    const __m256 a = _mm256_i32gather_ps(col, ir, 4);
    const __m256 b = _mm256_i32gather_ps(col + 1, ir, 4);
    const __m256i inside = _mm256_and_si256(_mm256_cmpgt_epi32(t_int, lo), _mm256_cmpgt_epi32(hi, t_int));
    const __m256 value = _mm256_and_ps(_mm256_fmadd_ps(fr, _mm256_sub_ps(b, a), a), _mm256_castsi256_ps(inside));
    _mm256_storeu_ps(dst + t, _mm256_add_ps(_mm256_loadu_ps(dst + t), value));
    t_int = _mm256_add_epi32(t_int, eight);
  }
}
#endif

ColumnKernels pick() {
#if FDK_X86_SIMD
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {interpolate_avx2, accumulate_avx2};
#endif
  return {interpolate_scalar, accumulate_scalar};
}

}  // namespace

const ColumnKernels& column_kernels() {
  static const ColumnKernels kernels = pick();
  return kernels;
}

}  // namespace fdk
