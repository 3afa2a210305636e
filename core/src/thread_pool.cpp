#include "fdk/core/thread_pool.hpp"

#include <algorithm>
#include <exception>

namespace fdk {

ThreadPool::ThreadPool(int num_threads) {
  for (int slot = 1; slot < num_threads; ++slot)
    workers_.emplace_back([this, slot] { worker_loop(slot); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_tasks(int slot) {
  for (;;) {
    int task;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (next_ >= count_) return;
      task = next_++;
    }
    try {
      (*job_)(task, slot);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
  }
}

void ThreadPool::worker_loop(int slot) {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      ++active_;
    }
    run_tasks(slot);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--active_ == 0) done_.notify_all();
    }
  }
}

void ThreadPool::parallel_for(int count, const std::function<void(int, int)>& fn) {
  if (count <= 0) return;
  if (workers_.empty() || count == 1) {
    for (int t = 0; t < count; ++t) fn(t, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &fn;
    count_ = count;
    next_ = 0;
    error_ = nullptr;
    ++generation_;
  }
  // Wake only the workers the tasks can use: a small job (one projection's
  // copy) should not pull every core off other work and then wait for the
  // last of them to be scheduled again.
  const int helpers = std::min(count - 1, static_cast<int>(workers_.size()));
  if (helpers == static_cast<int>(workers_.size()))
    wake_.notify_all();
  else
    for (int h = 0; h < helpers; ++h) wake_.notify_one();
  run_tasks(0);
  std::exception_ptr error;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return active_ == 0; });
    job_ = nullptr;
    error = error_;
    error_ = nullptr;
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace fdk
