// The automatic slab plan: within the budgets, evened out, and on the
// backend's alignment (every slab starting on a multiple of it) when slabs
// are at least that thick.
#include <gtest/gtest.h>

#include <cstdint>
#include <fdk/core/error.hpp>
#include <fdk/core/slab_planner.hpp>

namespace {

using fdk::plan_slabs;
using fdk::SlabPlan;

constexpr uint64_t kMiB = uint64_t{1} << 20;

SlabPlan automatic(int planes, int max_thickness, int align, uint64_t budget = 1024 * kMiB) {
  return plan_slabs(
      planes, kMiB, budget, 0, max_thickness, 64 * kMiB, [](int) { return uint64_t{0}; }, align);
}

void expect_covers(const SlabPlan& plan, int planes) {
  ASSERT_FALSE(plan.slabs.empty());
  EXPECT_EQ(plan.slabs.front()[0], 0);
  EXPECT_EQ(plan.slabs.back()[1], planes);
  for (size_t s = 1; s < plan.slabs.size(); ++s) EXPECT_EQ(plan.slabs[s][0], plan.slabs[s - 1][1]);
}

}  // namespace

TEST(SlabPlanner, AutomaticSlabsStartOnTheAlignment) {
  // 1000 planes in slabs of at most 64: evened out, 63; aligned, 64.
  EXPECT_EQ(automatic(1000, 1000, 1).thickness, 63);
  const SlabPlan aligned = automatic(1000, 1000, 16);
  EXPECT_EQ(aligned.thickness, 64);
  expect_covers(aligned, 1000);
  // A device cap of 37 planes: 32, every slab on a multiple of 16.
  const SlabPlan capped = automatic(1000, 37, 16);
  EXPECT_EQ(capped.thickness, 32);
  expect_covers(capped, 1000);
  for (const auto& s : capped.slabs) EXPECT_EQ(s[0] % 16, 0);
  // 2048 planes under a cap of 210 (10 slabs, as (c) with an 8 GiB GPU
  // budget): 205 evened out, 208 aligned.
  const auto capped_at_210 = [](int align) {
    return plan_slabs(
        2048, kMiB, 4096 * kMiB, 0, 210, 1024 * kMiB, [](int) { return uint64_t{0}; }, align);
  };
  EXPECT_EQ(capped_at_210(1).thickness, 205);
  EXPECT_EQ(capped_at_210(16).thickness, 208);
}

TEST(SlabPlanner, SlabsThinnerThanTheAlignmentAreKept) {
  // A cap under the alignment: slabs of 8 rather than none.
  const SlabPlan thin = automatic(100, 8, 16);
  EXPECT_EQ(thin.thickness, 8);
  expect_covers(thin, 100);
  // A requested thickness is the caller's, aligned or not.
  const SlabPlan asked = plan_slabs(
      100, kMiB, 1024 * kMiB, 24, 100, 64 * kMiB, [](int) { return uint64_t{0}; }, 16);
  EXPECT_EQ(asked.thickness, 24);
}

namespace {

// (c) with an 8 GiB GPU budget, as above, on `workers` GPUs whose first
// slab is computed during the scan (or not).
SlabPlan c8_on(int workers, int during_scan, int align = 16) {
  return plan_slabs(
      2048, kMiB, 4096 * kMiB, 0, 210, 1024 * kMiB, [](int) { return uint64_t{0}; }, align, workers, during_scan);
}

}  // namespace

TEST(SlabPlanner, SlabsSharedOutAfterTheScanSplitEvenlyOverTheGpus) {
  // One GPU: the plan of one GPU (10 slabs of 208).
  EXPECT_EQ(c8_on(1, 1).slabs.size(), 10u);
  for (int workers : {2, 3, 4})
    for (int during : {0, 1, workers}) {
      const SlabPlan p = c8_on(workers, during);
      const int slabs = static_cast<int>(p.slabs.size());
      EXPECT_EQ((slabs - during) % workers, 0) << workers << " GPUs, " << during << " during the scan: " << slabs;
      EXPECT_GE(slabs, 10) << "never thicker than one GPU's plan";
      EXPECT_LE(p.thickness, 208);
      EXPECT_EQ(p.thickness % 16, 0) << "still on the alignment";
      expect_covers(p, 2048);
    }
  // Eight GPUs and the first slab during the scan would need 9 or 17 slabs,
  // which no multiple of 16 planes gives within a few tries: the plan of
  // one GPU stays.
  EXPECT_EQ(c8_on(8, 1).slabs.size(), 10u);
  // Two GPUs, the first slab during the scan: 11 slabs (1 + 5 + 5), not
  // 10 (1 + 5 + 4).
  EXPECT_EQ(c8_on(2, 1).slabs.size(), 11u);
  // Two GPUs with a slab each during the scan: 10 (2 + 4 + 4); four: 12
  // (4 + 2 + 2 + 2 + 2).
  EXPECT_EQ(c8_on(2, 2).slabs.size(), 10u);
  EXPECT_EQ(c8_on(4, 4).slabs.size(), 12u);
  // A volume in one slab is not cut for the GPUs (nothing is shared out),
  // nor is a thickness the caller asked for.
  EXPECT_EQ(automatic(64, 64, 16).slabs.size(), 1u);
  EXPECT_EQ(plan_slabs(64, kMiB, 1024 * kMiB, 0, 64, 64 * kMiB, [](int) { return uint64_t{0}; }, 16, 4, 1).slabs.size(),
            1u);
  EXPECT_EQ(plan_slabs(2048, kMiB, 4096 * kMiB, 208, 210, 1024 * kMiB, [](int) { return uint64_t{0}; }, 16, 2, 1)
                .slabs.size(),
            10u);
}
