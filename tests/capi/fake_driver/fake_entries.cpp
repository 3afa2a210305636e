// Every entry point the backend binds, present (so that binding succeeds)
// and failing; weak, so that fake_answers.cpp's own answers win.
#include <cuda.h>

#include "driver/driver_api.hpp"

extern "C" {
#define FDK_FAKE_ENTRY(name, symbol)      \
  CUresult fake_##name() __asm__(symbol); \
  __attribute__((weak, visibility("default"))) CUresult fake_##name() { return CUDA_ERROR_NOT_SUPPORTED; }
FDK_DRIVER_FUNCTIONS(FDK_FAKE_ENTRY)
}  // extern "C"
