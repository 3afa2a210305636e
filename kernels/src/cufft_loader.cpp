#include "cufft_loader.hpp"

#include <string>

#if defined(_WIN32)
#include <windows.h>
#else
#include <dlfcn.h>
#endif

namespace fdk::cuda {
namespace {

struct Loaded {
  CufftApi api{};
  bool ok = false;
  std::string error;
};

void* open_library() {
#if defined(_WIN32)
  for (const char* name : {"cufft64_12.dll", "cufft64_11.dll"})
    if (HMODULE h = LoadLibraryA(name)) return reinterpret_cast<void*>(h);
#else
  for (const char* name : {"libcufft.so.12", "libcufft.so.11", "libcufft.so"})
    if (void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return h;
#endif
  return nullptr;
}

void* symbol(void* library, const char* name) {
#if defined(_WIN32)
  return reinterpret_cast<void*>(GetProcAddress(reinterpret_cast<HMODULE>(library), name));
#else
  return dlsym(library, name);
#endif
}

template <class Fn>
bool bind(void* library, const char* name, Fn& fn, std::string& error) {
  fn = reinterpret_cast<Fn>(symbol(library, name));
  if (!fn) error = std::string("cuFFT lacks ") + name;
  return fn != nullptr;
}

Loaded load() {
  Loaded l;
  void* library = open_library();  // kept for the life of the process
  if (!library) {
#if defined(_WIN32)
    l.error = "cuFFT could not be loaded (cufft64_12.dll or cufft64_11.dll not found in the program's directory or on PATH)";
#else
    l.error = "cuFFT could not be loaded (libcufft.so.12 not found on the library path)";
#endif
    return l;
  }
  l.ok = bind(library, "cufftPlanMany", l.api.plan_many, l.error) &&
         bind(library, "cufftSetStream", l.api.set_stream, l.error) &&
         bind(library, "cufftExecR2C", l.api.exec_r2c, l.error) &&
         bind(library, "cufftExecC2R", l.api.exec_c2r, l.error) &&
         bind(library, "cufftDestroy", l.api.destroy, l.error);
  return l;
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

}  // namespace

const CufftApi* cufft_api() noexcept {
  try {
    return loaded().ok ? &loaded().api : nullptr;
  } catch (...) {
    return nullptr;
  }
}

const char* cufft_load_error() noexcept {
  try {
    return loaded().error.c_str();
  } catch (...) {
    return "cuFFT could not be loaded";
  }
}

}  // namespace fdk::cuda
