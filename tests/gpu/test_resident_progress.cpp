// fdk_progress.backprojection_done of a volume resident on the GPUs counts
// a view into its planes when a GPU has run its launch, not when the view
// was filtered: a progress bar on it reaches 100 % when the volume is done,
// not seconds earlier while the finish's launches still run. Part of
// test_multi_gpu (fdk_testable, for the test seams); skips, saying
// "skipped: no GPU", where no CUDA device is usable.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "fdk/kernels/test_seams.hpp"
#include "multi_gpu_support.hpp"
#include "small_scan.hpp"

using fdk::cuda::FaultPlan;
using fdk::cuda::ScopedFaultPlan;
using fdk_test::SmallScan;
using namespace fdk_test::multi_gpu;

namespace {

fdk_progress progress_of(const fdk_context* ctx) {
  fdk_progress p{};
  p.struct_size = sizeof(p);
  EXPECT_EQ(fdk_get_progress(ctx, &p), FDK_OK);
  return p;
}

// Waits (10 s at most) until every view pushed is STORED: filtered, and
// handed to the resident GPUs.
void wait_stored(fdk_context* ctx, int views, int skipped) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    int stored = 0;
    for (int v = 0; v < views; ++v) {
      int32_t state = FDK_VIEW_ABSENT;
      EXPECT_EQ(fdk_get_view_state(ctx, v, &state, nullptr), FDK_OK);
      stored += state == FDK_VIEW_STORED ? 1 : 0;
    }
    if (stored == views - (skipped >= 0 ? 1 : 0)) return;
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(10)) return ADD_FAILURE() << "views not stored";
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

struct Watched {
  int64_t after_scan = -1;  // backprojection_done once every view was stored
  int64_t at_end = -1, total = -1;
  bool monotone = true;
  std::vector<float> volume;
};

// A resident run of `scan` on `devices` (view `skipped` never pushed, -1:
// none), its progress polled from another thread until the volume is read.
Watched watched_run(const SmallScan& scan, const std::vector<int>& devices, int skipped) {
  Watched w;
  fdk_context* ctx = nullptr;
  const fdk_config config = on_devices(scan.config, devices, 0);
  EXPECT_EQ(fdk_create(&config, &ctx), FDK_OK) << fdk_last_create_error();
  if (!ctx) return w;
  std::atomic<bool> running{true};
  std::atomic<bool> finished{false};
  std::thread poller([&] {
    int64_t last = 0;
    while (running.load()) {
      const fdk_progress q = progress_of(ctx);
      // The total drops at fdk_finish to the views that arrived.
      if (finished.load()) {
        w.monotone &= q.backprojection_done >= last;
        last = q.backprojection_done;
      }
    }
  });
  for (int v = 0; v < scan.views(); ++v) {
    if (v == skipped) continue;
    EXPECT_EQ(fdk_push_projection(ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK) << fdk_last_error(ctx);
  }
  wait_stored(ctx, scan.views(), skipped);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // what the GPUs were given, they have run
  w.after_scan = progress_of(ctx).backprojection_done;
  EXPECT_EQ(fdk_finish(ctx), FDK_OK) << fdk_last_error(ctx);
  finished.store(true);
  EXPECT_EQ(fdk_test::read_volume(ctx, w.volume), FDK_OK) << fdk_last_error(ctx);
  running.store(false);
  poller.join();
  const fdk_progress end = progress_of(ctx);
  w.at_end = end.backprojection_done;
  w.total = end.backprojection_total;
  fdk_destroy(ctx);
  return w;
}

// What every run must show: the total of the views that arrived (64
// planes each), reached at the end, never going down after fdk_finish.
void expect_counted(const Watched& w, int views, const std::vector<int>& set, const char* what) {
  EXPECT_EQ(w.total, int64_t{views} * 64) << describe(set);
  EXPECT_EQ(w.at_end, w.total) << describe(set);
  EXPECT_TRUE(w.monotone) << describe(set);
  std::printf("[gpu] %s on %s: backprojection %lld after the scan, %lld of %lld at the end\n", what,
              describe(set).c_str(), static_cast<long long>(w.after_scan), static_cast<long long>(w.at_end),
              static_cast<long long>(w.total));
}

std::vector<std::vector<int>> worker_sets() {
  std::vector<std::vector<int>> sets{{0}, {0, 0}};
  if (gpu_count() >= 2) sets.push_back({0, 1});
  return sets;
}

}  // namespace

// Every group held for the finish (FaultPlan::hold_groups): no GPU has
// backprojected a view when the scan ends, so the count is 0 there (when
// views were counted as filtered, it was the total), and the total once
// the volume is read.
TEST(ResidentProgress, CountsNoViewBeforeAGpuHasRunIt) {
  SKIP_WITHOUT_GPU();
  const SmallScan scan(64, 120, 96);
  FaultPlan held;
  held.hold_groups = true;
  const ScopedFaultPlan plan(held);
  for (const auto& set : worker_sets()) {
    const Watched w = watched_run(scan, set, -1);
    EXPECT_EQ(w.after_scan, 0) << describe(set);
    expect_counted(w, 120, set, "groups held");
  }
}

// A view missing at fdk_finish: each GPU starts its volume again from the
// views on the device, and counts its planes from 0 again; the count
// still ends at the views that arrived, never going down after the finish.
TEST(ResidentProgress, AFinishThatStartsAgainEndsAtTheViewsThatArrived) {
  SKIP_WITHOUT_GPU();
  const SmallScan scan(64, 120, 96);
  for (const auto& set : worker_sets()) {
    const Watched w = watched_run(scan, set, 7);
    expect_counted(w, 119, set, "view 7 missing");
  }
}
