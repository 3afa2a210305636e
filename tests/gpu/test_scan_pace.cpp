// The scan's pace: a streamed volume's views are filtered and stored as
// fast as they come, whatever else its GPUs prepare or compute meanwhile
// (the early slab's backprojection, the slabs' pinned staging). Slow
// steps are made slower through the CUDA backend's test seams
// (fdk/kernels/test_seams.hpp), so a lane that waits for them shows. Part
// of test_multi_gpu (fdk_testable); skips, saying "skipped: no GPU", where
// no CUDA device is usable.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "fdk/kernels/test_seams.hpp"
#include "multi_gpu_support.hpp"
#include "small_scan.hpp"

using fdk::cuda::FaultPlan;
using fdk::cuda::ScopedFaultPlan;
using fdk_test::SmallScan;
using namespace fdk_test::multi_gpu;

namespace {

struct Paced {
  Outcome outcome;
  double seconds = 0;  // from the first push until every view was STORED
};

// Pushes every view of `scan`, waits (10 s at most) until each is STORED,
// then finishes and reads the volume. Pushes return once the pixels are
// copied: what a wait on the filter lanes delays is the views' filtering,
// seen as each view's state turning STORED.
Paced paced_scan(const fdk_config& config, const SmallScan& scan) {
  Paced out;
  fdk_context* ctx = nullptr;
  EXPECT_EQ(fdk_create(&config, &ctx), FDK_OK) << fdk_last_create_error();
  if (!ctx) return out;
  const auto start = std::chrono::steady_clock::now();
  const auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  for (int v = 0; v < scan.views(); ++v)
    EXPECT_EQ(fdk_push_projection(ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK) << fdk_last_error(ctx);
  int stored = 0;
  while (stored < scan.views() && seconds() < 10) {
    stored = 0;
    for (int v = 0; v < scan.views(); ++v) {
      int32_t state = FDK_VIEW_ABSENT;
      EXPECT_EQ(fdk_get_view_state(ctx, v, &state, nullptr), FDK_OK);
      stored += state == FDK_VIEW_STORED ? 1 : 0;
    }
    if (stored < scan.views()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  out.seconds = seconds();
  EXPECT_EQ(stored, scan.views());
  EXPECT_EQ(fdk_finish(ctx), FDK_OK) << fdk_last_error(ctx);
  out.outcome = outcome_of(ctx);
  return out;
}

// A streamed scan on one GPU whose first slab is backprojected during the
// scan (the early slab), in groups of 2 mirror pairs: 13 pairs, 7 groups
// (26 views: no quads, whose groups would be 32 quads).
const SmallScan& streamed_scan() {
  static const SmallScan scan(128, 26, 64);
  return scan;
}
fdk_config streamed_config() { return on_devices(streamed_scan().config, {0}, 6u << 20); }

// paced_scan of the streamed scan with `plan` set, in groups of 2 pairs.
Paced paced_with(FaultPlan plan) {
  plan.stream_group_pairs = 2;
  ScopedFaultPlan scope(plan);
  return paced_scan(streamed_config(), streamed_scan());
}

// The volume without any hold, to compare bits with.
const Outcome& unheld() {
  static const Outcome out = paced_with(FaultPlan{}).outcome;
  return out;
}

// Under `slow`, every view is stored within 0.5 s, the first slab still
// comes from the scan, and the volume is the same bits as without it.
void expect_scan_paced(const FaultPlan& slow, const char* waited_for, const char* what) {
  const Paced held = paced_with(slow);
  EXPECT_LT(held.seconds, 0.5) << "the views' filtering waited for " << waited_for;
  ASSERT_GT(unheld().slabs, 2);
  EXPECT_EQ(held.outcome.slabs, unheld().slabs);
  EXPECT_EQ(held.outcome.stats.slabs_computed[0], held.outcome.slabs - 1) << "the first slab comes from the scan";
  EXPECT_TRUE(same_bits(unheld().volume, held.outcome.volume));
  std::printf("[gpu] %s: %d views stored in %.3f s; same bits: %s\n", what, streamed_scan().views(), held.seconds,
              same_bits(unheld().volume, held.outcome.volume) ? "yes" : "NO");
}

}  // namespace

// The views are filtered at the scan's pace, not at the early slab's. On a
// GPU whose backprojection is slow (each of the early slab's 6 groups held
// 250 ms on the GPU), every view is filtered and stored before the GPU
// could have run two groups; the early slab completes in fdk_finish, and
// the volume is the same bits as without the hold. When a filter lane
// waited for the backprojection's two batch sets, the last view was
// filtered at least 1 s after the first group was launched.
TEST(MultiGpu, TheScanDoesNotWaitForTheEarlySlab) {
  SKIP_WITHOUT_GPU();
  FaultPlan slow;
  slow.early_group_hold_ms = 250;
  expect_scan_paced(slow, "the early slab's backprojection", "early slab held 250 ms a group");
}

// Nor at the pace of pinning the host memory that the slabs from the store
// are uploaded from (in (d) 3 GiB a GPU, 1.1-1.6 s). On a host where that
// takes 0.5 s more a batch set, every view is still stored at once. When the
// early slab's first view pinned it on its filter lane, no view could be
// stored before both sets were (1 s here; in (d) the push stopped 2.5-3.5 s).
TEST(MultiGpu, TheScanDoesNotWaitForPinnedStaging) {
  SKIP_WITHOUT_GPU();
  FaultPlan slow;
  slow.staging_hold_ms = 500;
  expect_scan_paced(slow, "the staging to be pinned", "staging pinned 0.5 s a set slower");
}
