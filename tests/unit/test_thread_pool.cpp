// ThreadPool::parallel_for: every task runs once, on a slot that names its
// thread, failures reach their own caller, and calls from several threads at
// once (the GPUs' slab workers share one pool of decompression threads) each
// get their own tasks done.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "fdk/core/thread_pool.hpp"

using fdk::ThreadPool;

TEST(ThreadPool, EveryTaskRunsOnceOnASlotOfItsThread) {
  ThreadPool pool(4);
  std::vector<std::atomic<int>> runs(1000);
  std::mutex mutex;
  std::map<std::thread::id, int> slot_of;
  bool consistent = true;
  pool.parallel_for(1000, [&](int task, int slot) {
    runs[static_cast<size_t>(task)].fetch_add(1);
    std::lock_guard<std::mutex> lock(mutex);
    consistent &= slot >= 0 && slot < pool.size();
    auto [it, fresh] = slot_of.emplace(std::this_thread::get_id(), slot);
    consistent &= fresh || it->second == slot;
  });
  for (const auto& r : runs) EXPECT_EQ(r.load(), 1);
  EXPECT_TRUE(consistent);
  EXPECT_EQ(slot_of[std::this_thread::get_id()], 0);
}

TEST(ThreadPool, ATaskThatThrowsReachesItsCallerAndTheOthersStillRun) {
  ThreadPool pool(3);
  std::atomic<int> ran{0};
  EXPECT_THROW(pool.parallel_for(50,
                                 [&](int task, int) {
                                   ran.fetch_add(1);
                                   if (task == 7) throw std::runtime_error("task 7");
                                 }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 50);
  // The pool is usable afterwards.
  ran = 0;
  pool.parallel_for(20, [&](int, int) { ran.fetch_add(1); });
  EXPECT_EQ(ran.load(), 20);
}

TEST(ThreadPool, CallsFromSeveralThreadsAtOnceEachGetTheirOwnTasksDone) {
  ThreadPool pool(4);
  constexpr int kCallers = 4, kRounds = 200;
  std::atomic<int> wrong{0}, failures_seen{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c)
    callers.emplace_back([&, c] {
      for (int round = 0; round < kRounds; ++round) {
        const int count = 1 + (round * 7 + c * 13) % 40;
        std::vector<std::atomic<int>> runs(static_cast<size_t>(count));
        const bool fail = c == 1 && round % 10 == 3;  // one caller's calls fail now and then
        try {
          pool.parallel_for(count, [&](int task, int) {
            runs[static_cast<size_t>(task)].fetch_add(1);
            if (fail && task == count - 1) throw std::runtime_error("failing call");
          });
          if (fail) wrong.fetch_add(1);  // the failure was lost
        } catch (const std::runtime_error&) {
          if (!fail) wrong.fetch_add(1);  // another caller's failure leaked here
          failures_seen.fetch_add(1);
        }
        for (const auto& r : runs)
          if (r.load() != 1) wrong.fetch_add(1);
      }
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(failures_seen.load(), kRounds / 10);
}

// Workers take tasks without the pool's lock and spin between calls: many
// small calls back to back, from several threads, on more workers than the
// machine has cores (a worker is often descheduled between finding a call
// and joining it, when its tasks may all be taken already).
TEST(ThreadPool, SmallCallsBackToBackOnMoreWorkersThanCoresAllComplete) {
  ThreadPool pool(64);
  std::atomic<int> wrong{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 3; ++c)
    callers.emplace_back([&, c] {
      for (int round = 0; round < 3000; ++round) {
        const int count = 2 + (round + c) % 33;
        std::vector<std::atomic<int>> runs(static_cast<size_t>(count));
        pool.parallel_for(count, [&](int task, int) { runs[static_cast<size_t>(task)].fetch_add(1); });
        for (const auto& r : runs)
          if (r.load() != 1) wrong.fetch_add(1);
      }
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

// One caller's calls back to back: each is published for spinning workers
// to join without the lock, and withdrawn before parallel_for returns, so
// no worker still counts itself in a call whose caller has moved on (its
// tasks would then write into the next call's frame).
TEST(ThreadPool, OneCallersCallsBackToBackAreEachJoinedOnlyWhileOpen) {
  ThreadPool pool(16);
  int wrong = 0;
  for (int round = 0; round < 20000; ++round) {
    const int count = 2 + round % 31;
    std::vector<std::atomic<int>> runs(static_cast<size_t>(count));
    std::atomic<int> total{0};
    pool.parallel_for(count, [&](int task, int) {
      runs[static_cast<size_t>(task)].fetch_add(1);
      total.fetch_add(1);
    });
    const int at_return = total.load();
    for (const auto& r : runs) wrong += r.load() != 1;
    wrong += at_return != count || total.load() != count;
  }
  EXPECT_EQ(wrong, 0);
}

// Calls spaced about as long as a worker spins before it sleeps: the caller
// wakes no sleeper for the tasks it counts on the spinners to take, and some
// of those spinners give up just then. Every call must still complete with
// every task run once, on the spinners that joined, on workers that looked
// for calls under the lock before sleeping, or on the caller.
TEST(ThreadPool, CallsSpacedByTheSpinTimeCompleteWhenSpinnersGiveUp) {
  ThreadPool pool(8);
  int wrong = 0;
  for (int round = 0; round < 600; ++round) {
    const int count = 2 + round % 9;
    std::vector<std::atomic<int>> runs(static_cast<size_t>(count));
    pool.parallel_for(count, [&](int task, int) { runs[static_cast<size_t>(task)].fetch_add(1); });
    for (const auto& r : runs) wrong += r.load() != 1;
    std::this_thread::sleep_for(std::chrono::microseconds(60 + 15 * (round % 7)));
  }
  EXPECT_EQ(wrong, 0);
}
