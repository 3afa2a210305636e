// RAII for what the CUDA backend holds, over the driver API: device and
// pinned buffers, streams, events, texture objects, and the copies between
// them. Each resource remembers the context it was made in and releases
// itself there, whichever thread destroys it.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "cuda_check.hpp"
#include "driver/context.hpp"

namespace fdk::cuda {

// Device addresses travel as typed pointers in host code (the kernels'
// parameters carry them as uint64_t): one address space (unified
// addressing, every 64-bit platform the driver supports).
static_assert(sizeof(void*) == sizeof(CUdeviceptr), "fdk's CUDA backend needs 64-bit pointers");
inline CUdeviceptr dptr(const void* p) { return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p)); }

// Copies on `stream`, the direction (host or device, this GPU or another)
// read from the addresses as cudaMemcpyDefault does.
inline void copy_async(void* dst, const void* src, size_t bytes, CUstream stream, const char* what) {
  if (bytes) check(cu().cuMemcpyAsync(dptr(dst), dptr(src), bytes, stream), what);
}
void copy_2d_async(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t width_bytes,
                   size_t height, CUstream stream, const char* what);
inline void zero_async(void* dst, size_t bytes, CUstream stream, const char* what) {
  if (bytes) check(cu().cuMemsetD8Async(dptr(dst), 0, bytes, stream), what);
}
// A copy that is done when the call returns (set-up uploads).
void copy_now(void* dst, const void* src, size_t bytes, const char* what);

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) { resize(count); }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)), context_(o.context_) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
      context_ = o.context_;
    }
    return *this;
  }
  // Reallocates only to grow; contents are not kept.
  void resize(size_t count) {
    if (count <= count_) return;
    reset();
    CUdeviceptr p = 0;
    check(cu().cuMemAlloc(&p, count * sizeof(T)), "cuMemAlloc");
    ptr_ = reinterpret_cast<T*>(static_cast<uintptr_t>(p));
    count_ = count;
    context_ = current_context();
  }
  void reset() noexcept {
    if (ptr_) {
      ContextScope scope(context_);
      driver()->cuMemFree(dptr(ptr_));
    }
    ptr_ = nullptr;
    count_ = 0;
  }
  T* get() const { return ptr_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  size_t count_ = 0;
  CUcontext context_ = nullptr;
};

