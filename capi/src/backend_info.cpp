// fdk_get_backend_info: what this build and this machine offer, asked
// before any handle exists (an integrator's installer or a support
// dialogue), and the same test the AUTO backend choice makes.
#include <fdk/fdk.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "context.hpp"
#ifdef FDK_HAVE_CUDA
#include "fdk/kernels/cuda_backend.hpp"
#endif

namespace {

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
    if (info->struct_size != sizeof(fdk_backend_info))
      fdk::fail(FDK_ERROR_STRUCT_SIZE, "fdk_backend_info->struct_size must be sizeof(fdk_backend_info)");
    fdk_backend_info out{};
    out.struct_size = sizeof out;
#ifdef FDK_HAVE_CUDA
    const fdk::cuda::BuildAndDevices found = fdk::cuda::describe_build_and_devices();
    out.cuda_built = 1;
    out.cuda_usable = found.usable ? 1 : 0;
    for (int arch : found.sass)
      if (out.num_sass < FDK_MAX_GPU_ARCHS) out.sass[out.num_sass++] = arch;
    out.ptx = found.ptx;
    out.num_devices = static_cast<int32_t>(found.devices.size());
    for (size_t d = 0; d < found.devices.size() && d < FDK_MAX_DEVICES; ++d) {
      out.compute_capability[d] = found.devices[d].compute_capability;
      out.code[d] = found.devices[d].code;
      out.code_arch[d] = found.devices[d].arch;
    }
    if (!found.usable) set_message(out, found.why);
#else
    set_message(out, "this build of fdk has no CUDA backend (built without the CUDA toolkit)");
#endif
    *info = out;
  });
}

}  // extern "C"
