// A stand-in for the NVIDIA driver (built as libcuda.so.1 in a folder of its
// own, put first on LD_LIBRARY_PATH by the tests that load it): every entry
// point the backend binds, by its versioned name, answering as a machine
// whose driver is too old, is the toolkit's stub, has no GPU, or sees none.
// FDK_FAKE_DRIVER picks which; it is read here, never by libfdk.
#include <cuda.h>

#include <cstdlib>
#include <cstring>

namespace {

const char* mode() {
  const char* m = std::getenv("FDK_FAKE_DRIVER");
  return m ? m : "old";
}
bool is(const char* m) { return std::strcmp(mode(), m) == 0; }

}  // namespace

extern "C" {

__attribute__((visibility("default"))) CUresult cuInit(unsigned) {
  if (is("stub")) return CUDA_ERROR_STUB_LIBRARY;
  if (is("nodevice")) return CUDA_ERROR_NO_DEVICE;
  return CUDA_SUCCESS;
}

__attribute__((visibility("default"))) CUresult cuDriverGetVersion(int* version) {
  *version = is("old") ? 12040 : 13000;
  return CUDA_SUCCESS;
}

__attribute__((visibility("default"))) CUresult cuDeviceGetCount(int* count) {
  *count = 0;  // "nogpu": a driver that sees no device
  return CUDA_SUCCESS;
}

__attribute__((visibility("default"))) CUresult cuGetErrorName(CUresult, const char** name) {
  *name = "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}

__attribute__((visibility("default"))) CUresult cuGetErrorString(CUresult, const char** text) {
  *text = "a fake driver's error";
  return CUDA_SUCCESS;
}

}  // extern "C"
