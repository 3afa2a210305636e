#include "context.hpp"

#include <mutex>
#include <vector>

#include "../cuda_check.hpp"

namespace fdk::cuda {

CUcontext primary_context(int ordinal) {
  static std::mutex mutex;
  static std::vector<CUcontext> contexts;
  const DriverApi& d = cu();
  std::lock_guard<std::mutex> lock(mutex);
  if (ordinal < 0) fail(FDK_ERROR_INVALID_ARGUMENT, "negative CUDA device ordinal");
  if (static_cast<size_t>(ordinal) < contexts.size() && contexts[static_cast<size_t>(ordinal)])
    return contexts[static_cast<size_t>(ordinal)];
  CUdevice device = 0;
  check(d.cuDeviceGet(&device, ordinal), "cuDeviceGet");
  CUcontext context = nullptr;
  check(d.cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  if (contexts.size() <= static_cast<size_t>(ordinal)) contexts.resize(static_cast<size_t>(ordinal) + 1, nullptr);
  contexts[static_cast<size_t>(ordinal)] = context;
  return context;
}

CUcontext current_context() noexcept {
  CUcontext c = nullptr;
  if (const DriverApi* d = driver())
    if (d->cuCtxGetCurrent(&c) != CUDA_SUCCESS) c = nullptr;
  return c;
}

void DeviceScope::enter() {
  if (entered_) return;
  const CUcontext wanted = primary_context(ordinal_);
  check(cu().cuCtxGetCurrent(&previous_), "cuCtxGetCurrent");
  switched_ = previous_ != wanted;
  if (switched_) check(cu().cuCtxSetCurrent(wanted), "cuCtxSetCurrent");
  entered_ = true;
}

void DeviceScope::leave() noexcept {
  if (!entered_) return;
  if (switched_)
    if (const DriverApi* d = driver()) d->cuCtxSetCurrent(previous_);
  entered_ = false;
}

ContextScope::ContextScope(CUcontext context) noexcept {
  const DriverApi* d = driver();
  if (!d || !context || d->cuCtxGetCurrent(&previous_) != CUDA_SUCCESS) return;
  if (previous_ != context && d->cuCtxSetCurrent(context) == CUDA_SUCCESS) switched_ = true;
}

ContextScope::~ContextScope() {
  if (switched_) driver()->cuCtxSetCurrent(previous_);
}

}  // namespace fdk::cuda
