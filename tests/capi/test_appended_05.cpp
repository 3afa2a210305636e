// What 0.5 appended to the C ABI: fdk_config.hann_cutoff_v (validated,
// absent from an older struct: off) and fdk_progress's backprojection
// counters, which move while a slab is computed (polled from a second
// thread during fdk_read_slab), never go back, and end at their total.
#include <fdk/fdk.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstddef>
#include <string>
#include <thread>
#include <vector>

#include "small_scan.hpp"

using fdk_test::SmallScan;

namespace {

fdk_status create_with_cutoff(fdk_config config, double cutoff) {
  config.hann_cutoff_v = cutoff;
  fdk_context* ctx = nullptr;
  const fdk_status s = fdk_create(&config, &ctx);
  fdk_destroy(ctx);
  return s;
}

std::vector<float> reconstruct(const fdk_config& config, const SmallScan& scan) {
  fdk_context* ctx = nullptr;
  EXPECT_EQ(fdk_create(&config, &ctx), FDK_OK) << fdk_last_create_error();
  if (!ctx) return {};
  for (int v = 0; v < scan.views(); ++v)
    EXPECT_EQ(fdk_push_projection(ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK) << fdk_last_error(ctx);
  EXPECT_EQ(fdk_finish(ctx), FDK_OK);
  std::vector<float> volume;
  EXPECT_EQ(fdk_test::read_volume(ctx, volume), FDK_OK) << fdk_last_error(ctx);
  fdk_destroy(ctx);
  return volume;
}

TEST(HannY, OutOfRangeAndNanAreRefusedByName) {
  SmallScan scan(8, 4, 8);
  EXPECT_EQ(fdk_config_init(&scan.config)->hann_cutoff_v, 0.0);
  scan = SmallScan(8, 4, 8);
  for (double bad : {-0.1, 1.0000001, 2.0, std::nan(""), double(INFINITY)}) {
    EXPECT_EQ(create_with_cutoff(scan.config, bad), FDK_ERROR_INVALID_ARGUMENT) << bad;
    EXPECT_NE(std::string(fdk_last_create_error()).find("hann_cutoff_v"), std::string::npos)
        << fdk_last_create_error();
  }
  for (double good : {0.0, 1e-3, 0.5, 1.0}) EXPECT_EQ(create_with_cutoff(scan.config, good), FDK_OK) << good;
}

TEST(HannY, SmoothsAlongYAndAnOlderConfigGetsNone) {
  SmallScan scan(24, 36, 40);
  const std::vector<float> plain = reconstruct(scan.config, scan);
  fdk_config windowed = scan.config;
  windowed.hann_cutoff_v = 0.3;
  const std::vector<float> smooth = reconstruct(windowed, scan);
  ASSERT_EQ(plain.size(), smooth.size());
  EXPECT_GT(fdk_test::relative_l2(smooth, plain), 0.01);
  // The window is a low-pass along v: differences between neighbouring y
  // planes (the volume's slowest axis) shrink (the exact kernel is
  // test_vertical_window's).
  auto roughness = [](const std::vector<float>& vol, size_t step) {
    double sum = 0;
    for (size_t i = 0; i + step < vol.size(); ++i) sum += std::abs(double(vol[i + step]) - vol[i]);
    return sum;
  };
  const size_t plane = 24 * 24;
  EXPECT_LT(roughness(smooth, plane), 0.8 * roughness(plain, plane));
  // A 0.4 caller's struct ends before hann_cutoff_v: whatever lies beyond
  // is not read, and the window is off.
  fdk_config old = windowed;
  old.struct_size = offsetof(fdk_config, hann_cutoff_v);
  EXPECT_EQ(reconstruct(old, scan), plain);
}

fdk_progress progress_of(const fdk_context* ctx) {
  fdk_progress p{};
  p.struct_size = sizeof(p);
  EXPECT_EQ(fdk_get_progress(ctx, &p), FDK_OK);
  return p;
}

TEST(Progress, BackprojectionMovesDuringTheOnlySlabAndEndsAtItsTotal) {
  SmallScan scan(64, 160, 64);
  scan.config.num_threads = 1;
  scan.config.slab_thickness = 64;  // one slab: slabs_done says 0 until the end
  fdk_context* ctx = nullptr;
  ASSERT_EQ(fdk_create(&scan.config, &ctx), FDK_OK) << fdk_last_create_error();
  fdk_progress p = progress_of(ctx);
  EXPECT_EQ(p.slabs_total, 1);
  EXPECT_EQ(p.backprojection_done, 0);
  EXPECT_EQ(p.backprojection_total, int64_t{160} * 64);
  for (int v = 0; v < scan.views(); ++v)
    ASSERT_EQ(fdk_push_projection(ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK);
  ASSERT_EQ(fdk_finish(ctx), FDK_OK);
  EXPECT_EQ(progress_of(ctx).backprojection_done, 0);  // the CPU backprojects when a slab is read

  std::atomic<bool> reading{true};
  std::vector<int64_t> seen;
  bool monotone = true, bounded = true;
  std::thread poller([&] {
    int64_t last = 0;
    while (reading.load()) {
      const fdk_progress q = progress_of(ctx);
      monotone &= q.backprojection_done >= last;
      bounded &= q.backprojection_done <= q.backprojection_total && q.backprojection_total == int64_t{160} * 64;
      last = q.backprojection_done;
      if (seen.empty() || seen.back() != last) seen.push_back(last);
    }
  });
  std::vector<float> slab(static_cast<size_t>(64) * 64 * 64);
  const fdk_status s = fdk_read_slab(ctx, 0, slab.data(), slab.size() * sizeof(float));
  reading.store(false);
  poller.join();
  ASSERT_EQ(s, FDK_OK) << fdk_last_error(ctx);
  EXPECT_TRUE(monotone);
  EXPECT_TRUE(bounded);
  int intermediate = 0;
  for (int64_t v : seen) intermediate += v > 0 && v < int64_t{160} * 64 ? 1 : 0;
  EXPECT_GE(intermediate, 1) << "no value strictly between 0 and the total was seen";
  p = progress_of(ctx);
  EXPECT_EQ(p.backprojection_done, p.backprojection_total);
  EXPECT_EQ(p.phase, FDK_PHASE_DONE);
  // Read again: nothing more is counted.
  ASSERT_EQ(fdk_read_slab(ctx, 0, slab.data(), slab.size() * sizeof(float)), FDK_OK);
  EXPECT_EQ(progress_of(ctx).backprojection_done, p.backprojection_total);
  fdk_destroy(ctx);
}

TEST(Progress, TotalFollowsTheViewsThatArrivedAndOlderSizesAreAnswered) {
  SmallScan scan(16, 12, 24);
  fdk_context* ctx = nullptr;
  ASSERT_EQ(fdk_create(&scan.config, &ctx), FDK_OK);
  for (int v = 0; v < 9; ++v) ASSERT_EQ(fdk_push_projection(ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK);
  ASSERT_EQ(fdk_finish(ctx), FDK_OK);
  EXPECT_EQ(progress_of(ctx).backprojection_total, int64_t{9} * 16);
  std::vector<float> volume;
  ASSERT_EQ(fdk_test::read_volume(ctx, volume), FDK_OK);
  fdk_progress p = progress_of(ctx);
  EXPECT_EQ(p.backprojection_done, int64_t{9} * 16);
  // A 0.4 caller's fdk_progress ends before the counters: they stay untouched.
  fdk_progress old{};
  old.struct_size = offsetof(fdk_progress, backprojection_done);
  old.backprojection_done = -7;
  EXPECT_EQ(fdk_get_progress(ctx, &old), FDK_OK);
  EXPECT_EQ(old.backprojection_done, -7);
  EXPECT_EQ(old.slabs_done, p.slabs_done);
  old.struct_size = 12;
  EXPECT_EQ(fdk_get_progress(ctx, &old), FDK_ERROR_STRUCT_SIZE);
  fdk_destroy(ctx);
}

}  // namespace
