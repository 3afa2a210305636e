#include "kernel_library.hpp"

#include <mutex>
#include <string>

#include "../cuda_check.hpp"

// The fatbin, placed in libfdk by the build (embed_fatbin.S or its C
// array, kernels/CMakeLists.txt).
extern "C" const unsigned char fdk_kernels_fatbin[];

namespace fdk::cuda {
namespace {

const char* const kNames[] = {
#define FDK_KERNEL_NAME(name) "fdk_" #name,
    FDK_KERNEL_NAMES(FDK_KERNEL_NAME)
#undef FDK_KERNEL_NAME
};
static_assert(sizeof kNames / sizeof kNames[0] == static_cast<size_t>(Kernel::count), "one name per kernel");

struct Library {
  CUlibrary library = nullptr;
  CUkernel kernels[static_cast<size_t>(Kernel::count)] = {};
  CUresult status = CUDA_SUCCESS;
  std::string what;
};

Library load() {
  Library l;
  const DriverApi& d = cu();
  l.status = d.cuLibraryLoadData(&l.library, fdk_kernels_fatbin, nullptr, nullptr, 0, nullptr, nullptr, 0);
  if (l.status != CUDA_SUCCESS) {
    l.what = "cuLibraryLoadData (fdk's GPU code)";
    return l;
  }
  for (size_t k = 0; k < static_cast<size_t>(Kernel::count); ++k) {
    l.status = d.cuLibraryGetKernel(&l.kernels[k], l.library, kNames[k]);
    if (l.status != CUDA_SUCCESS) {
      l.what = std::string("cuLibraryGetKernel (") + kNames[k] + ")";
      return l;
    }
  }
  return l;
}

}  // namespace

CUkernel kernel_handle(Kernel k) {
  static std::once_flag once;
  static Library library;
  // The driver first, so that its absence is reported as itself.
  cu();
  std::call_once(once, [] { library = load(); });
  if (library.status != CUDA_SUCCESS)
    fail(FDK_ERROR_BACKEND_UNAVAILABLE, library.what + ": " + describe(library.status));
  return library.kernels[static_cast<size_t>(k)];
}

CUdevice current_device() {
  CUdevice device = 0;
  check(cu().cuCtxGetDevice(&device), "cuCtxGetDevice");
  return device;
}

void allow_shared_bytes(Kernel k, unsigned bytes) {
  constexpr unsigned kDefault = 48u << 10;
  if (bytes <= kDefault) return;
  check(cu().cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(bytes),
                                  kernel_handle(k), current_device()),
        "cuKernelSetAttribute (dynamic shared memory)");
}

void launch_kernel(Kernel k, Dim3 grid, Dim3 block, unsigned shared_bytes, CUstream stream, void** args,
                   const char* what) {
  // A CUkernel launches as a function of the current context.
  const CUfunction f = reinterpret_cast<CUfunction>(kernel_handle(k));
  check(cu().cuLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, shared_bytes, stream, args, nullptr),
        what);
}

}  // namespace fdk::cuda
