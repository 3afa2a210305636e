#include "gpu_code.hpp"

#include <cuda_runtime.h>

#include <algorithm>

#include "gpu_architectures.h"

namespace fdk::cuda {
namespace {

// Compiled for exactly the architectures the backend's kernels are (one
// CMake target), so what the runtime loads for it is what they get.
__global__ void code_probe_kernel(int* out) {
  if (out) *out = 1;
}

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
    int major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
      r.why = cudaGetErrorString(cudaGetLastError());
      return r;
    }
    int previous = 0;
    const bool had_previous = cudaGetDevice(&previous) == cudaSuccess;
    cudaFuncAttributes attributes{};
    cudaError_t status = cudaSetDevice(device);
    if (status == cudaSuccess) status = cudaFuncGetAttributes(&attributes, code_probe_kernel);
    cudaGetLastError();  // a missing image is not sticky: clear it
    if (had_previous) cudaSetDevice(previous);
    r = classify_gpu_code(major * 10 + minor, status == cudaSuccess, attributes.binaryVersion,
                          sass_architectures(), ptx_architectures());
    if (status != cudaSuccess) r.why = std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")";
  } catch (...) {
    r.code = FDK_GPU_CODE_NONE;
    r.why = "out of memory while asking the CUDA runtime";
  }
  return r;
}

}  // namespace fdk::cuda
