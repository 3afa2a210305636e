// The FFT filter's arithmetic, shared by the kernels (device/filter_kernels.cu)
// and their CPU emulation in tests/unit/test_gpu_fft.cpp, so the test checks
// the very code the GPU runs. Plain C++ unless nvcc compiles it.
//
// The FFT is Stockham's autosort form, decimation in time, mixed radix
// (2, 3, 4, 5, 8): pass s of radix R, after ns = product of the earlier
// radices, takes butterfly j (0 <= j < n / R) from src[j + r n / R],
// twiddles input r by w^(r (j mod ns) n / (ns R)), w = exp(-2 pi i / n), and
// writes its R-point DFT to dst[(j - j mod ns) R + j mod ns + r ns]. No
// bit reversal is needed, and every pass reads and writes contiguous runs.
// Only the forward transform exists: the inverse is conj(FFT(conj(x))), with
// 1/n folded into the response.
#pragma once
#include <cmath>
#include <cstdint>

#include "filter_params.hpp"

// FDK_HD functions are forced inline on the device: a butterfly's register
// array passed to an outlined call would live in local memory.
#ifdef __CUDACC__
#define FDK_HD __host__ __device__ __forceinline__
#else
#define FDK_HD inline
#endif

namespace fdk::cuda {

// The most threads a filter block may have (the kernels' __launch_bounds__).
constexpr int kFilterMaxThreads = 512;

// The complex values one thread holds in registers during an in-place
// pass, whatever the radix: one array for all radices, so that a switch over
// the radix around a barrier keeps one set of registers live, not five.
constexpr int kPassRegisters = 32;

// Butterflies per thread per in-place pass; the host checks that
// ceil(n / (radix * threads)) never exceeds it (fft_plan.hpp).
template <int R>
constexpr int kMaxButterflies = kPassRegisters / R;

inline constexpr int max_butterflies(int radix) {
  return radix == 2 || radix == 3 || radix == 4 || radix == 5 || radix == 8 ? kPassRegisters / radix : 0;
}

struct alignas(8) Complex {
  float re, im;
};

FDK_HD Complex operator+(Complex a, Complex b) { return {a.re + b.re, a.im + b.im}; }
FDK_HD Complex operator-(Complex a, Complex b) { return {a.re - b.re, a.im - b.im}; }
FDK_HD Complex operator*(Complex a, Complex b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
FDK_HD Complex scale(Complex a, float s) { return {a.re * s, a.im * s}; }
FDK_HD Complex times_minus_i(Complex a) { return {a.im, -a.re}; }

template <class T>
FDK_HD T* address(uint64_t a) {
  return reinterpret_cast<T*>(static_cast<uintptr_t>(a));
}

FDK_HD Complex load_twiddle(const Complex* tw, int i) {
#ifdef __CUDA_ARCH__
  // Read-only for the whole launch: through the non-coherent cache.
  const float2 t = __ldg(reinterpret_cast<const float2*>(tw) + i);
  return {t.x, t.y};
#else
  return tw[i];
#endif
}

// ---- the R-point DFTs (forward: exp(-2 pi i j k / R)) -----------------------

FDK_HD void dft2(Complex* v) {
  const Complex a = v[0], b = v[1];
  v[0] = a + b;
  v[1] = a - b;
}

FDK_HD void dft3(Complex* v) {
  constexpr float kSin60 = 0.866025403784438647f;
  const Complex t = v[1] + v[2];
  const Complex m = v[0] - scale(t, 0.5f);
  const Complex d = scale(times_minus_i(v[1] - v[2]), kSin60);
  v[0] = v[0] + t;
  v[1] = m + d;
  v[2] = m - d;
}

FDK_HD void dft4(Complex* v) {
  const Complex t0 = v[0] + v[2], t1 = v[0] - v[2];
  const Complex t2 = v[1] + v[3], t3 = times_minus_i(v[1] - v[3]);
  v[0] = t0 + t2;
  v[1] = t1 + t3;
  v[2] = t0 - t2;
  v[3] = t1 - t3;
}

FDK_HD void dft5(Complex* v) {
  constexpr float c1 = 0.309016994374947424f;   // cos(2 pi / 5)
  constexpr float c2 = -0.809016994374947424f;  // cos(4 pi / 5)
  constexpr float s1 = 0.951056516295153572f;   // sin(2 pi / 5)
  constexpr float s2 = 0.587785252292473129f;   // sin(4 pi / 5)
  const Complex t1 = v[1] + v[4], t2 = v[2] + v[3];
  const Complex t3 = v[1] - v[4], t4 = v[2] - v[3];
  const Complex b1 = v[0] + scale(t1, c1) + scale(t2, c2);
  const Complex b2 = v[0] + scale(t1, c2) + scale(t2, c1);
  const Complex d1 = times_minus_i(scale(t3, s1) + scale(t4, s2));
  const Complex d2 = times_minus_i(scale(t3, s2) - scale(t4, s1));
  v[0] = v[0] + t1 + t2;
  v[1] = b1 + d1;
  v[4] = b1 - d1;
  v[2] = b2 + d2;
  v[3] = b2 - d2;
}

FDK_HD void dft8(Complex* v) {
  constexpr float h = 0.707106781186547524f;
  Complex e[4] = {v[0], v[2], v[4], v[6]}, o[4] = {v[1], v[3], v[5], v[7]};
  dft4(e);
  dft4(o);
  o[1] = Complex{(o[1].re + o[1].im) * h, (o[1].im - o[1].re) * h};   // * (1 - i) / sqrt 2
  o[2] = times_minus_i(o[2]);                                          // * -i
  o[3] = Complex{(o[3].im - o[3].re) * h, -(o[3].re + o[3].im) * h};  // * (-1 - i) / sqrt 2
  for (int k = 0; k < 4; ++k) {
    v[k] = e[k] + o[k];
    v[k + 4] = e[k] - o[k];
  }
}

template <int R>
FDK_HD void dft(Complex* v) {
  static_assert(kMaxButterflies<R> > 0, "radix 2, 3, 4, 5 or 8");
  if constexpr (R == 2) dft2(v);
  if constexpr (R == 3) dft3(v);
  if constexpr (R == 4) dft4(v);
  if constexpr (R == 5) dft5(v);
  if constexpr (R == 8) dft8(v);
}

// ---- Stockham passes ----------------------------------------------------------

struct FftPass {
  int n;          // transform length
  int ns;         // product of the earlier passes' radices
  int butterflies;  // n / R
  int tw_step;    // n / (ns R): twiddle table stride
};

FDK_HD FftPass make_pass(int n, int ns, int radix) {
  return {n, ns, n / radix, n / (ns * radix)};
}

template <int R>
FDK_HD void load_butterfly(const Complex* src, const FftPass& p, const Complex* tw, int j, Complex* v) {
  const int step = (j % p.ns) * p.tw_step;
  v[0] = src[j];
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (int r = 1; r < R; ++r) v[r] = src[j + r * p.butterflies] * load_twiddle(tw, step * r);
}

template <int R>
FDK_HD void store_butterfly(Complex* dst, const FftPass& p, int j, const Complex* v) {
  const int k = j % p.ns;
  const int base = (j - k) * R + k;
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (int r = 0; r < R; ++r) dst[base + r * p.ns] = v[r];
}

// Out of place: thread `first` of `stride` threads does butterflies first,
// first + stride, ... (the global-memory path, and the reference).
template <int R>
FDK_HD void pass_out_of_place(const Complex* src, Complex* dst, const FftPass& p, const Complex* tw,
                                     int first, int stride) {
  for (int j = first; j < p.butterflies; j += stride) {
    Complex v[R];
    load_butterfly<R>(src, p, tw, j, v);
    dft<R>(v);
    store_butterfly<R>(dst, p, j, v);
  }
}

// In place, in two stages with a block barrier between them: every thread
// first holds all its butterflies' inputs (twiddled) in registers, then,
// once no thread reads any more, transforms and writes them. The loops have
// compile-time bounds so the registers stay registers.
struct PassRegisters {
  Complex v[kPassRegisters];
};

template <int R>
FDK_HD void stage_load(const Complex* buf, const FftPass& p, const Complex* tw, int thread, int threads,
                       PassRegisters& regs) {
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (int b = 0; b < kMaxButterflies<R>; ++b) {
    const int j = thread + b * threads;
    if (j < p.butterflies) load_butterfly<R>(buf, p, tw, j, regs.v + b * R);
  }
}

template <int R>
FDK_HD void stage_store(Complex* buf, const FftPass& p, int thread, int threads, PassRegisters& regs) {
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (int b = 0; b < kMaxButterflies<R>; ++b) {
    const int j = thread + b * threads;
    if (j < p.butterflies) {
      dft<R>(regs.v + b * R);
      store_butterfly<R>(buf, p, j, regs.v + b * R);
    }
  }
}

// ---- the fused filter stages around the FFTs -----------------------------------

FDK_HD float cos_pi(float x) {
#ifdef __CUDA_ARCH__
  return cospif(x);
#else
  return static_cast<float>(std::cos(3.14159265358979323846 * static_cast<double>(x)));
#endif
}

FDK_HD float reciprocal_sqrt(float x) {
#ifdef __CUDA_ARCH__
  return rsqrtf(x);
#else
  return 1.0f / std::sqrt(x);
#endif
}

// Sample s of padded row j: the weighted pixel, the truncation extension
// (the edge pixel times a raised cosine falling to zero over pad + 1
// samples, as RampFilter pads) or zero.
FDK_HD float row_sample(const RowFilterParams& p, int j, int s) {
  if (s >= p.width + 2 * p.pad) return 0.0f;
  int i = s - p.pad;
  float taper = 1.0f;
  if (i < 0) {
    taper = 0.5f * (1.0f + cos_pi(static_cast<float>(-i) / static_cast<float>(p.pad + 1)));
    i = 0;
  } else if (i >= p.width) {
    taper = 0.5f * (1.0f + cos_pi(static_cast<float>(i - p.width + 1) / static_cast<float>(p.pad + 1)));
    i = p.width - 1;
  }
  const int ii = i - p.column_offset;
  if (ii < 0 || ii >= p.in_width) return 0.0f;
  const float v = p.v_origin + static_cast<float>(j) * p.v_spacing;
  const float pixel = address<const float>(p.raw)[static_cast<uint64_t>(j) * p.in_pitch + static_cast<uint64_t>(ii)];
  return pixel * address<const float>(p.column_weight)[i] *
         reciprocal_sqrt(p.sdd2 + v * v + address<const float>(p.column_u2)[i]) * taper;
}

// Rows j and j + 1 as one complex sequence (j + 1 zero past the last row).
FDK_HD void load_row_pair(const RowFilterParams& p, int j, Complex* buf, int first, int stride) {
  const bool second = j + 1 < p.rows;
  for (int s = first; s < p.n; s += stride)
    buf[s] = Complex{row_sample(p, j, s), second ? row_sample(p, j + 1, s) : 0.0f};
}

// X -> conj(H X), H real and even (H[k] = H[n - k]; bins 0..n/2 given): the
// next forward FFT then gives conj of the filtered pair.
FDK_HD void apply_response_conj(Complex* buf, int n, const float* response, int first, int stride) {
  for (int k = first; k < n; k += stride) {
    const float h = response[k <= n / 2 ? k : n - k];
    buf[k] = Complex{buf[k].re * h, -buf[k].im * h};
  }
}

FDK_HD void store_row_pair(const RowFilterParams& p, int j, const Complex* buf, int first, int stride) {
  float* out0 = address<float>(p.out) + static_cast<uint64_t>(j) * p.out_pitch;
  float* out1 = out0 + p.out_pitch;
  const bool second = j + 1 < p.rows;
  for (int i = first; i < p.width; i += stride) {
    const Complex z = buf[p.pad + i];
    out0[i] = z.re;
    if (second) out1[i] = -z.im;
  }
}

// Columns c and c + 1 as one complex sequence, zero-padded below the view.
FDK_HD void load_column_pair(const ColumnFilterParams& p, int c, Complex* buf, int first, int stride) {
  const float* data = address<const float>(p.data);
  const bool second = c + 1 < p.columns;
  for (int r = first; r < p.n; r += stride) {
    Complex z{0.0f, 0.0f};
    if (r < p.rows) {
      const float* row = data + static_cast<uint64_t>(r) * p.pitch + c;
      z = Complex{row[0], second ? row[1] : 0.0f};
    }
    buf[r] = z;
  }
}

FDK_HD void store_column_pair(const ColumnFilterParams& p, int c, const Complex* buf, int first, int stride) {
  float* data = address<float>(p.data);
  const bool second = c + 1 < p.columns;
  for (int r = first; r < p.rows; r += stride) {
    float* row = data + static_cast<uint64_t>(r) * p.pitch + c;
    row[0] = buf[r].re;
    if (second) row[1] = -buf[r].im;
  }
}

}  // namespace fdk::cuda
