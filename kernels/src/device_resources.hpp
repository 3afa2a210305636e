// RAII for what the CUDA backend holds: device and pinned buffers, streams,
// events, cuFFT plans, texture objects, and a guard that puts the host
// application's current device back.
#pragma once
#include <cuda_runtime.h>
#include <cufft.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "cuda_check.hpp"
#include "cufft_loader.hpp"

namespace fdk::cuda {

class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    check(cudaGetDevice(&previous_), "cudaGetDevice");
    if (previous_ != device) check(cudaSetDevice(device), "cudaSetDevice");
  }
  ~DeviceGuard() { cudaSetDevice(previous_); }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

// For an object that owns device resources: enter() makes its device current
// and remembers the host's, leave() and the destructor put the host's back.
class DeviceScope {
 public:
  explicit DeviceScope(int device) : device_(device) { enter(); }
  ~DeviceScope() { leave(); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  void enter() {
    if (entered_) return;
    check(cudaGetDevice(&previous_), "cudaGetDevice");
    if (previous_ != device_) check(cudaSetDevice(device_), "cudaSetDevice");
    entered_ = true;
  }
  void leave() noexcept {
    if (!entered_) return;
    if (previous_ != device_) cudaSetDevice(previous_);
    entered_ = false;
  }

 private:
  int device_;
  int previous_ = 0;
  bool entered_ = false;
};

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) { resize(count); }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  // Reallocates only to grow; contents are not kept.
  void resize(size_t count) {
    if (count <= count_) return;
    reset();
    void* p = nullptr;
    check(cudaMalloc(&p, count * sizeof(T)), "cudaMalloc");
    ptr_ = static_cast<T*>(p);
    count_ = count;
  }
  void reset() {
    if (ptr_) cudaFree(ptr_);
    ptr_ = nullptr;
    count_ = 0;
  }
  T* get() const { return ptr_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  size_t count_ = 0;
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
    check(cudaHostAlloc(&p, count * sizeof(T), cudaHostAllocPortable), "cudaHostAlloc");
    ptr_ = static_cast<T*>(p);
    count_ = count;
  }
  void reset() {
    if (ptr_) cudaFreeHost(ptr_);
    ptr_ = nullptr;
    count_ = 0;
  }
  T* get() const { return ptr_; }
  size_t size() const { return count_; }

 private:
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

