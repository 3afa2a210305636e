// The backprojection meter behind fdk_progress.backprojection_done: credit
// per slab, capped at its share, never decreasing, and a slab computed
// again from its start (a resident volume's finish that starts over)
// credited only once its new reports pass what it had.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "fdk/core/backprojection_meter.hpp"

using fdk::BackprojectionMeter;

namespace {

// Two slabs of 4 and 6 planes, 10 views: a total of 100 units.
BackprojectionMeter two_slabs() { return BackprojectionMeter({{0, 4}, {4, 10}}, 10); }

}  // namespace

TEST(BackprojectionMeter, CountsReportsIntoTheSlabsTheyCover) {
  BackprojectionMeter m = two_slabs();
  EXPECT_EQ(m.total(), 100);
  m.add(2, 6, 3);  // 2 planes of each slab
  EXPECT_EQ(m.done(), 12);
  m.add(0, 4, 100);  // capped at the first slab's 40
  EXPECT_EQ(m.done(), 40 + 6);
  m.complete(4, 10);
  EXPECT_EQ(m.done(), 100);
}

TEST(BackprojectionMeter, ARestartedSlabCountsOnlyPastItsCredit) {
  BackprojectionMeter m = two_slabs();
  m.add(0, 10, 5);  // half of each slab
  EXPECT_EQ(m.done(), 50);
  m.restart(0, 4);
  m.add(0, 4, 3);  // the first slab again: 12 of its 20 before
  EXPECT_EQ(m.done(), 50);
  m.add(0, 4, 4);  // 28: past them
  EXPECT_EQ(m.done(), 58);
  m.add(4, 10, 1);  // the second slab was not restarted: 36
  EXPECT_EQ(m.done(), 64);
  // Without the restart the discarded 20 and the new 12 would sum to 32.
  BackprojectionMeter plain = two_slabs();
  plain.add(0, 10, 5);
  plain.add(0, 4, 3);
  EXPECT_EQ(plain.done(), 32 + 30);
}

TEST(BackprojectionMeter, FewerViewsLowerTheTotalAndCapTheDone) {
  BackprojectionMeter m = two_slabs();
  m.add(0, 10, 8);
  EXPECT_EQ(m.done(), 80);
  m.set_views(6);  // four views never arrived
  EXPECT_EQ(m.total(), 60);
  EXPECT_EQ(m.done(), 60);
}
