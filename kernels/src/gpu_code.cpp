#include "gpu_code.hpp"

#include <algorithm>

#include "driver/context.hpp"
#include "driver/kernel_library.hpp"
#include "cuda_check.hpp"
#include "gpu_architectures.h"

namespace fdk::cuda {
namespace {

std::vector<int> sorted(std::vector<int> archs) {
  std::sort(archs.begin(), archs.end());
  return archs;
}

}  // namespace

const std::vector<int>& sass_architectures() {
  static const std::vector<int> archs = sorted({FDK_CUDA_SASS_LIST});
  return archs;
}

const std::vector<int>& ptx_architectures() {
  static const std::vector<int> archs = sorted({FDK_CUDA_PTX_LIST});
  return archs;
}

GpuCode classify_gpu_code(int compute_capability, bool probe_ok, int binary_version,
                          const std::vector<int>& sass, const std::vector<int>& ptx) {
  GpuCode r;
  r.compute_capability = compute_capability;
  if (!probe_ok) return r;
  // A cubin runs on its major version from its minor up: the loaded binary
  // is SASS when it is one of ours that fits; otherwise the driver built it
  // from the newest PTX not above the device.
  const int major = compute_capability / 10;
  if (std::find(sass.begin(), sass.end(), binary_version) != sass.end() && binary_version / 10 == major &&
      binary_version <= compute_capability) {
    r.code = FDK_GPU_CODE_SASS;
    r.arch = binary_version;
    return r;
  }
  r.code = FDK_GPU_CODE_JIT;
  for (int p : ptx)
    if (p <= compute_capability) r.arch = p;
  return r;
}

GpuCode probe_gpu_code(int device) noexcept {
  GpuCode r;
  try {
    const DriverApi* d = driver();
    if (!d) {
      r.why = driver_error();
      return r;
    }
    CUdevice dev = 0;
    int major = 0, minor = 0;
    CUresult status = d->cuDeviceGet(&dev, device);
    if (status == CUDA_SUCCESS)
      status = d->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    if (status == CUDA_SUCCESS)
      status = d->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    if (status != CUDA_SUCCESS) {
      r.why = describe(status);
      return r;
    }
    // The probe kernel's image in the device's context: the driver picks
    // the cubin or JIT-compiles the PTX as it would for every kernel.
    DeviceGuard guard(device);
    CUfunction f = nullptr;
    int binary_version = 0;
    status = d->cuKernelGetFunction(&f, kernel_handle(Kernel::code_probe));
    if (status == CUDA_SUCCESS) status = d->cuFuncGetAttribute(&binary_version, CU_FUNC_ATTRIBUTE_BINARY_VERSION, f);
    r = classify_gpu_code(major * 10 + minor, status == CUDA_SUCCESS, binary_version, sass_architectures(),
                          ptx_architectures());
    if (status != CUDA_SUCCESS) r.why = describe(status);
  } catch (const Error& e) {
    r.code = FDK_GPU_CODE_NONE;
    r.why = e.what();
  } catch (...) {
    r.code = FDK_GPU_CODE_NONE;
    r.why = "out of memory while asking the NVIDIA driver";
  }
  return r;
}

}  // namespace fdk::cuda