class Stream {
 public:
  // priority: +1 the device's highest, -1 its lowest, 0 the default.
  explicit Stream(int priority = 0) {
    int least = 0, greatest = 0;
    check(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange");
    const int p = priority > 0 ? greatest : priority < 0 ? least : 0;
    check(cudaStreamCreateWithPriority(&s_, cudaStreamNonBlocking, p), "cudaStreamCreate");
  }
  ~Stream() { cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  void synchronize() const { check(cudaStreamSynchronize(s_), "cudaStreamSynchronize"); }

 private:
  cudaStream_t s_{};
};

class Event {
 public:
  explicit Event(bool timing = false) {
    check(cudaEventCreateWithFlags(&e_, timing ? cudaEventDefault : cudaEventDisableTiming), "cudaEventCreate");
  }
  ~Event() { cudaEventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(cudaStream_t s) { check(cudaEventRecord(e_, s), "cudaEventRecord"); }
  void synchronize() const { check(cudaEventSynchronize(e_), "cudaEventSynchronize"); }
  // True once the work before the last record() is done.
  bool ready() const {
    const cudaError_t r = cudaEventQuery(e_);
    if (r == cudaErrorNotReady) {
      // "Not ready" is no failure: keep it out of cudaGetLastError.
      if (cudaPeekAtLastError() == cudaErrorNotReady) cudaGetLastError();
      return false;
    }
    check(r, "cudaEventQuery");
    return true;
  }
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_{};
};

// Sums the device time of bracketed work (kernels) with timing events;
// collect() once the stream has passed them. One thread launches, any
// thread may collect.
class KernelClock {
 public:
  void begin(cudaStream_t s) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) free_.emplace_back(std::make_unique<Event>(true), std::make_unique<Event>(true));
    pending_.push_back(std::move(free_.back()));
    free_.pop_back();
    pending_.back().first->record(s);
  }
  void end(cudaStream_t s) {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.back().second->record(s);
  }
  void collect() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& p : pending_) {
      p.second->synchronize();
      float ms = 0;
      check(cudaEventElapsedTime(&ms, p.first->get(), p.second->get()), "cudaEventElapsedTime");
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

class FftPlan {
 public:
  FftPlan() = default;
  ~FftPlan() { reset(); }
  FftPlan(const FftPlan&) = delete;
  FftPlan& operator=(const FftPlan&) = delete;
  // Batched 1-D real transforms of length n over `batch` rows n apart
  // (forward: real rows of n, complex rows of n/2+1).
  void make(int n, int batch, cufftType type, cudaStream_t stream) {
    reset();
    int dims[1] = {n};
    const int complex_stride = n / 2 + 1;
    const bool forward = type == CUFFT_R2C;
    const CufftApi* fft = cufft_api();
    if (!fft) fail(FDK_ERROR_BACKEND_UNAVAILABLE, cufft_load_error());
    check(fft->plan_many(&plan_, 1, dims, nullptr, 1, forward ? n : complex_stride, nullptr, 1,
                         forward ? complex_stride : n, type, batch),
          "cufftPlanMany");
    valid_ = true;
    check(fft->set_stream(plan_, stream), "cufftSetStream");
  }
  // Batched 1-D real transforms of length n down the `columns` columns of
  // a row-major image (element (row j, column c) at j * columns + c; the
  // complex side has n/2+1 rows of `columns`).
  void make_columns(int n, int columns, cufftType type, cudaStream_t stream) {
    reset();
    int dims[1] = {n};
    int real_embed[1] = {n}, complex_embed[1] = {n / 2 + 1};
    const bool forward = type == CUFFT_R2C;
    const CufftApi* fft = cufft_api();
    if (!fft) fail(FDK_ERROR_BACKEND_UNAVAILABLE, cufft_load_error());
    check(fft->plan_many(&plan_, 1, dims, forward ? real_embed : complex_embed, columns, 1,
                         forward ? complex_embed : real_embed, columns, 1, type, columns),
          "cufftPlanMany (columns)");
    valid_ = true;
    check(fft->set_stream(plan_, stream), "cufftSetStream");
  }
  void reset() {
    if (valid_) cufft_api()->destroy(plan_);
    valid_ = false;
  }
  cufftHandle get() const { return plan_; }

 private:
  cufftHandle plan_{};
  bool valid_ = false;
};

class TextureObject {
 public:
  TextureObject() = default;
  ~TextureObject() { reset(); }
  TextureObject(TextureObject&& o) noexcept : tex_(std::exchange(o.tex_, 0)) {}
  TextureObject& operator=(TextureObject&& o) noexcept {
    if (this != &o) {
      reset();
      tex_ = std::exchange(o.tex_, 0);
    }
    return *this;
  }
  // A 2-D bilinear texture over pitched linear memory, unnormalised
  // coordinates, clamped at the edges.
  void make_pitch2d(void* data, cudaChannelFormatDesc desc, size_t width, size_t height, size_t pitch_bytes) {
    reset();
    cudaResourceDesc res{};
    res.resType = cudaResourceTypePitch2D;
    res.res.pitch2D.devPtr = data;
    res.res.pitch2D.desc = desc;
    res.res.pitch2D.width = width;
    res.res.pitch2D.height = height;
    res.res.pitch2D.pitchInBytes = pitch_bytes;
    cudaTextureDesc td{};
    td.addressMode[0] = cudaAddressModeClamp;
    td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModeLinear;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 0;
    check(cudaCreateTextureObject(&tex_, &res, &td, nullptr), "cudaCreateTextureObject");
  }
  void reset() {
    if (tex_) cudaDestroyTextureObject(tex_);
    tex_ = 0;
  }
  cudaTextureObject_t get() const { return tex_; }

 private:
  cudaTextureObject_t tex_ = 0;
};

}  // namespace fdk::cuda
