// Who computes which slab into which buffer when a worker computes slabs
// ahead of the reader: while the caller copies slab k out of one device
// buffer, the worker computes slab k+1 into another. Plain host logic (no
// device calls), shared by a backend's worker thread and its reader.
//
// A slab is Idle (in no buffer), Computing, Ready (in its buffer, waiting to
// be read), Reading (being copied out), or Failed (its error waits for the
// reader). The worker takes the slab the reader waits for first, else the
// slabs right after the last one read (as many as there are buffers); a
// slab the reader waits for may take the buffer of a prefetched slab nobody
// asked for yet, so a reader going out of order never waits on a full set
// of buffers.
//
// Several workers (one per GPU) may share it: each owns an equal share of
// the buffers and takes only tasks for its own, so a faster GPU simply comes
// back for work sooner. A worker whose device fails retires: what it was
// computing or held computed goes back to Idle for the others, and when no
// worker is left the reader gets the failure.
#pragma once
#include <array>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <vector>

namespace fdk {

class SlabPrefetch {
 public:
  struct Task {
    int slab = -1;
    int buffer = -1;
  };

  // `buffers` split evenly over `workers`: worker w owns buffers
  // [w * buffers / workers, (w + 1) * buffers / workers).
  SlabPrefetch(std::vector<std::array<int, 2>> slabs, int buffers, int workers = 1);

  // The index of planes [y0, y1), added to the list when it is not a slab.
  int slab_of(int y0, int y1);
  std::array<int, 2> range(int slab) const;

  // Before the worker starts: `slab` is already computed into `buffer`
  // (during the scan).
  void preset_ready(int slab, int buffer);

  // Worker `worker`: blocks until there is a slab to compute and a free
  // buffer of its own for it; false once stop() was called or the worker
  // retired.
  bool next_task(Task& task, int worker = 0);
  int worker_of(int buffer) const { return buffer / buffers_per_worker_; }
  // Worker `worker` can compute no more (its device failed with `error`):
  // its slabs, computing or computed, go back to Idle for the other
  // workers; with none left, everything stops with `error`.
  void retire(int worker, std::exception_ptr error);
  int live_workers() const;
  // Worker: the slab's work is issued (error null) or failed.
  void task_done(const Task& task, std::exception_ptr error);

  // Reader: blocks until `slab` is Ready and returns its buffer (the slab is
  // then Reading), or rethrows the error its computation ended with (the
  // slab goes back to Idle, so a later read retries). `poll` runs every few
  // milliseconds while waiting and may throw (cancellation).
  int acquire(int slab, const std::function<void()>& poll);
  // Reader: the slab is copied out; its buffer is free.
  void release(int slab);

  // Never blocks: true when `slab` is computed and waiting to be read.
  // Otherwise the slab is requested: a worker with a free buffer computes it
  // before any prefetch.
  bool ready_or_request(int slab);

  // Wakes and ends both sides (next_task returns false; acquire throws
  // the error passed, or returns -1 when it is null).
  void stop(std::exception_ptr reason = nullptr);

 private:
  enum class State { Idle, Computing, Ready, Reading, Failed };
  struct Slab {
    explicit Slab(std::array<int, 2> r) : range(r) {}
    std::array<int, 2> range;
    State state = State::Idle;
    int buffer = -1;
    std::exception_ptr error;
  };

  bool pick(Task& task, int worker);  // mutex held
  int free_buffer(int worker) const;
  void make_idle(Slab& s);

  mutable std::mutex mutex_;
  std::condition_variable worker_wake_, reader_wake_;
  std::vector<Slab> slabs_;
  std::vector<int> owner_;  // per buffer: the slab in it, or -1
  int buffers_per_worker_ = 1;
  std::vector<unsigned char> retired_;  // per worker
  std::vector<int> requested_;          // slabs asked for by ready_or_request, oldest first
  int wanted_ = -1;         // the slab the reader waits for
  int last_read_ = -1;
  bool stopped_ = false;
  std::exception_ptr stop_reason_;
};

}  // namespace fdk
