// fdk_alloc_host / fdk_free_host: buffers the caller pushes from and reads
// slabs into. Page-locked when a CUDA device is usable, so that the GPUs
// reach them by DMA: a slab read into one skips the library's bounce
// buffers and the host copy out of them, which bounds reads on several
// GPUs (docs/DECISIONS.md, "Several GPUs"). A registry of what was handed
// out lets fdk_free_host refuse a pointer it did not allocate instead of
// corrupting the heap.
#include <fdk/fdk.h>

#include <cstdlib>
#include <mutex>
#if defined(_WIN32)
#include <malloc.h>  // _aligned_malloc, _aligned_free
#endif
#include <string>
#include <unordered_map>

#include "context.hpp"
#ifdef FDK_HAVE_CUDA
#include "fdk/kernels/cuda_backend.hpp"
#endif

namespace {

constexpr size_t kAlignment = 64;  // a cache line; page-locked memory is page aligned

struct Registry {
  std::mutex mutex;
  std::unordered_map<void*, bool> page_locked;  // every live allocation
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: frees may come from other static destructors
  return *r;
}

// Windows' C runtime has no aligned_alloc (it cannot free such a block with
// free()): its blocks come from _aligned_malloc and go to _aligned_free.
void* aligned_host_alloc(size_t bytes) {
  const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
#if defined(_WIN32)
  return _aligned_malloc(rounded, kAlignment);
#else
  return std::aligned_alloc(kAlignment, rounded);
#endif
}

void aligned_host_free(void* p) {
#if defined(_WIN32)
  _aligned_free(p);
#else
  std::free(p);
#endif
}

}  // namespace

extern "C" {

fdk_status fdk_alloc_host(size_t bytes, void** out) {
  if (out) *out = nullptr;
  return fdk::capi::guarded(nullptr, [&] {
    if (!out) fdk::fail(FDK_ERROR_INVALID_ARGUMENT, "out is NULL");
    if (bytes == 0) fdk::fail(FDK_ERROR_INVALID_ARGUMENT, "bytes is 0");
    if (bytes > SIZE_MAX - kAlignment) fdk::fail(FDK_ERROR_OUT_OF_MEMORY, "cannot allocate " + std::to_string(bytes) + " bytes");
    void* p = nullptr;
    bool locked = false;
#ifdef FDK_HAVE_CUDA
    p = fdk::cuda::alloc_page_locked(bytes);
    locked = p != nullptr;
#endif
    if (!p) p = aligned_host_alloc(bytes);
    if (!p) fdk::fail(FDK_ERROR_OUT_OF_MEMORY, "cannot allocate " + std::to_string(bytes) + " bytes of host memory");
    try {
      std::lock_guard<std::mutex> lock(registry().mutex);
      registry().page_locked.emplace(p, locked);
    } catch (...) {
#ifdef FDK_HAVE_CUDA
      if (locked) fdk::cuda::free_page_locked(p);
#endif
      if (!locked) aligned_host_free(p);
      throw;
    }
    *out = p;
  });
}

fdk_status fdk_free_host(void* p) {
  if (!p) return FDK_OK;
  return fdk::capi::guarded(nullptr, [&] {
    bool locked;
    {
      std::lock_guard<std::mutex> lock(registry().mutex);
      auto it = registry().page_locked.find(p);
      if (it == registry().page_locked.end())
        fdk::fail(FDK_ERROR_INVALID_ARGUMENT, "the pointer was not allocated by fdk_alloc_host (or was freed already)");
      locked = it->second;
      registry().page_locked.erase(it);
    }
#ifdef FDK_HAVE_CUDA
    if (locked) {
      fdk::cuda::free_page_locked(p);
      return;
    }
#endif
    (void)locked;
    aligned_host_free(p);
  });
}

}  // extern "C"
