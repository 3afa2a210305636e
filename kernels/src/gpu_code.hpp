// Which of the binary's GPU code a device runs: the machine code (SASS)
// compiled for its architecture, PTX the driver compiles at first use
// (JIT), or none. The driver picks a cubin of the device's major version
// and a minor at most the device's, else JIT-compiles the newest PTX not
// above the device; the probe asks the driver what it loaded.
#pragma once
#include <fdk/fdk.h>

#include <string>
#include <vector>

namespace fdk::cuda {

struct GpuCode {
  int compute_capability = 0;  // major * 10 + minor
  fdk_gpu_code code = FDK_GPU_CODE_NONE;
  int arch = 0;                // the cubin's architecture, or the PTX JIT-compiled
  std::string why;             // for FDK_GPU_CODE_NONE: what the driver said
};

// The architectures compiled in (CMAKE_CUDA_ARCHITECTURES), ascending.
const std::vector<int>& sass_architectures();
const std::vector<int>& ptx_architectures();

// From what the driver reported for a kernel of this binary: probe_ok is
// false when it found no image for the device (then nothing runs there);
// binary_version is the loaded code's architecture (the device's own after
// a JIT). Pure, so it is tested without a GPU.
GpuCode classify_gpu_code(int compute_capability, bool probe_ok, int binary_version,
                          const std::vector<int>& sass, const std::vector<int>& ptx);

// Asks the driver for `device`; leaves the calling thread's current context
// as it was. Never throws: a failed query is FDK_GPU_CODE_NONE with `why`.
GpuCode probe_gpu_code(int device) noexcept;

}  // namespace fdk::cuda
