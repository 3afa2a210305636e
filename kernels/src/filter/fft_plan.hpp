// The host side of the FFT filter kernels (device/filter_kernels.cu): the
// radices and twiddles of a length, and how a length is launched. Plain C++.
//
// Launch of fdk_filter_rows (fdk_filter_columns alike, with column pairs):
//   block: FilterLaunch::threads; grid: (rows + 1) / 2 blocks (pairs), or
//   fewer, since block b loops over pairs b, b + gridDim.x, ...;
//   dynamic shared bytes: FilterLaunch::shared_bytes (above 48 KiB the
//   kernel needs CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES raised);
//   scratch: 0 on the shared path, else gridDim.x * scratch_bytes_per_block
//   bytes of device memory (cap the grid to bound it).
#pragma once
#include <cstdint>
#include <vector>

#include "filter_params.hpp"

namespace fdk::cuda {

struct FftPlan {
  int n = 0;
  std::vector<int> radices;     // the passes, first to last
  std::vector<float> twiddles;  // 2 n floats: exp(-2 pi i k / n), re then im
};

// Throws fdk::Error (FDK_ERROR_INTERNAL) for n < 1 or a prime factor above 5.
FftPlan make_fft_plan(int n);

struct FilterLaunch {
  int threads = 0;                   // blockDim.x
  uint32_t shared_bytes = 0;         // dynamic shared memory; 0 on the global path
  uint64_t scratch_bytes_per_block = 0;  // 0 on the shared path
};

// Whether `threads` threads hold every in-place pass of the plan in registers.
bool fits_in_registers(const FftPlan& plan, int threads);

// The shared-memory path when n complex values fit max_shared_bytes (the
// device's opt-in limit per block) and the registers of at most
// kFilterMaxThreads threads, else the global-scratch path.
FilterLaunch filter_launch(const FftPlan& plan, uint64_t max_shared_bytes);

// n, num_radices, radices (throws FDK_ERROR_INTERNAL if too many).
void set_plan(RowFilterParams& params, const FftPlan& plan);
void set_plan(ColumnFilterParams& params, const FftPlan& plan);

}  // namespace fdk::cuda
