// A handle destroyed twice, used after fdk_destroy, or never made: a clear
// status and message, never a use after free (suite DeadHandle). Each test
// makes no fdk_create between the destroy and the stale calls, since a new
// handle could reuse the address (the limit fdk.h states).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "small_scan.hpp"

using fdk_test::SmallScan;

namespace {

constexpr const char* kNotLive = "not a live fdk handle: destroyed or never created";

fdk_context* finished_then_destroyed(const SmallScan& scan) {
  fdk_context* ctx = nullptr;
  EXPECT_EQ(fdk_create(&scan.config, &ctx), FDK_OK) << fdk_last_create_error();
  for (int v = 0; v < scan.views(); ++v)
    EXPECT_EQ(fdk_push_projection(ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK);
  EXPECT_EQ(fdk_finish(ctx), FDK_OK);
  fdk_destroy(ctx);
  return ctx;  // dangling: only its address is used
}

// Every entry point that takes a handle refuses `dead` with
// INVALID_ARGUMENT and the thread-local message.
void expect_every_call_refused(fdk_context* dead, const SmallScan& scan) {
  const auto refused = [&](fdk_status s, const char* call) {
    EXPECT_EQ(s, FDK_ERROR_INVALID_ARGUMENT) << call << ": " << fdk_status_string(s);
    EXPECT_NE(std::string(fdk_last_create_error()).find(kNotLive), std::string::npos)
        << call << ": '" << fdk_last_create_error() << "'";
  };
  int32_t n = 0, state = 0, failure = 0;
  fdk_slab_info slab{};
  slab.struct_size = sizeof slab;
  fdk_progress progress{};
  progress.struct_size = sizeof progress;
  fdk_store_info store{};
  store.struct_size = sizeof store;
  fdk_plan_info plan{};
  plan.struct_size = sizeof plan;
  fdk_timings timings{};
  timings.struct_size = sizeof timings;
  fdk_device_stats stats{};
  stats.struct_size = sizeof stats;
  std::vector<float> buffer(static_cast<size_t>(scan.config.volume.size[0]) * scan.config.volume.size[1] *
                            scan.config.volume.size[2]);
  refused(fdk_push_projection(dead, 0, scan.pixels(0), scan.pitch(), nullptr), "fdk_push_projection");
  refused(fdk_finish(dead), "fdk_finish");
  refused(fdk_get_view_state(dead, 0, &state, &failure), "fdk_get_view_state");
  refused(fdk_slab_count(dead, &n), "fdk_slab_count");
  refused(fdk_get_slab_info(dead, 0, &slab), "fdk_get_slab_info");
  refused(fdk_read_slab(dead, 0, buffer.data(), buffer.size() * sizeof(float)), "fdk_read_slab");
  refused(fdk_slab_ready(dead, 0, &n), "fdk_slab_ready");
  refused(fdk_set_progress_callback(dead, nullptr, nullptr), "fdk_set_progress_callback");
  refused(fdk_get_progress(dead, &progress), "fdk_get_progress");
  refused(fdk_cancel(dead), "fdk_cancel");
  refused(fdk_get_store_info(dead, &store), "fdk_get_store_info");
  refused(fdk_get_plan_info(dead, &plan), "fdk_get_plan_info");
  refused(fdk_get_timings(dead, &timings), "fdk_get_timings");
  refused(fdk_get_device_stats(dead, &stats), "fdk_get_device_stats");
  // Its own message went with it: fdk_last_error gives the thread's.
  EXPECT_NE(std::string(fdk_last_error(dead)).find(kNotLive), std::string::npos) << fdk_last_error(dead);
}

TEST(DeadHandle, DestroyTwiceDoesNothing) {
  SmallScan scan(16, 6, 24);
  fdk_context* dead = finished_then_destroyed(scan);
  fdk_destroy(dead);  // a second and a third time: nothing
  fdk_destroy(dead);
  // The library still works.
  fdk_context* ctx = nullptr;
  ASSERT_EQ(fdk_create(&scan.config, &ctx), FDK_OK) << fdk_last_create_error();
  fdk_destroy(ctx);
}

TEST(DeadHandle, EveryCallAfterDestroyIsRefused) {
  SmallScan scan(16, 6, 24);
  fdk_context* dead = finished_then_destroyed(scan);
  expect_every_call_refused(dead, scan);
  fdk_destroy(dead);
}

TEST(DeadHandle, APointerNeverCreatedIsRefused) {
  SmallScan scan(16, 6, 24);
  alignas(64) unsigned char bytes[1024] = {};
  fdk_context* never = reinterpret_cast<fdk_context*>(bytes);
  expect_every_call_refused(never, scan);
  fdk_destroy(never);  // nothing: not freed, not written
  for (unsigned char b : bytes) ASSERT_EQ(b, 0);
}

TEST(DeadHandle, ALiveHandleIsUnaffected) {
  SmallScan scan(16, 6, 24);
  fdk_context* ctx = nullptr;
  ASSERT_EQ(fdk_create(&scan.config, &ctx), FDK_OK) << fdk_last_create_error();
  int32_t n = -1;
  EXPECT_EQ(fdk_slab_count(ctx, &n), FDK_OK) << fdk_last_error(ctx);
  EXPECT_GT(n, 0);
  EXPECT_EQ(fdk_slab_count(ctx, nullptr), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fdk_last_error(ctx)).find("count is NULL"), std::string::npos) << fdk_last_error(ctx);
  fdk_destroy(ctx);
}

}  // namespace
