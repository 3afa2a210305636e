// The read-ahead of slabs (a worker computes the next slab while the reader
// copies the current one out): order, buffers never shared, a reader going
// out of order, errors and stop.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <set>
#include <stdexcept>
#include <thread>

#include "fdk/core/slab_prefetch.hpp"

namespace fdk {
namespace {

std::vector<std::array<int, 2>> slabs(int n) {
  std::vector<std::array<int, 2>> s;
  for (int i = 0; i < n; ++i) s.push_back({10 * i, 10 * i + 10});
  return s;
}

// A worker that "computes" a slab by writing its index into its buffer.
struct FakeWorker {
  SlabPrefetch& prefetch;
  std::vector<std::atomic<int>>& buffers;
  std::vector<int> computed;  // in order
  int fail_slab = -1;
  void run() {
    SlabPrefetch::Task t;
    while (prefetch.next_task(t)) {
      computed.push_back(t.slab);
      if (t.slab == fail_slab) {
        fail_slab = -1;
        prefetch.task_done(t, std::make_exception_ptr(std::runtime_error("device failed")));
        continue;
      }
      buffers[static_cast<size_t>(t.buffer)].store(t.slab);
      prefetch.task_done(t, nullptr);
    }
  }
};

TEST(SlabPrefetch, InOrderReadsComputeAheadIntoDistinctBuffers) {
  SlabPrefetch p(slabs(6), 2);
  std::vector<std::atomic<int>> buffers(2);
  FakeWorker w{p, buffers, {}, -1};
  std::thread worker([&] { w.run(); });
  std::set<int> seen_buffers;
  for (int s = 0; s < 6; ++s) {
    const int b = p.acquire(s, nullptr);
    ASSERT_GE(b, 0);
    EXPECT_EQ(buffers[static_cast<size_t>(b)].load(), s);  // the buffer holds this slab
    seen_buffers.insert(b);
    if (s + 1 < 6) {
      // The next slab is computed while this one is held (read-ahead).
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (std::chrono::steady_clock::now() < deadline && buffers[static_cast<size_t>(1 - b)].load() != s + 1)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      EXPECT_EQ(buffers[static_cast<size_t>(1 - b)].load(), s + 1) << "slab " << s + 1 << " not computed ahead";
    }
    p.release(s);
  }
  p.stop();
  worker.join();
  EXPECT_EQ(seen_buffers.size(), 2u);
  EXPECT_EQ(w.computed, (std::vector<int>{0, 1, 2, 3, 4, 5}));  // nothing computed twice
}

TEST(SlabPrefetch, OutOfOrderReaderTakesAPrefetchedBuffer) {
  SlabPrefetch p(slabs(8), 2);
  std::vector<std::atomic<int>> buffers(2);
  FakeWorker w{p, buffers, {}, -1};
  std::thread worker([&] { w.run(); });
  // Slabs 0 and 1 are prefetched into both buffers; a read of slab 6 must
  // not wait for them to be read.
  auto read6 = std::async(std::launch::async, [&] { return p.acquire(6, nullptr); });
  ASSERT_EQ(read6.wait_for(std::chrono::seconds(5)), std::future_status::ready) << "reader blocked on full buffers";
  const int b = read6.get();
  EXPECT_EQ(buffers[static_cast<size_t>(b)].load(), 6);
  p.release(6);
  // Slab 7 follows, and slab 0 is still readable (recomputed if evicted).
  const int b7 = p.acquire(7, nullptr);
  EXPECT_EQ(buffers[static_cast<size_t>(b7)].load(), 7);
  p.release(7);
  const int b0 = p.acquire(0, nullptr);
  EXPECT_EQ(buffers[static_cast<size_t>(b0)].load(), 0);
  p.release(0);
  p.stop();
  worker.join();
}

TEST(SlabPrefetch, ErrorReachesTheReaderAndARetryRecomputes) {
  SlabPrefetch p(slabs(3), 2);
  std::vector<std::atomic<int>> buffers(2);
  FakeWorker w{p, buffers, {}, -1};
  w.fail_slab = 1;
  std::thread worker([&] { w.run(); });
  ASSERT_GE(p.acquire(0, nullptr), 0);
  p.release(0);
  EXPECT_THROW(p.acquire(1, nullptr), std::runtime_error);
  const int b = p.acquire(1, nullptr);  // retried
  EXPECT_EQ(buffers[static_cast<size_t>(b)].load(), 1);
  p.release(1);
  p.stop();
  worker.join();
}

TEST(SlabPrefetch, PollErrorAndStopEndAWaitingReader) {
  SlabPrefetch p(slabs(2), 1);  // no worker: the reader would wait forever
  EXPECT_THROW(p.acquire(0, [] { throw std::runtime_error("cancelled"); }), std::runtime_error);
  auto waiting = std::async(std::launch::async, [&] { return p.acquire(1, nullptr); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  p.stop();
  ASSERT_EQ(waiting.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_EQ(waiting.get(), -1);
  SlabPrefetch::Task t;
  EXPECT_FALSE(p.next_task(t));
}

TEST(SlabPrefetch, APresetSlabIsReadWithoutComputingIt) {
  SlabPrefetch p(slabs(3), 2);
  std::vector<std::atomic<int>> buffers(2);
  buffers[0].store(0);  // computed during the scan
  p.preset_ready(0, 0);
  FakeWorker w{p, buffers, {}, -1};
  std::thread worker([&] { w.run(); });
  for (int s = 0; s < 3; ++s) {
    const int b = p.acquire(s, nullptr);
    EXPECT_EQ(buffers[static_cast<size_t>(b)].load(), s);
    p.release(s);
  }
  p.stop();
  worker.join();
  EXPECT_EQ(w.computed, (std::vector<int>{1, 2}));
}

// A worker of several: computes only into its own buffers; `retire_at`
// makes it fail (retire) when handed that slab.
constexpr int kAny = -2;
struct SharedWorker {
  SharedWorker(SlabPrefetch& p, std::vector<std::atomic<int>>& b, int i) : prefetch(p), buffers(b), index(i) {}
  SlabPrefetch& prefetch;
  std::vector<std::atomic<int>>& buffers;
  int index;
  int retire_at = -1;
  std::vector<int> computed;
  std::vector<int> buffers_used;
  // When set, a worker holds its first task until this many workers have
  // one (at most 5 s): on a loaded machine one worker could otherwise take
  // every slab before the others run, and "the work is spread" would be luck.
  std::atomic<int>* started = nullptr;
  int wait_for_started = 0;
  void run() {
    SlabPrefetch::Task t;
    bool first = true;
    while (prefetch.next_task(t, index)) {
      if (first && started) {
        first = false;
        started->fetch_add(1);
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (started->load() < wait_for_started && std::chrono::steady_clock::now() < until) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      }
      if (t.slab == retire_at || retire_at == kAny) {
        prefetch.retire(index, std::make_exception_ptr(std::runtime_error("device " + std::to_string(index))));
        return;
      }
      buffers_used.push_back(t.buffer);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      buffers[static_cast<size_t>(t.buffer)].store(t.slab);
      computed.push_back(t.slab);
      prefetch.task_done(t, nullptr);
    }
  }
};

TEST(SlabPrefetch, SeveralWorkersShareTheSlabsEachInItsOwnBuffers) {
  SlabPrefetch p(slabs(12), 6, 3);
  std::vector<std::atomic<int>> buffers(6);
  std::vector<SharedWorker> workers;
  std::atomic<int> started{0};
  for (int w = 0; w < 3; ++w) {
    workers.emplace_back(p, buffers, w);
    workers.back().started = &started;
    workers.back().wait_for_started = 2;
  }
  std::vector<std::thread> threads;
  for (auto& w : workers) threads.emplace_back([&w] { w.run(); });
  for (int s = 0; s < 12; ++s) {
    const int b = p.acquire(s, nullptr);
    ASSERT_GE(b, 0);
    EXPECT_EQ(buffers[static_cast<size_t>(b)].load(), s);
    p.release(s);
  }
  p.stop();
  for (auto& t : threads) t.join();
  size_t total = 0;
  for (const auto& w : workers) {
    total += w.computed.size();
    for (int b : w.buffers_used) EXPECT_EQ(b / 2, w.index) << "worker " << w.index << " used buffer " << b;
  }
  EXPECT_EQ(total, 12u);  // every slab once: nothing computed twice
  int busy = 0;
  for (const auto& w : workers) busy += w.computed.empty() ? 0 : 1;
  EXPECT_GE(busy, 2);  // the work is spread
}

TEST(SlabPrefetch, ARetiredWorkersSlabsGoToTheOthers) {
  SlabPrefetch p(slabs(8), 4, 2);
  std::vector<std::atomic<int>> buffers(4);
  SharedWorker failing(p, buffers, 1);
  failing.retire_at = kAny;  // fails on the first slab it is handed
  SharedWorker healthy(p, buffers, 0);
  std::thread t1([&] { failing.run(); });
  t1.join();  // retired, holding what it took
  EXPECT_EQ(p.live_workers(), 1);
  std::thread t0([&] { healthy.run(); });
  for (int s = 0; s < 8; ++s) {
    const int b = p.acquire(s, nullptr);
    ASSERT_GE(b, 0);
    EXPECT_EQ(buffers[static_cast<size_t>(b)].load(), s);
    p.release(s);
  }
  p.stop();
  t0.join();
  EXPECT_TRUE(failing.computed.empty());
  EXPECT_EQ(healthy.computed.size(), 8u);
}

TEST(SlabPrefetch, WhenEveryWorkerRetiredTheReaderGetsTheFailure) {
  SlabPrefetch p(slabs(3), 4, 2);
  std::thread ta([&] {
    SlabPrefetch::Task t;
    if (p.next_task(t, 0)) p.retire(0, std::make_exception_ptr(std::runtime_error("device 0 lost")));
  });
  std::thread tb([&] {
    SlabPrefetch::Task t;
    if (p.next_task(t, 1)) p.retire(1, std::make_exception_ptr(std::runtime_error("device 1 lost")));
  });
  EXPECT_THROW(p.acquire(2, nullptr), std::runtime_error);
  ta.join();
  tb.join();
  EXPECT_EQ(p.live_workers(), 0);
  SlabPrefetch::Task t;
  EXPECT_FALSE(p.next_task(t, 0));
}

TEST(SlabPrefetch, ReadyOrRequestNeverBlocksAndGetsTheSlabComputed) {
  SlabPrefetch p(slabs(10), 2);
  std::vector<std::atomic<int>> buffers(2);
  // Before any read the window is slabs 0 and 1: slab 7 only comes when asked.
  EXPECT_FALSE(p.ready_or_request(7));
  FakeWorker w{p, buffers, {}, -1};
  std::thread worker([&] { w.run(); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!p.ready_or_request(7) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(p.ready_or_request(7));
  const int b = p.acquire(7, nullptr);
  EXPECT_EQ(buffers[static_cast<size_t>(b)].load(), 7);
  p.release(7);
  p.stop();
  worker.join();
  EXPECT_EQ(w.computed.front(), 7);  // before any prefetch
}

TEST(SlabPrefetch, UnknownRangeBecomesASlab) {
  SlabPrefetch p(slabs(2), 1);
  EXPECT_EQ(p.slab_of(10, 20), 1);
  const int s = p.slab_of(5, 15);
  EXPECT_EQ(s, 2);
  EXPECT_EQ(p.range(s), (std::array<int, 2>{5, 15}));
}

}  // namespace
}  // namespace fdk
