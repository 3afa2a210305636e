// The store and the host budget: views are coded only when the scan would
// not fit uncoded; a scan whose coded projections outgrow the budget keeps
// its later views as float16 by default and completes, with the bound
// reported; FDK_STORE_STRICT refuses the view that does not fit.
#include <fdk/fdk.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "small_scan.hpp"

using fdk_test::SmallScan;

namespace {

// The smallest host budget fdk_create accepts for `config` (to 4 KiB).
uint64_t minimal_budget(fdk_config config) {
  for (uint64_t budget = 4096;; budget += 4096) {
    config.host_memory_budget = budget;
    fdk_context* ctx = nullptr;
    const fdk_status s = fdk_create(&config, &ctx);
    fdk_destroy(ctx);
    if (s == FDK_OK) return budget;
    EXPECT_EQ(s, FDK_ERROR_BUDGET);
    if (s != FDK_ERROR_BUDGET || budget > (64u << 20)) return 0;
  }
}

fdk_store_info store_of(fdk_context* ctx) {
  fdk_store_info info{};
  info.struct_size = sizeof(info);
  EXPECT_EQ(fdk_get_store_info(ctx, &info), FDK_OK);
  return info;
}

fdk_plan_info plan_of(fdk_context* ctx) {
  fdk_plan_info info{};
  info.struct_size = sizeof(info);
  EXPECT_EQ(fdk_get_plan_info(ctx, &info), FDK_OK);
  return info;
}

// Pushes every view; returns how many were accepted before the first error.
int push_all(fdk_context* ctx, const SmallScan& scan, fdk_status* first_error) {
  *first_error = FDK_OK;
  for (int v = 0; v < scan.views(); ++v) {
    const fdk_status s = fdk_push_projection(ctx, v, scan.pixels(v), scan.pitch(), nullptr);
    if (s != FDK_OK) {
      *first_error = s;
      return v;
    }
  }
  return scan.views();
}

// Pushes the whole scan, finishes, reads the volume; the store's report.
fdk_store_info reconstruct_all(const fdk_config& config, const SmallScan& scan, std::vector<float>& volume,
                               fdk_plan_info* plan = nullptr) {
  fdk_context* ctx = nullptr;
  EXPECT_EQ(fdk_create(&config, &ctx), FDK_OK) << fdk_last_create_error();
  if (!ctx) return {};
  fdk_status error;
  EXPECT_EQ(push_all(ctx, scan, &error), scan.views()) << fdk_last_error(ctx);
  EXPECT_EQ(fdk_finish(ctx), FDK_OK) << fdk_last_error(ctx);
  const fdk_store_info info = store_of(ctx);
  if (plan) *plan = plan_of(ctx);
  EXPECT_EQ(fdk_test::read_volume(ctx, volume), FDK_OK) << fdk_last_error(ctx);
  fdk_destroy(ctx);
  return info;
}

}  // namespace

// A scan that fits its budget uncoded is stored as it is (no core spent on
// a ratio it does not need); one that does not is coded, losslessly: the
// same volume, bit for bit, in less memory.
TEST(StorePolicy, ViewsAreCodedOnlyWhenTheBudgetNeedsIt) {
  SmallScan scan(32, 32, 48);
  scan.config.slab_thickness = scan.config.volume.size[1];  // one slab plan for both budgets
  std::vector<float> plain_volume, coded_volume;
  const fdk_store_info plain = reconstruct_all(scan.config, scan, plain_volume);
  EXPECT_EQ(plain.views_stored, scan.views());
  EXPECT_LE(plain.ratio, 1.0);  // the bytes as they are, plus a band header
  EXPECT_GE(plain.stored_bytes, 4ull * 32 * 32 * static_cast<uint64_t>(scan.views()));

  const uint64_t minimal = minimal_budget(scan.config);
  ASSERT_GT(minimal, 0u);
  fdk_config tight = scan.config;
  tight.host_memory_budget = minimal + plain.stored_bytes * 99 / 100;
  fdk_plan_info plan{};
  const fdk_store_info coded = reconstruct_all(tight, scan, coded_volume, &plan);
  EXPECT_LT(plan.store_limit, plain.stored_bytes);
  EXPECT_EQ(coded.views_stored, scan.views());
  EXPECT_EQ(coded.views_reduced, 0);
  EXPECT_GT(coded.ratio, 1.0);
  EXPECT_LT(coded.stored_bytes, plain.stored_bytes);
  ASSERT_EQ(coded_volume.size(), plain_volume.size());
  EXPECT_EQ(coded_volume, plain_volume);
}

