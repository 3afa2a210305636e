// fdk_get_backend_info: what this build and this machine offer, asked
// before any handle exists (an integrator's installer or a support
// dialogue), and the same test the AUTO backend choice makes.
#include <fdk/fdk.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "context.hpp"
#ifdef FDK_HAVE_CUDA
#include "fdk/kernels/cuda_backend.hpp"
#endif

namespace {

constexpr uint32_t kBackendInfoSize04 = offsetof(fdk_backend_info, driver_version);

void set_message(fdk_backend_info& info, const std::string& text) {
  const size_t n = std::min(text.size(), sizeof info.message - 1);
  std::memcpy(info.message, text.data(), n);
  info.message[n] = '\0';
}

}  // namespace

extern "C" {

fdk_status fdk_get_backend_info(fdk_backend_info* info) {
  return fdk::capi::guarded(nullptr, [&] {
    if (!info) fdk::fail(FDK_ERROR_INVALID_ARGUMENT, "fdk_backend_info is NULL");
    // 0.4's struct ended at message; a caller built against it gets that
    // much (libgit2's versioned structs: appended fields, older sizes kept).
    const uint32_t size = info->struct_size;
    if (size != sizeof(fdk_backend_info) && size != kBackendInfoSize04)
      fdk::fail(FDK_ERROR_STRUCT_SIZE, "fdk_backend_info->struct_size must be sizeof(fdk_backend_info)");
    fdk_backend_info out{};
    out.struct_size = size;
#ifdef FDK_HAVE_CUDA
    const fdk::cuda::BuildAndDevices found = fdk::cuda::describe_build_and_devices();
    out.cuda_built = 1;
    out.cuda_usable = found.usable ? 1 : 0;
    for (int arch : found.sass)
      if (out.num_sass < FDK_MAX_GPU_ARCHS) out.sass[out.num_sass++] = arch;
    out.ptx = found.ptx;
    out.driver_version = found.driver_version;
    out.driver_required = found.driver_required;
    out.num_devices = static_cast<int32_t>(found.devices.size());
    for (size_t d = 0; d < found.devices.size() && d < FDK_MAX_DEVICES; ++d) {
      out.compute_capability[d] = found.devices[d].compute_capability;
      out.code[d] = found.devices[d].code;
      out.code_arch[d] = found.devices[d].arch;
    }
    if (!found.usable) set_message(out, found.why);
#else
    set_message(out, "this build of fdk has no CUDA backend (it was built without nvcc): use a build with the CUDA backend");
#endif
    std::memcpy(info, &out, size);
  });
}

}  // extern "C"
