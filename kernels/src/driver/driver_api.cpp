#include "driver_api.hpp"

#include <mutex>

#include "fdk/core/error.hpp"

#if defined(_WIN32)
#include <windows.h>
#else
#include <dlfcn.h>
#endif

namespace fdk::cuda {
namespace {

struct Loaded {
  DriverApi api;
  bool ok = false;
  int version = 0;
  std::string error;
};

// The system's driver only: on Windows from System32 (never the current
// or the application's folder, where a planted nvcuda.dll would win); on
// Linux by its SONAME, which the dynamic loader finds where the driver
// installed it.
void* open_driver() {
#if defined(_WIN32)
  return reinterpret_cast<void*>(LoadLibraryExW(L"nvcuda.dll", nullptr, LOAD_LIBRARY_SEARCH_SYSTEM32));
#else
  return dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
#endif
}

void* symbol(void* library, const char* name) {
#if defined(_WIN32)
  return reinterpret_cast<void*>(GetProcAddress(reinterpret_cast<HMODULE>(library), name));
#else
  return dlsym(library, name);
#endif
}

std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

// The first driver branch that supports a CUDA major version, for messages
// (users know their driver by this number, from nvidia-smi).
std::string driver_branch(int v) {
  if (v >= 13000) return "580";
  if (v >= 12000) return "525";
  return "450";
}

#if defined(_WIN32)
constexpr const char* kDriverFile = "nvcuda.dll";
#else
constexpr const char* kDriverFile = "libcuda.so.1";
#endif

Loaded load() {
  Loaded l;
  void* library = open_driver();  // kept for the life of the process
  if (!library) {
#if defined(_WIN32)
    l.error = "the NVIDIA driver is not installed (nvcuda.dll not found in the system folder)";
#else
    l.error = "the NVIDIA driver is not installed (libcuda.so.1 not found)";
#endif
    return l;
  }
  DriverApi& a = l.api;
  const char* missing = nullptr;
#define FDK_DRIVER_BIND(name, sym)                                   \
  a.name = reinterpret_cast<decltype(a.name)>(symbol(library, sym)); \
  if (!a.name && !missing) missing = sym;
  FDK_DRIVER_FUNCTIONS(FDK_DRIVER_BIND)
#undef FDK_DRIVER_BIND
  if (a.cuDriverGetVersion && a.cuDriverGetVersion(&l.version) != CUDA_SUCCESS) l.version = 0;
  if (missing) {
    // A library new enough by its version that still lacks an entry point
    // is not NVIDIA's own (a wrapper of another system's driver, such as
    // wine-staging's nvcuda.dll): "update the driver" would not help.
    const std::string needed = "CUDA " + version_text(driver_required()) + ", NVIDIA driver " +
                               driver_branch(driver_required()) + " or newer";
    if (l.version >= driver_required())
      l.error = std::string(kDriverFile) + " reports CUDA " + version_text(l.version) + " yet lacks " + missing +
                ": it is not the NVIDIA driver itself (a wrapper, such as Wine's?); this build of fdk needs "
                "NVIDIA's own driver for " + needed;
    else
      l.error = std::string("the NVIDIA driver is too old: it lacks ") + missing +
                " (this build of fdk needs a driver for " + needed + ")";
    return l;
  }
  const CUresult init = a.cuInit(0);
  if (init == CUDA_ERROR_STUB_LIBRARY) {
    l.error = "libcuda.so.1 is the CUDA toolkit's stub, not the NVIDIA driver (install the driver, or take the "
              "toolkit's stubs folder off the library path)";
    return l;
  }
  if (init == CUDA_ERROR_NO_DEVICE) {
    l.error = "no CUDA device: the NVIDIA driver is loaded but found no GPU";
    return l;
  }
  if (init != CUDA_SUCCESS) {
    const char* name = nullptr;
    if (a.cuGetErrorName(init, &name) != CUDA_SUCCESS || !name) name = "unknown error";
    l.error = std::string("the NVIDIA driver failed to initialise (cuInit: ") + name + ")";
    return l;
  }
  if (l.version < driver_required()) {
    l.error = "the NVIDIA driver supports CUDA " + version_text(l.version) + "; this build of fdk needs CUDA " +
              version_text(driver_required()) + " (NVIDIA driver " + driver_branch(driver_required()) +
              " or newer): update the driver";
    return l;
  }
  l.ok = true;
  return l;
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

}  // namespace

int driver_required() noexcept { return FDK_CUDA_DRIVER_REQUIRED; }

const DriverApi* driver() noexcept {
  try {
    const Loaded& l = loaded();
    return l.ok ? &l.api : nullptr;
  } catch (...) {
    return nullptr;
  }
}

const std::string& driver_error() noexcept {
  static const std::string out_of_memory = "out of memory while loading the NVIDIA driver";
  try {
    return loaded().error;
  } catch (...) {
    return out_of_memory;
  }
}

int driver_version() noexcept {
  try {
    return loaded().version;
  } catch (...) {
    return 0;
  }
}

const DriverApi& cu() {
  const DriverApi* api = driver();
  if (!api) fail(FDK_ERROR_BACKEND_UNAVAILABLE, driver_error());
  return *api;
}

}  // namespace fdk::cuda
