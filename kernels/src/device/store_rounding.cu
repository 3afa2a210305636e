// A filtered view rounded in place as the projection store's float16 coder
// rounds it (fdk/core/float16_bits.hpp), so that the GPUs' early slabs
// backproject the values a slab read from the store gets. Device code
// only: #included into the one unity .cu (all_kernels.cu).
#include <cstdint>

#include <fdk/core/float16_bits.hpp>

#include "../kernel_shapes.hpp"

// One block per band: rows [band * band_rows, + band_rows) of `columns`
// floats, rows `pitch` floats apart. The band's largest |value| gives its
// exponent, as in the store; a band holding inf or NaN is left as it is,
// for the store to refuse.
extern "C" __global__ void __launch_bounds__(fdk::cuda::kRoundBandThreads)
    fdk_round_store_bands(float* data, uint64_t pitch, int32_t columns, int32_t rows, int32_t band_rows) {
  namespace bits = fdk::float16_bits;
  __shared__ uint32_t band_max;
  const int row0 = static_cast<int>(blockIdx.x) * band_rows;
  const int row1 = min(rows, row0 + band_rows);
  if (threadIdx.x == 0) band_max = 0;
  __syncthreads();
  uint32_t m = 0;
  for (int r = row0; r < row1; ++r)
    for (int c = static_cast<int>(threadIdx.x); c < columns; c += blockDim.x)
      m = max(m, bits::float_bits(data[static_cast<size_t>(r) * pitch + c]) & 0x7FFFFFFFu);
  for (int o = 16; o > 0; o >>= 1) m = max(m, __shfl_xor_sync(0xFFFFFFFFu, m, o));
  if ((threadIdx.x & 31) == 0) atomicMax(&band_max, m);
  __syncthreads();
  if (band_max >= 0x7F800000u) return;
  const int e = bits::band_exponent_of(band_max);
  const bits::Pow2 down(-e), up(e);
  for (int r = row0; r < row1; ++r)
    for (int c = static_cast<int>(threadIdx.x); c < columns; c += blockDim.x) {
      float& x = data[static_cast<size_t>(r) * pitch + c];
      x = bits::stored_value(x, down, up);
    }
}
