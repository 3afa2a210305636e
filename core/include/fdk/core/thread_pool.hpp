// A fixed pool of worker threads with one blocking primitive, parallel_for.
// The calling thread takes part, so a pool of n runs n tasks at once with
// n - 1 workers. Several threads may call parallel_for at once (the GPUs'
// slab workers share one pool of decompression threads): the workers serve
// the calls in the order they came, each caller runs its own call's tasks.
#pragma once
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
    int count = 0, next = 0, finished = 0;
    std::exception_ptr error;
  };

  void worker_loop(int slot);
  // Runs task `task` of `call` (taken with mutex_ held; runs without it).
  void run_one(Call& call, int task, int slot);
  // Takes the next task of `call` (mutex_ held); -1 when all are taken.
  int take(Call& call);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::deque<Call*> calls_;  // calls with tasks not yet taken, oldest first
  bool stop_ = false;
};

}  // namespace fdk
