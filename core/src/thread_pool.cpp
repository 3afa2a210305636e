#include "fdk/core/thread_pool.hpp"

#include <algorithm>
#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace fdk {
namespace {

using Clock = std::chrono::steady_clock;

// How long a worker that ran a task and finds no call left, and a caller
// whose tasks are all taken, spin before they sleep. Waking a sleeping
// thread costs a system call and tens of microseconds before it runs: (b)'s
// 4 MiB projections, copied in 32 tasks each, took 0.12-0.14 ms per push
// when each task was taken under the lock by a worker woken for it, 0.08 ms
// with tasks taken by an atomic counter and the workers spinning on from
// the previous push (the four-H200 host's 64 cores; 300 us measured no
// better). Pushes and slab copies come back to back, so a spin mostly ends
// in work; otherwise it costs this much of the cores that ran the last call.
constexpr std::chrono::microseconds kSpin{100};

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins until `done()` or the spin time is up.
template <class Done>
void spin_until(Done done) {
  const auto end = Clock::now() + kSpin;
  for (int i = 0; !done(); ++i) {
    if ((i & 63) == 63 && Clock::now() >= end) return;
    cpu_relax();
  }
}

}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  for (int slot = 1; slot < num_threads; ++slot) workers_.emplace_back([this, slot] { worker_loop(slot); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

ThreadPool::Call* ThreadPool::call_with_tasks() const {
  for (Call* c : calls_)
    if (c->next.load(std::memory_order_relaxed) < c->count) return c;
  return nullptr;
}

void ThreadPool::run_tasks(Call& call, int slot) {
  for (;;) {
    const int task = call.next.fetch_add(1);
    if (task >= call.count) {
      if (task == call.count) open_calls_.fetch_sub(1);  // exactly one thread sees it
      return;
    }
    try {
      (*call.fn)(task, slot);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!call.error) call.error = std::current_exception();
    }
  }
}

bool ThreadPool::join_open_call(int slot) {
  joining_.fetch_add(1);
  Call* call = open_.load();
  // A published call whose tasks are all taken is left to its caller:
  // joined again and again, it kept every spinning worker from the other
  // callers' calls, which wait under the lock (four GPUs' reads into
  // pageable memory took 2.5 s instead of 1.2 on (c)).
  if (call && call->next.load() < call->count)
    call->active.fetch_add(1);
  else
    call = nullptr;
  joining_.fetch_sub(1);
  if (!call) return false;
  work_in(*call, slot);
  return true;
}

void ThreadPool::work_in(Call& call, int slot) {
  run_tasks(call, slot);
  // The caller may return as soon as this reaches 0 with the call
  // withdrawn: `call` is not touched after it, and the notification
  // (under the lock, so the caller cannot miss it) uses only the pool's.
  if (call.active.fetch_sub(1) == 1) {
    std::lock_guard<std::mutex> lock(mutex_);
    done_.notify_all();
  }
}

void ThreadPool::worker_loop(int slot) {
  bool ran = false;  // only a worker that has run tasks spins before it sleeps
  for (;;) {
    if (ran) {
      spinning_.fetch_add(1);
      spin_until([&] { return open_calls_.load() > 0 || stop_.load(); });
      spinning_.fetch_sub(1);
    }
    if (join_open_call(slot)) {
      ran = true;
      continue;
    }
    Call* call = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      // Tasks are taken without the lock: the call found is the one joined.
      const auto found = [&] { return stop_.load() || (call = call_with_tasks()) != nullptr; };
      if (!found()) {
        ++sleepers_;
        wake_.wait(lock, found);
        --sleepers_;
      }
      if (stop_.load()) return;
      call->active.fetch_add(1);
    }
    work_in(*call, slot);
    ran = true;
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
  int sleepers;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    calls_.push_back(&call);
    open_calls_.fetch_add(1);
    sleepers = sleepers_;
  }
  // Workers spinning from the last call see this one by themselves.
  const int spinning = spinning_.load();
  Call* none = nullptr;
  const bool published = open_.compare_exchange_strong(none, &call);
  // Wake only as many sleeping workers as the tasks can use beyond the
  // spinning ones, which take tasks by themselves: a small job (one
  // projection's copy) should not pull every core off other work and then
  // wait for the last of them to be scheduled again. Each wake is a system
  // call on the caller's path, and a woken worker that finds the tasks gone
  // takes a core for nothing: (a)'s pushes, 8 tasks each, woke 7 sleepers
  // a push while 7 spinners took the tasks, and its push phase took twice
  // as long with 16 threads as with 8 on a 16-core H100 host
  // (docs/PERFORMANCE.md). A spinner that stops before it joins still looks
  // for calls under the lock before it sleeps; the caller runs what is left.
  const int helpers = std::max(0, std::min(count - 1 - spinning, sleepers));
  if (helpers > 0 && helpers == sleepers)
    wake_.notify_all();
  else
    for (int h = 0; h < helpers; ++h) wake_.notify_one();
  run_tasks(call, 0);
  if (published) {
    // Withdrawn from the lock-free path: once no worker is between loading
    // open_ and counting itself in `active`, the waits below see them all.
    open_.store(nullptr);
    while (joining_.load() != 0) cpu_relax();
  }
  // Every task is taken; those still running are the active workers'.
  spin_until([&] { return call.active.load() == 0; });
  std::exception_ptr error;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    // Withdrawn first, so that no worker joins the call any more.
    calls_.erase(std::find(calls_.begin(), calls_.end(), &call));
    done_.wait(lock, [&] { return call.active.load() == 0; });
    error = call.error;
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace fdk
