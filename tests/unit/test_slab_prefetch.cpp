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

TEST(SlabPrefetch, UnknownRangeBecomesASlab) {
  SlabPrefetch p(slabs(2), 1);
  EXPECT_EQ(p.slab_of(10, 20), 1);
  const int s = p.slab_of(5, 15);
  EXPECT_EQ(s, 2);
  EXPECT_EQ(p.range(s), (std::array<int, 2>{5, 15}));
}

}  // namespace
}  // namespace fdk
