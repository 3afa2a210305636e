// cuFFT, loaded at run time. The toolkit ships cuFFT only as a shared
// library; linking it would make libfdk.so fail to load (CPU backend
// included) wherever libcufft is missing. Loaded on first use instead, its
// absence only makes the CUDA backend unavailable.
#pragma once
#include <cufft.h>

namespace fdk::cuda {

struct CufftApi {
  cufftResult (*plan_many)(cufftHandle*, int, int*, int*, int, int, int*, int, int, cufftType, int);
  cufftResult (*set_stream)(cufftHandle, cudaStream_t);
  cufftResult (*exec_r2c)(cufftHandle, cufftReal*, cufftComplex*);
  cufftResult (*exec_c2r)(cufftHandle, cufftComplex*, cufftReal*);
  cufftResult (*destroy)(cufftHandle);
};

// The loaded functions, or null (then cufft_load_error() says why).
const CufftApi* cufft_api() noexcept;
const char* cufft_load_error() noexcept;

}  // namespace fdk::cuda
