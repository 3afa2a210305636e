// A fixed pool of worker threads with one blocking primitive, parallel_for.
// The calling thread takes part, so a pool of n runs n tasks at once with
// n - 1 workers.
#pragma once
#include <condition_variable>
#include <cstdint>
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
  // the executing thread (for per-thread scratch). Returns when all are done;
  // rethrows the first exception a task threw (the rest still run).
  // Not reentrant: one parallel_for at a time per pool (callers serialise).
  void parallel_for(int count, const std::function<void(int task, int slot)>& fn);

 private:
  void worker_loop(int slot);
  void run_tasks(int slot);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int, int)>* job_ = nullptr;
  int count_ = 0, next_ = 0, active_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

}  // namespace fdk
