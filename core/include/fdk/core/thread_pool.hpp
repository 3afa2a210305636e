// A fixed pool of worker threads with one blocking primitive, parallel_for.
// The calling thread takes part, so a pool of n runs n tasks at once with
// n - 1 workers. Several threads may call parallel_for at once (the GPUs'
// slab workers share one pool of decompression threads): the workers serve
// the calls in the order they came, each caller runs its own call's tasks.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace fdk {

class ThreadPool {
 public:
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs fn(task, slot) for task in [0, count), slot in [0, size()) naming
  // the executing thread (for per-thread scratch): a worker's own slot, 0
  // for the caller. Returns when all are done; rethrows the first exception
  // a task threw (the rest still run). Calls from several threads may
  // overlap; slot 0 is then every caller's, so callers that keep scratch per
  // slot serialise their calls.
  void parallel_for(int count, const std::function<void(int task, int slot)>& fn);

 private:
  struct Call {
    const std::function<void(int, int)>* fn = nullptr;
    int count = 0;
    std::atomic<int> next{0};    // the next task to take
    std::atomic<int> active{0};  // workers inside the call; joined under mutex_
    std::exception_ptr error;    // the first a task threw (mutex_)
  };

  void worker_loop(int slot);
  // Joins and works on the published call, if any: false when there is none.
  bool join_open_call(int slot);
  // A worker counted in `call.active`: runs its tasks, then leaves it.
  void work_in(Call& call, int slot);
  // Runs tasks of `call` until none is left to take.
  void run_tasks(Call& call, int slot);
  // The oldest call with a task left to take, or null (mutex_ held).
  Call* call_with_tasks() const;

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::deque<Call*> calls_;  // calls not yet returned, oldest first
  int sleepers_ = 0;         // workers waiting on wake_ (mutex_)
  std::atomic<int> spinning_{0};  // workers spinning for the next call
  // Calls with tasks not yet all taken: a spinning worker looks at this,
  // not at calls_, so that it joins the next call without a wake-up and
  // without taking the lock while it waits.
  std::atomic<int> open_calls_{0};
  std::atomic<bool> stop_{false};
  // One open call at a time is also published here, so that a spinning
  // worker joins it without the lock: on a 64-core host the spinners all
  // queued on mutex_ at once, and the last of them reached a projection's
  // copy after its tasks were gone. `joining_` counts the workers between
  // loading `open_` and counting themselves active in the call, so that the
  // caller, having withdrawn it, knows when nobody can still join it.
  std::atomic<Call*> open_{nullptr};
  std::atomic<int> joining_{0};
};

}  // namespace fdk