TEST(StorePolicy, ScanOutgrowingTheBudgetCompletesAtReducedPrecisionByDefault) {
  SmallScan scan(32, 32, 48);
  scan.config.slab_thickness = scan.config.volume.size[1];
  // The whole scan at float32, coded (a budget just under its uncoded
  // size), without more pressure: nothing reduced.
  std::vector<float> plain_volume;
  const fdk_store_info plain = reconstruct_all(scan.config, scan, plain_volume);
  const uint64_t minimal = minimal_budget(scan.config);
  ASSERT_GT(minimal, 0u);
  fdk_config coded = scan.config;
  coded.host_memory_budget = minimal + plain.stored_bytes * 99 / 100;
  std::vector<float> reference;
  fdk_plan_info coded_plan{};
  const fdk_store_info full = reconstruct_all(coded, scan, reference, &coded_plan);
  EXPECT_EQ(full.views_reduced, 0);
  EXPECT_EQ(full.rel_error_bound, 0.0);
  EXPECT_GT(full.ratio, 1.0);
  EXPECT_EQ(coded_plan.store_policy, FDK_STORE_REDUCE_PRECISION);
  fdk_context* ctx = nullptr;
  fdk_status error;

  // A budget whose store holds 70 % of the coded float32 scan.
  scan.config.host_memory_budget = minimal + full.stored_bytes * 7 / 10;

  // Strict: a view does not fit and is refused (what every scan did before).
  fdk_config strict = scan.config;
  strict.store_policy = FDK_STORE_STRICT;
  ASSERT_EQ(fdk_create(&strict, &ctx), FDK_OK) << fdk_last_create_error();
  EXPECT_LT(push_all(ctx, scan, &error), scan.views());
  EXPECT_EQ(error, FDK_ERROR_BUDGET) << fdk_last_error(ctx);
  fdk_destroy(ctx);

  // The default: every view is taken, the later ones as float16.
  ASSERT_EQ(fdk_create(&scan.config, &ctx), FDK_OK) << fdk_last_create_error();
  const fdk_plan_info plan = plan_of(ctx);
  EXPECT_NE(plan.store_fit, FDK_STORE_FITS);  // the worst case does not fit
  EXPECT_GT(plan.store_limit, 0u);
  EXPECT_LT(plan.store_limit, full.stored_bytes);
  ASSERT_EQ(push_all(ctx, scan, &error), scan.views()) << fdk_last_error(ctx);
  ASSERT_EQ(fdk_finish(ctx), FDK_OK) << fdk_last_error(ctx);
  const fdk_store_info reduced = store_of(ctx);
  EXPECT_EQ(reduced.views_stored, scan.views());
  EXPECT_GT(reduced.views_reduced, 0);
  EXPECT_LT(reduced.views_reduced, scan.views());  // the first ones are exact
  EXPECT_LE(reduced.stored_bytes, plan.store_limit);
  EXPECT_GT(reduced.rel_error_bound, 0.0);
  EXPECT_GT(reduced.abs_error_bound_factor, 0.0);
  std::vector<float> volume;
  ASSERT_EQ(fdk_test::read_volume(ctx, volume), FDK_OK) << fdk_last_error(ctx);
  ASSERT_EQ(volume.size(), reference.size());
  // float16 views: about 2^-11 relative on the projections.
  EXPECT_LT(fdk_test::relative_l2(volume, reference), 2e-3);
  EXPECT_GT(fdk_test::relative_l2(volume, reference), 0.0);
  fdk_destroy(ctx);
}

// An older caller's fdk_store_info (0.2, without views_reduced) and
// fdk_plan_info are still answered, up to their size.
TEST(StorePolicy, OlderStructSizesAreAnswered) {
  SmallScan scan;
  fdk_context* ctx = nullptr;
  ASSERT_EQ(fdk_create(&scan.config, &ctx), FDK_OK);
  fdk_store_info store{};
  store.struct_size = offsetof(fdk_store_info, views_reduced);
  store.views_reduced = 77;
  EXPECT_EQ(fdk_get_store_info(ctx, &store), FDK_OK);
  EXPECT_EQ(store.views_reduced, 77);  // beyond its size: untouched
  fdk_plan_info plan{};
  plan.struct_size = offsetof(fdk_plan_info, store_policy);
  plan.store_fit = 77;
  EXPECT_EQ(fdk_get_plan_info(ctx, &plan), FDK_OK);
  EXPECT_EQ(plan.store_fit, 77);
  store.struct_size = 12;
  EXPECT_EQ(fdk_get_store_info(ctx, &store), FDK_ERROR_STRUCT_SIZE);
  fdk_destroy(ctx);
  // And a 0.2 fdk_config, without store_policy, gets the default.
  fdk_config old = scan.config;
  old.struct_size = offsetof(fdk_config, store_policy);
  old.store_policy = 99;  // beyond its size: not read
  ASSERT_EQ(fdk_create(&old, &ctx), FDK_OK) << fdk_last_create_error();
  plan.struct_size = sizeof(plan);
  ASSERT_EQ(fdk_get_plan_info(ctx, &plan), FDK_OK);
  EXPECT_EQ(plan.store_policy, FDK_STORE_REDUCE_PRECISION);
  fdk_destroy(ctx);
  scan.config.store_policy = 2;
  EXPECT_EQ(fdk_create(&scan.config, &ctx), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fdk_last_create_error()).find("store_policy"), std::string::npos);
}
