// fdk-bench --timeline: what one run did over time, sampled on a thread of
// its own (views pushed, stored and backprojected, slabs done), so that a
// stall or an idle GPU shows when it happens, in the shipped library and
// without an instrumented build.
#pragma once
#include <fdk/fdk.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace fdk_bench {

class Timeline {
 public:
  using Clock = std::chrono::steady_clock;
  // Samples `ctx` every `interval` seconds from `start` (the first push)
  // until stop(). Only queries that never wait for a push or a slab
  // (fdk_get_progress) or wait for a view's bookkeeping alone
  // (fdk_get_view_state, for the views not yet seen stored).
  Timeline(fdk_context* ctx, int views, double interval, Clock::time_point start);
  ~Timeline();
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  void stop();
  // One line a sample: the time, each count and its change since the last.
  // After stop().
  void print(const char* label, const char* run, int number) const;

 private:
  struct Sample {
    double t = 0;
    int pushed = 0, stored = 0;
    double backprojected = 0;  // share of the backprojection's work done
    int slabs_done = 0, slabs_total = 0;
  };
  void sample();
  void loop();

  fdk_context* ctx_;
  double interval_;
  Clock::time_point start_;
  std::vector<unsigned char> stored_;  // views seen STORED (they stay so)
  int stored_count_ = 0;
  std::vector<Sample> samples_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;  // last: started once the rest is set
};

}  // namespace fdk_bench
