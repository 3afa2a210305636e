// The ramp filter along rows and the window along columns, by our own FFT
// (no cuFFT). Device code only: #included into the one unity .cu that
// becomes the fatbin. Launch rules (grid, block, shared memory, scratch):
// fft_plan.hpp.
//
// Two real sequences ride as the real and imaginary parts of one complex
// one: their filters are real and even, so filtering the complex sequence
// filters each part on its own, and one FFT pair serves two rows.
#include "../filter/fft_stages.hpp"
#include "../filter/filter_params.hpp"

namespace fdk::cuda {
namespace {

// One in-place pass; the switches sit between the barriers, so one
// register array serves every radix.
__device__ __forceinline__ void pass_in_shared(Complex* buf, int radix, const FftPass& pass, const Complex* tw) {
  PassRegisters regs;
  const int t = threadIdx.x, threads = blockDim.x;
  switch (radix) {
    case 2: stage_load<2>(buf, pass, tw, t, threads, regs); break;
    case 3: stage_load<3>(buf, pass, tw, t, threads, regs); break;
    case 4: stage_load<4>(buf, pass, tw, t, threads, regs); break;
    case 5: stage_load<5>(buf, pass, tw, t, threads, regs); break;
    default: stage_load<8>(buf, pass, tw, t, threads, regs); break;
  }
  __syncthreads();
  switch (radix) {
    case 2: stage_store<2>(buf, pass, t, threads, regs); break;
    case 3: stage_store<3>(buf, pass, t, threads, regs); break;
    case 4: stage_store<4>(buf, pass, t, threads, regs); break;
    case 5: stage_store<5>(buf, pass, t, threads, regs); break;
    default: stage_store<8>(buf, pass, t, threads, regs); break;
  }
  __syncthreads();
}

// Forward FFT, response, forward FFT: 2 count passes in one loop, so the
// pass is inlined once (one copy per FFT and radix spilled registers:
// ptxas -v showed 2.3 KB of local memory). buf holds a pair's sequence; afterwards it holds the
// conjugate of the filtered sequence.
__device__ __forceinline__ void filter_in_shared(Complex* buf, int n, const int32_t* radices, int count,
                                                 const Complex* tw, const float* response) {
  __syncthreads();
  int ns = 1;
  for (int s = 0; s < 2 * count; ++s) {
    if (s == count) {
      apply_response_conj(buf, n, response, threadIdx.x, blockDim.x);
      __syncthreads();
      ns = 1;
    }
    const int radix = radices[s < count ? s : s - count];
    const FftPass pass = make_pass(n, ns, radix);
    pass_in_shared(buf, radix, pass, tw);
    ns *= radix;
  }
  if (count == 0) {  // n = 1: no pass, only the response
    apply_response_conj(buf, n, response, threadIdx.x, blockDim.x);
    __syncthreads();
  }
}

// The same ping-ponging between a and b (global scratch, any length);
// returns the buffer holding the result.
__device__ __forceinline__ Complex* filter_in_global(Complex* a, Complex* b, int n, const int32_t* radices,
                                                     int count, const Complex* tw, const float* response) {
  __syncthreads();
  int ns = 1;
  const int t = threadIdx.x, threads = blockDim.x;
  for (int s = 0; s < 2 * count; ++s) {
    if (s == count) {
      apply_response_conj(a, n, response, t, threads);
      __syncthreads();
      ns = 1;
    }
    const int radix = radices[s < count ? s : s - count];
    const FftPass pass = make_pass(n, ns, radix);
    switch (radix) {
      case 2: pass_out_of_place<2>(a, b, pass, tw, t, threads); break;
      case 3: pass_out_of_place<3>(a, b, pass, tw, t, threads); break;
      case 4: pass_out_of_place<4>(a, b, pass, tw, t, threads); break;
      case 5: pass_out_of_place<5>(a, b, pass, tw, t, threads); break;
      default: pass_out_of_place<8>(a, b, pass, tw, t, threads); break;
    }
    __syncthreads();
    Complex* c = a;
    a = b;
    b = c;
    ns *= radix;
  }
  if (count == 0) {
    apply_response_conj(a, n, response, t, threads);
    __syncthreads();
  }
  return a;
}

}  // namespace
}  // namespace fdk::cuda

// Block b filters row pairs b, b + gridDim.x, ... (rows 2 pair and 2 pair + 1).
// The shared and the global path are separate loops so that the shared
// one addresses shared memory directly (32-bit addresses, fewer registers).
extern "C" __global__ void __launch_bounds__(fdk::cuda::kFilterMaxThreads, 1)
    fdk_filter_rows(const __grid_constant__ fdk::cuda::RowFilterParams p) {
  using namespace fdk::cuda;
  extern __shared__ Complex shared_buffer[];
  const Complex* tw = address<const Complex>(p.twiddles);
  const float* response = address<const float>(p.response);
  const int pairs = (p.rows + 1) / 2;
  const int t = threadIdx.x, threads = blockDim.x;
  if (!p.scratch) {
    for (int pair = blockIdx.x; pair < pairs; pair += gridDim.x) {
      load_row_pair(p, 2 * pair, shared_buffer, t, threads);
      filter_in_shared(shared_buffer, p.n, p.radices, p.num_radices, tw, response);
      store_row_pair(p, 2 * pair, shared_buffer, t, threads);
      __syncthreads();  // the next pair's load overwrites what was just stored
    }
    return;
  }
  Complex* a = address<Complex>(p.scratch) + static_cast<uint64_t>(blockIdx.x) * 2u * static_cast<uint64_t>(p.n);
  for (int pair = blockIdx.x; pair < pairs; pair += gridDim.x) {
    load_row_pair(p, 2 * pair, a, t, threads);
    const Complex* y = filter_in_global(a, a + p.n, p.n, p.radices, p.num_radices, tw, response);
    store_row_pair(p, 2 * pair, y, t, threads);
    __syncthreads();
  }
}

// Block b filters column pairs b, b + gridDim.x, ... in place.
extern "C" __global__ void __launch_bounds__(fdk::cuda::kFilterMaxThreads, 1)
    fdk_filter_columns(const __grid_constant__ fdk::cuda::ColumnFilterParams p) {
  using namespace fdk::cuda;
  extern __shared__ Complex shared_buffer[];
  const Complex* tw = address<const Complex>(p.twiddles);
  const float* response = address<const float>(p.response);
  const int pairs = (p.columns + 1) / 2;
  const int t = threadIdx.x, threads = blockDim.x;
  if (!p.scratch) {
    for (int pair = blockIdx.x; pair < pairs; pair += gridDim.x) {
      load_column_pair(p, 2 * pair, shared_buffer, t, threads);
      filter_in_shared(shared_buffer, p.n, p.radices, p.num_radices, tw, response);
      store_column_pair(p, 2 * pair, shared_buffer, t, threads);
      __syncthreads();
    }
    return;
  }
  Complex* a = address<Complex>(p.scratch) + static_cast<uint64_t>(blockIdx.x) * 2u * static_cast<uint64_t>(p.n);
  for (int pair = blockIdx.x; pair < pairs; pair += gridDim.x) {
    load_column_pair(p, 2 * pair, a, t, threads);
    const Complex* y = filter_in_global(a, a + p.n, p.n, p.radices, p.num_radices, tw, response);
    store_column_pair(p, 2 * pair, y, t, threads);
    __syncthreads();
  }
}
