#include "fdk/core/slab_prefetch.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

namespace fdk {

SlabPrefetch::SlabPrefetch(std::vector<std::array<int, 2>> slabs, int buffers, int workers)
    : owner_(static_cast<size_t>(buffers), -1),
      buffers_per_worker_(std::max(1, buffers / std::max(1, workers))),
      retired_(static_cast<size_t>(std::max(1, workers)), 0) {
  for (const auto& r : slabs) slabs_.push_back(Slab(r));
}

int SlabPrefetch::slab_of(int y0, int y1) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t s = 0; s < slabs_.size(); ++s)
    if (slabs_[s].range[0] == y0 && slabs_[s].range[1] == y1) return static_cast<int>(s);
  slabs_.push_back(Slab({y0, y1}));
  return static_cast<int>(slabs_.size()) - 1;
}

std::array<int, 2> SlabPrefetch::range(int slab) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return slabs_[static_cast<size_t>(slab)].range;
}

void SlabPrefetch::preset_ready(int slab, int buffer) {
  std::lock_guard<std::mutex> lock(mutex_);
  Slab& s = slabs_[static_cast<size_t>(slab)];
  s.state = State::Ready;
  s.buffer = buffer;
  owner_[static_cast<size_t>(buffer)] = slab;
}

int SlabPrefetch::free_buffer(int worker) const {
  const int first = worker * buffers_per_worker_;
  for (int b = first; b < first + buffers_per_worker_ && b < static_cast<int>(owner_.size()); ++b)
    if (owner_[static_cast<size_t>(b)] < 0) return b;
  return -1;
}

void SlabPrefetch::make_idle(Slab& s) {
  if (s.buffer >= 0) owner_[static_cast<size_t>(s.buffer)] = -1;
  s.buffer = -1;
  s.state = State::Idle;
}

bool SlabPrefetch::pick(Task& task, int worker) {
  if (retired_[static_cast<size_t>(worker)]) return false;
  auto idle = [&](int s) { return slabs_[static_cast<size_t>(s)].state == State::Idle; };
  int slab = -1, buffer = free_buffer(worker);
  if (wanted_ >= 0 && idle(wanted_)) {
    slab = wanted_;
    if (buffer < 0) {
      // The reader waits: a prefetched slab nobody asked for yet gives way.
      for (size_t s = 0; s < slabs_.size() && buffer < 0; ++s) {
        Slab& other = slabs_[s];
        if (other.state != State::Ready || worker_of(other.buffer) != worker) continue;
        if (std::find(requested_.begin(), requested_.end(), static_cast<int>(s)) != requested_.end()) continue;
        buffer = other.buffer;
        make_idle(other);
      }
    }
  } else if (buffer >= 0) {
    for (int r : requested_)
      if (slab < 0 && idle(r)) slab = r;
    const int end = std::min(static_cast<int>(slabs_.size()), last_read_ + 1 + static_cast<int>(owner_.size()));
    for (int s = last_read_ + 1; s < end && slab < 0; ++s)
      if (idle(s)) slab = s;
  }
  if (slab < 0 || buffer < 0) return false;
  requested_.erase(std::remove(requested_.begin(), requested_.end(), slab), requested_.end());
  Slab& chosen = slabs_[static_cast<size_t>(slab)];
  chosen.state = State::Computing;
  chosen.buffer = buffer;
  owner_[static_cast<size_t>(buffer)] = slab;
  task = Task{slab, buffer};
  return true;
}

bool SlabPrefetch::next_task(Task& task, int worker) {
  std::unique_lock<std::mutex> lock(mutex_);
  worker_wake_.wait(lock, [&] { return stopped_ || retired_[static_cast<size_t>(worker)] || pick(task, worker); });
  return !stopped_ && !retired_[static_cast<size_t>(worker)];
}

int SlabPrefetch::live_workers() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(std::count(retired_.begin(), retired_.end(), 0));
}

void SlabPrefetch::retire(int worker, std::exception_ptr error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    retired_[static_cast<size_t>(worker)] = 1;
    for (Slab& s : slabs_)
      if (s.buffer >= 0 && worker_of(s.buffer) == worker && (s.state == State::Computing || s.state == State::Ready))
        make_idle(s);
    if (std::count(retired_.begin(), retired_.end(), 0) == 0 && !stopped_) {
      stopped_ = true;
      stop_reason_ = std::move(error);
    }
  }
  worker_wake_.notify_all();
  reader_wake_.notify_all();
}

bool SlabPrefetch::ready_or_request(int slab) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const Slab& s = slabs_[static_cast<size_t>(slab)];
    if (s.state == State::Ready) return true;
    if (s.state != State::Idle ||
        std::find(requested_.begin(), requested_.end(), slab) != requested_.end())
      return false;
    requested_.push_back(slab);
  }
  worker_wake_.notify_all();
  return false;
}

void SlabPrefetch::task_done(const Task& task, std::exception_ptr error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Slab& s = slabs_[static_cast<size_t>(task.slab)];
    if (error) {
      s.state = State::Failed;
      s.error = std::move(error);
      owner_[static_cast<size_t>(task.buffer)] = -1;
      s.buffer = -1;
    } else {
      s.state = State::Ready;
    }
  }
  reader_wake_.notify_all();
  worker_wake_.notify_all();
}

int SlabPrefetch::acquire(int slab, const std::function<void()>& poll) {
  std::unique_lock<std::mutex> lock(mutex_);
  wanted_ = slab;
  last_read_ = slab;
  worker_wake_.notify_all();
  for (;;) {
    if (stopped_) {
      wanted_ = -1;
      if (stop_reason_) std::rethrow_exception(stop_reason_);
      return -1;
    }
    Slab& s = slabs_[static_cast<size_t>(slab)];
    if (s.state == State::Ready) {
      s.state = State::Reading;
      wanted_ = -1;
      return s.buffer;
    }
    if (s.state == State::Failed) {
      std::exception_ptr error = std::exchange(s.error, nullptr);
      s.state = State::Idle;
      wanted_ = -1;
      std::rethrow_exception(error);
    }
    reader_wake_.wait_for(lock, std::chrono::milliseconds(5));
    if (poll) {
      lock.unlock();
      try {
        poll();
      } catch (...) {
        lock.lock();
        wanted_ = -1;
        throw;
      }
      lock.lock();
    }
  }
}

void SlabPrefetch::release(int slab) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    make_idle(slabs_[static_cast<size_t>(slab)]);
  }
  worker_wake_.notify_all();
}

void SlabPrefetch::stop(std::exception_ptr reason) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
    stop_reason_ = std::move(reason);
  }
  worker_wake_.notify_all();
  reader_wake_.notify_all();
}

}  // namespace fdk