template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer() { reset(); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void resize(size_t count) {
    if (count <= count_) return;
    reset();
    void* p = nullptr;
    // Portable: pinned for every device, so any GPU's copies run at DMA speed.
    check(cu().cuMemHostAlloc(&p, count * sizeof(T), CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc");
    ptr_ = static_cast<T*>(p);
    count_ = count;
    context_ = current_context();
  }
  void reset() noexcept {
    if (ptr_) {
      ContextScope scope(context_);
      driver()->cuMemFreeHost(ptr_);
    }
    ptr_ = nullptr;
    count_ = 0;
  }
  T* get() const { return ptr_; }
  size_t size() const { return count_; }

 private:
  T* ptr_ = nullptr;
  size_t count_ = 0;
  CUcontext context_ = nullptr;
};

// Host windows of one size, each pinned on its own. Pinning appears to
// hold the driver: 3 GiB pinned in one allocation, on a thread of its own,
// still stopped every filter lane for over a second; a window at a time,
// about 10 MiB, did not (OneDevice::reserve_staging_in_background).
class PinnedWindows {
 public:
  // At least `count` windows of at least `floats` each. `pace`: after each
  // window, wait as long as pinning it took, for a caller in the background.
  void reserve(size_t count, size_t floats, bool pace = false) {
    if (floats > floats_) {
      windows_.clear();
      floats_ = floats;
    }
    while (windows_.size() < count) {
      const auto start = std::chrono::steady_clock::now();
      auto w = std::make_unique<PinnedBuffer<float>>();
      w->resize(floats_);
      windows_.push_back(std::move(w));
      if (pace) std::this_thread::sleep_for(std::chrono::steady_clock::now() - start);
    }
  }
  bool covers(size_t count, size_t floats) const { return floats <= floats_ && windows_.size() >= count; }
  float* window(size_t i) const { return windows_[i]->get(); }

 private:
  std::vector<std::unique_ptr<PinnedBuffer<float>>> windows_;
  size_t floats_ = 0;
};

class Stream {
 public:
  // priority: +1 the device's highest, -1 its lowest, 0 the default.
  explicit Stream(int priority = 0) {
    int least = 0, greatest = 0;
    check(cu().cuCtxGetStreamPriorityRange(&least, &greatest), "cuCtxGetStreamPriorityRange");
    const int p = priority > 0 ? greatest : priority < 0 ? least : 0;
    check(cu().cuStreamCreateWithPriority(&s_, CU_STREAM_NON_BLOCKING, p), "cuStreamCreate");
    context_ = current_context();
  }
  ~Stream() {
    ContextScope scope(context_);
    driver()->cuStreamDestroy(s_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  CUstream get() const { return s_; }
  void synchronize() const { check(cu().cuStreamSynchronize(s_), "cuStreamSynchronize"); }

 private:
  CUstream s_{};
  CUcontext context_ = nullptr;
};

inline void synchronize(CUstream s, const char* what) { check(cu().cuStreamSynchronize(s), what); }
inline void wait_event(CUstream s, CUevent e, const char* what) { check(cu().cuStreamWaitEvent(s, e, 0), what); }

class Event {
 public:
  explicit Event(bool timing = false) {
    check(cu().cuEventCreate(&e_, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    context_ = current_context();
  }
  ~Event() {
    ContextScope scope(context_);
    driver()->cuEventDestroy(e_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(CUstream s) { check(cu().cuEventRecord(e_, s), "cuEventRecord"); }
  void synchronize() const { check(cu().cuEventSynchronize(e_), "cuEventSynchronize"); }
  // True once the work before the last record() is done.
  bool ready() const {
    const CUresult r = cu().cuEventQuery(e_);
    if (r == CUDA_ERROR_NOT_READY) return false;
    check(r, "cuEventQuery");
    return true;
  }
  CUevent get() const { return e_; }

 private:
  CUevent e_{};
  CUcontext context_ = nullptr;
};

// Sums the device time of bracketed work (kernels) with timing events;
// collect() once the stream has passed them. One thread launches, any
// thread may collect.
class KernelClock {
 public:
  void begin(CUstream s) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) free_.emplace_back(std::make_unique<Event>(true), std::make_unique<Event>(true));
    pending_.push_back(std::move(free_.back()));
    free_.pop_back();
    pending_.back().first->record(s);
  }
  void end(CUstream s) {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.back().second->record(s);
  }
  void collect() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& p : pending_) {
      p.second->synchronize();
      float ms = 0;
      check(cu().cuEventElapsedTime(&ms, p.first->get(), p.second->get()), "cuEventElapsedTime");
      seconds_ += ms * 1e-3;
      free_.push_back(std::move(p));
    }
    pending_.clear();
  }
  double seconds() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return seconds_;
  }

 private:
  mutable std::mutex mutex_;
  using Pair = std::pair<std::unique_ptr<Event>, std::unique_ptr<Event>>;
  std::vector<Pair> pending_, free_;
  double seconds_ = 0;
};

// A texel's layout: its channels' format and how many (a texture over
// half4, half2 or float texels).
struct TexelLayout {
  CUarray_format format;
  unsigned channels;
};
constexpr TexelLayout kHalf4{CU_AD_FORMAT_HALF, 4};
constexpr TexelLayout kHalf2{CU_AD_FORMAT_HALF, 2};
constexpr TexelLayout kFloat1{CU_AD_FORMAT_FLOAT, 1};

class TextureObject {
 public:
  TextureObject() = default;
  ~TextureObject() { reset(); }
  TextureObject(TextureObject&& o) noexcept : tex_(std::exchange(o.tex_, 0)), context_(o.context_) {}
  TextureObject& operator=(TextureObject&& o) noexcept {
    if (this != &o) {
      reset();
      tex_ = std::exchange(o.tex_, 0);
      context_ = o.context_;
    }
    return *this;
  }
  // A 2-D bilinear texture over pitched linear memory, unnormalised
  // coordinates, clamped at the edges; reads return floats.
  void make_pitch2d(void* data, TexelLayout texel, size_t width, size_t height, size_t pitch_bytes);
  void reset() noexcept {
    if (tex_) {
      ContextScope scope(context_);
      driver()->cuTexObjectDestroy(tex_);
    }
    tex_ = 0;
  }
  uint64_t get() const { return tex_; }

 private:
  CUtexObject tex_ = 0;
  CUcontext context_ = nullptr;
};

}  // namespace fdk::cuda
