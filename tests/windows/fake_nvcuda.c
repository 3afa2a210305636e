/* A stand-in for the NVIDIA driver's nvcuda.dll, for .ci/windows.sh under
   Wine (which has no driver): placed in the prefix's system folder it shows
   that fdk.dll finds the driver there by name, binds every entry point it
   needs, and falls back to the CPU with the right reason when the driver
   finds no GPU, is too old, or is a wrapper that lacks entry points. Every
   entry point but those below fails (CUDA_ERROR_UNKNOWN); windows.sh
   generates them (fake_nvcuda_stubs.h) from kernels/src/driver/driver_api.hpp.

   FAKE_VERSION: what cuDriverGetVersion says; FAKE_INIT: what cuInit
   returns; FAKE_LACKS_LIBRARY: the cuLibrary* entry points are missing. */
#define EXPORT __declspec(dllexport)

EXPORT int cuDriverGetVersion(int* version) {
  *version = FAKE_VERSION;
  return 0;
}
EXPORT int cuInit(unsigned flags) {
  (void)flags;
  return FAKE_INIT;
}
static const char* fake_error_name(int status) {
  return status == 100 ? "CUDA_ERROR_NO_DEVICE" : status == 0 ? "CUDA_SUCCESS" : "CUDA_ERROR_UNKNOWN";
}
EXPORT int cuGetErrorName(int status, const char** name) {
  *name = fake_error_name(status);
  return 0;
}
EXPORT int cuGetErrorString(int status, const char** text) {
  *text = fake_error_name(status);
  return 0;
}
EXPORT int cuDeviceGetCount(int* count) {
  *count = 0;
  return 0;
}

#define FAKE_STUB(name) \
  EXPORT int name(void) { return 999; }
#include "fake_nvcuda_stubs.h"
