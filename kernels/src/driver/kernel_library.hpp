// The kernels libfdk carries: one fatbin (machine code for every GPU
// generation the build names, plus PTX for later ones) embedded in the
// library, loaded once with cuLibraryLoadData, and each kernel launched by
// name in the calling thread's current context (the driver loads the
// fitting image into a context on its first launch there).
#pragma once
#include <cuda.h>

#include <cstdint>
#include <type_traits>

namespace fdk::cuda {

#define FDK_KERNEL_NAMES(X)                                                                                 \
  X(bp_generic) X(bp_quads_aligned) X(bp_quads)                 \
  X(bp_pairs0_aligned) X(bp_pairs0)                           \
  X(bp_pairs1_aligned) X(bp_pairs1)                           \
  X(bp_pairs2_aligned) X(bp_pairs2)                           \
  X(bp_plane_pairs) X(pack_max4) X(pack_max1) X(pack_pairs_max) X(pack_half)        \
  X(pack_pairs_flip) X(pack_pairs) X(repeat_last_row)          \
  X(filter_rows) X(filter_columns) X(round_store_bands) X(preview_views) X(code_probe)

// A kernel of the fatbin; its entry point is named "fdk_" + the enumerator.
enum class Kernel : int {
#define FDK_KERNEL_ENUM(name) name,
  FDK_KERNEL_NAMES(FDK_KERNEL_ENUM)
#undef FDK_KERNEL_ENUM
      count
};

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

// The kernel's handle (the library is loaded on first use). Throws
// fdk::Error: BACKEND_UNAVAILABLE when the driver or the fatbin cannot be
// loaded.
CUkernel kernel_handle(Kernel k);

// Lets `k` have `bytes` of dynamic shared memory per block on the current
// device (the driver asks kernels to opt in above 48 KiB).
void allow_shared_bytes(Kernel k, unsigned bytes);

// The current context's device.
CUdevice current_device();

// Launches `k` on `stream` in the current context with `args` as its
// parameters, in order; `what` names it in an error.
void launch_kernel(Kernel k, Dim3 grid, Dim3 block, unsigned shared_bytes, CUstream stream, void** args,
                   const char* what);

// Parameters go by value as the driver copies them: trivially copyable
// values whose layout both compilers agree on (kernel_params.hpp pins the
// structs; scalars are fixed-width, pointers 64-bit).
template <class... Args>
void launch(Kernel k, Dim3 grid, Dim3 block, unsigned shared_bytes, CUstream stream, const char* what,
            const Args&... args) {
  static_assert((std::is_trivially_copyable_v<Args> && ...), "kernel parameters are copied bytewise");
  static_assert(((std::is_class_v<Args> || std::is_pointer_v<Args> || sizeof(Args) == 4 || sizeof(Args) == 8) && ...),
                "kernel parameters: structs, pointers or 32/64-bit scalars");
  void* pointers[sizeof...(Args) + 1] = {const_cast<void*>(static_cast<const void*>(&args))..., nullptr};
  launch_kernel(k, grid, block, shared_bytes, stream, pointers, what);
}

}  // namespace fdk::cuda
