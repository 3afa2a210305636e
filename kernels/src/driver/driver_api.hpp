// The NVIDIA driver, loaded at run time: one table of the CUDA driver API
// entry points the backend calls, bound by their versioned names from
// libcuda.so.1 / nvcuda.dll (the system's copy only). Nothing of the CUDA
// toolkit is linked or loaded: cuda.h is read for its types alone, and the
// kernels travel inside libfdk as a fatbin (kernel_library.hpp).
#pragma once
#include <cuda.h>

#include <string>

namespace fdk::cuda {

// The oldest driver (its CUDA version, as cuDriverGetVersion) that loads the
// fatbin this library carries: the version of the nvcc that compiled it
// (kernels/CMakeLists.txt), for minor version compatibility covers only
// machine code within one major version and PTX needs a driver at least as
// new as its compiler.
int driver_required() noexcept;

// Field names are the functions' own: cuda.h maps the unversioned names to
// the versioned ones (cuMemAlloc -> cuMemAlloc_v2) in declarations and
// calls alike, and the loader binds each field to the symbol named here.
#define FDK_DRIVER_FUNCTIONS(X)                                   \
  X(cuInit, "cuInit")                                            \
  X(cuDriverGetVersion, "cuDriverGetVersion")                    \
  X(cuGetErrorName, "cuGetErrorName")                            \
  X(cuGetErrorString, "cuGetErrorString")                        \
  X(cuDeviceGetCount, "cuDeviceGetCount")                        \
  X(cuDeviceGet, "cuDeviceGet")                                  \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute")                \
  X(cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer")              \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")        \
  X(cuCtxGetCurrent, "cuCtxGetCurrent")                          \
  X(cuCtxSetCurrent, "cuCtxSetCurrent")                          \
  X(cuCtxGetDevice, "cuCtxGetDevice")                            \
  X(cuCtxEnablePeerAccess, "cuCtxEnablePeerAccess")              \
  X(cuCtxGetStreamPriorityRange, "cuCtxGetStreamPriorityRange")  \
  X(cuMemGetInfo, "cuMemGetInfo_v2")                             \
  X(cuMemAlloc, "cuMemAlloc_v2")                                 \
  X(cuMemFree, "cuMemFree_v2")                                   \
  X(cuMemHostAlloc, "cuMemHostAlloc")                            \
  X(cuMemFreeHost, "cuMemFreeHost")                              \
  X(cuMemcpyAsync, "cuMemcpyAsync")                              \
  X(cuMemcpy2DAsync, "cuMemcpy2DAsync_v2")                       \
  X(cuMemsetD8Async, "cuMemsetD8Async")                          \
  X(cuPointerGetAttribute, "cuPointerGetAttribute")              \
  X(cuStreamCreateWithPriority, "cuStreamCreateWithPriority")    \
  X(cuStreamDestroy, "cuStreamDestroy_v2")                       \
  X(cuStreamSynchronize, "cuStreamSynchronize")                  \
  X(cuStreamWaitEvent, "cuStreamWaitEvent")                      \
  X(cuEventCreate, "cuEventCreate")                              \
  X(cuEventDestroy, "cuEventDestroy_v2")                         \
  X(cuEventRecord, "cuEventRecord")                              \
  X(cuEventSynchronize, "cuEventSynchronize")                    \
  X(cuEventQuery, "cuEventQuery")                                \
  X(cuEventElapsedTime, "cuEventElapsedTime")                    \
  X(cuTexObjectCreate, "cuTexObjectCreate")                      \
  X(cuTexObjectDestroy, "cuTexObjectDestroy")                    \
  X(cuLibraryLoadData, "cuLibraryLoadData")                      \
  X(cuLibraryGetKernel, "cuLibraryGetKernel")                    \
  X(cuKernelGetFunction, "cuKernelGetFunction")                  \
  X(cuKernelSetAttribute, "cuKernelSetAttribute")                \
  X(cuFuncGetAttribute, "cuFuncGetAttribute")                    \
  X(cuLaunchHostFunc, "cuLaunchHostFunc")                        \
  X(cuLaunchKernel, "cuLaunchKernel")

struct DriverApi {
#define FDK_DRIVER_FIELD(name, symbol) decltype(&::name) name = nullptr;
  FDK_DRIVER_FUNCTIONS(FDK_DRIVER_FIELD)
#undef FDK_DRIVER_FIELD
  int version = 0;  // cuDriverGetVersion
};

// The driver, loaded and initialised once (cuInit), or null; then
// driver_error() says why in words a user can act on (no driver, the
// toolkit's stub library, a driver too old for this build, no GPU).
const DriverApi* driver() noexcept;
const std::string& driver_error() noexcept;
// The driver's CUDA version, or 0 when none could be loaded (also when it
// is too old: the version is still reported).
int driver_version() noexcept;

// The loaded driver; throws fdk::Error(BACKEND_UNAVAILABLE) with
// driver_error() when there is none.
const DriverApi& cu();

}  // namespace fdk::cuda
