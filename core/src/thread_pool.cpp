#include "fdk/core/thread_pool.hpp"

#include <algorithm>

namespace fdk {

ThreadPool::ThreadPool(int num_threads) {
  for (int slot = 1; slot < num_threads; ++slot) workers_.emplace_back([this, slot] { worker_loop(slot); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

int ThreadPool::take(Call& call) {
  if (call.next >= call.count) return -1;
  const int task = call.next++;
  if (call.next == call.count) {
    // Its last task is taken: no worker looks at this call again.
    auto it = std::find(calls_.begin(), calls_.end(), &call);
    if (it != calls_.end()) calls_.erase(it);
  }
  return task;
}

void ThreadPool::run_one(Call& call, int task, int slot) {
  std::exception_ptr error;
  try {
    (*call.fn)(task, slot);
  } catch (...) {
    error = std::current_exception();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (error && !call.error) call.error = error;
  // The caller may return (and `call` go) as soon as this is the last:
  // notify with the lock held, and touch `call` no more.
  if (++call.finished == call.count) done_.notify_all();
}

void ThreadPool::worker_loop(int slot) {
  for (;;) {
    Call* call;
    int task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || !calls_.empty(); });
      if (stop_) return;
      call = calls_.front();
      task = take(*call);
    }
    run_one(*call, task, slot);
  }
}

void ThreadPool::parallel_for(int count, const std::function<void(int, int)>& fn) {
  if (count <= 0) return;
  if (workers_.empty() || count == 1) {
    for (int t = 0; t < count; ++t) fn(t, 0);
    return;
  }
  Call call;
  call.fn = &fn;
  call.count = count;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    calls_.push_back(&call);
  }
  // Wake only the workers the tasks can use: a small job (one projection's
  // copy) should not pull every core off other work and then wait for the
  // last of them to be scheduled again.
  const int helpers = std::min(count - 1, static_cast<int>(workers_.size()));
  if (helpers == static_cast<int>(workers_.size()))
    wake_.notify_all();
  else
    for (int h = 0; h < helpers; ++h) wake_.notify_one();
  for (;;) {
    int task;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      task = take(call);
    }
    if (task < 0) break;
    run_one(call, task, 0);
  }
  std::exception_ptr error;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return call.finished == call.count; });
    error = call.error;
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace fdk
