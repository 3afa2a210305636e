// Device to host copies of slabs and planes (one_device.hpp): straight by
// DMA into page-locked memory, else through a ring of pinned bounce chunks
// copied out by CPU threads. One job shared by the resident and the
// streamed paths.

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>

#include "one_device.hpp"

namespace fdk::cuda {

namespace {

// True when the host address is page-locked (the device can DMA to it).
bool page_locked(const void* p) {
  unsigned type = 0;
  // Memory the driver does not know (pageable) is an error here, not a type.
  if (cu().cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dptr(p)) != CUDA_SUCCESS) return false;
  return type == CU_MEMORYTYPE_HOST;
}

}  // namespace

// Device to caller memory: straight by DMA when it is page-locked
// (fdk_alloc_host, or registered by the caller), else by DMA through a
// ring of pinned bounce chunks, kept up to kBounceChunks - 1 ahead of CPU
// threads (`copy_tasks`, at most the pool's) copying chunks out in order.
// With two chunks the DMA waited for each copy and the copy for each DMA,
// in turn.
void OneDevice::download(const float* src, size_t count, float* out, CUstream stream, int copy_tasks) {
  if (count == 0) return;
  if (page_locked(out) && page_locked(out + count - 1)) {
    copy_async(out, src, count * sizeof(float), stream, "cuMemcpyAsync (slab download into page-locked memory)");
    synchronize(stream, "cuStreamSynchronize (slab download)");
    return;
  }
  if (role_.fault.direct_reads_only)
    fail(FDK_ERROR_INTERNAL, "a slab download went through the bounce buffers (FaultPlan::direct_reads_only)");
  constexpr size_t ring = kBounceChunks;
  const size_t chunk = bounce_chunk_;
  const size_t chunks = (count + chunk - 1) / chunk;
  const auto floats = [&](size_t c) { return std::min(chunk, count - c * chunk); };
  size_t issued = 0;
  const auto issue = [&] {
    copy_async(bounce_.get() + issued % ring * chunk, src + issued * chunk, floats(issued) * sizeof(float), stream,
               "cuMemcpyAsync (slab download)");
    bounce_done_[issued % ring].record(stream);
    ++issued;
  };
  while (issued < std::min(chunks, ring)) issue();
  for (size_t c = 0; c < chunks; ++c) {
    bounce_done_[c % ring].synchronize();
    const float* from = bounce_.get() + c % ring * chunk;
    float* to = out + c * chunk;
    const size_t n = floats(c);
    const int tasks = std::max(1, std::min(pool_.size(), copy_tasks));
    pool_.parallel_for(tasks, [&](int t, int) {
      const size_t a = n * t / tasks, b = n * (t + 1) / tasks;
      std::memcpy(to + a, from + a, (b - a) * sizeof(float));
    });
    // Its chunk copied out, the buffer takes the next DMA.
    if (issued < chunks) issue();
  }
}

// Streaming: copies a computed slab out while the worker goes on.
void OneDevice::download_slab(const ScanModel& model, int buffer, int planes, float* out) {
  DeviceGuard guard(device_);
  const auto start = std::chrono::steady_clock::now();
  wait_event(download_stream_.get(), slab_ready_[static_cast<size_t>(buffer)].get(), "cuStreamWaitEvent (slab)");
  download(slab_buffers_[static_cast<size_t>(buffer)].get(), model.plane_floats() * static_cast<size_t>(planes), out,
           download_stream_.get(), kMaxCopyTasks);
  std::lock_guard<std::mutex> lock(timing_mutex_);
  download_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace fdk::cuda
