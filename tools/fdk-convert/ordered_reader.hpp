// fdk-convert's projection decoding: worker threads read and correct views
// ahead of the reconstruction, handed out in index order.
#pragma once

#include <fdk/adapters/projection_source.hpp>

#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace fdk_convert {

// Decodes projections on worker threads, handing them out in index order
// through a ring of `depth` slots (bounded memory). It reads the views
// first, first + step, ... (one rank's share); get and release take the
// ordinal k of view first + k * step (the index itself for a plain run).
class OrderedReader {
 public:
  OrderedReader(const fdk::adapters::ProjectionSource& folder, int workers, int depth,
                int first = 0, int step = 1)
      : folder_(folder), depth_(depth), first_(first), step_(step),
        items_(folder.count() > first ? (folder.count() - first + step - 1) / step : 0),
        slots_(static_cast<size_t>(depth)) {
    const size_t pixels = static_cast<size_t>(folder.width()) * folder.height();
    for (Slot& s : slots_) s.data.resize(pixels);
    for (int w = 0; w < workers; ++w) threads_.emplace_back([this] { work(); });
  }
  ~OrderedReader() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  // Blocks until item i is decoded; rethrows its error.
  const float* get(int i, size_t* clamped) {
    Slot& s = slots_[static_cast<size_t>(i % depth_)];
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return (s.ready && s.index == i) || stop_; });
    if (s.error) std::rethrow_exception(s.error);
    *clamped = s.clamped;
    return s.data.data();
  }
  void release(int i) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      Slot& s = slots_[static_cast<size_t>(i % depth_)];
      s.ready = false;
      s.index = -1;
      released_ = i + 1;
    }
    cv_.notify_all();
  }

 private:
  struct Slot {
    std::vector<float> data;
    int index = -1;
    bool ready = false;
    size_t clamped = 0;
    std::exception_ptr error;
  };

  void work() {
    const std::unique_ptr<fdk::adapters::ProjectionSource::Workspace> ws = folder_.make_workspace();
    for (;;) {
      int i;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        if (stop_ || next_ >= items_) return;
        i = next_++;
        cv_.wait(lock, [&] { return stop_ || i < released_ + depth_; });
        if (stop_) return;
      }
      Slot& s = slots_[static_cast<size_t>(i % depth_)];
      std::exception_ptr error;
      size_t clamped = 0;
      try {
        clamped = folder_.read(first_ + i * step_, s.data.data(), *ws);
      } catch (...) {
        error = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        s.index = i;
        s.clamped = clamped;
        s.error = error;
        s.ready = true;
      }
      cv_.notify_all();
    }
  }

  const fdk::adapters::ProjectionSource& folder_;
  const int depth_, first_, step_, items_;
  std::vector<Slot> slots_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable cv_;
  int next_ = 0, released_ = 0;
  bool stop_ = false;
};

}  // namespace fdk_convert
