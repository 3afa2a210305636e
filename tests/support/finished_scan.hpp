// A small scan run through the C ABI up to fdk_finish, for the tests that
// then read what it made (slabs, preview, stats). Failures are the test's.
#pragma once
#include <fdk/fdk.h>
#include <gtest/gtest.h>

#include "small_scan.hpp"

namespace fdk_test {

// A context on `config` with every view of `scan` pushed and finished, for
// the caller to destroy (null when it cannot be created).
inline fdk_context* finished_scan(const fdk_config& config, const SmallScan& scan) {
  fdk_context* ctx = nullptr;
  EXPECT_EQ(fdk_create(&config, &ctx), FDK_OK) << fdk_last_create_error();
  if (!ctx) return nullptr;
  for (int v = 0; v < scan.views(); ++v)
    EXPECT_EQ(fdk_push_projection(ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK) << fdk_last_error(ctx);
  EXPECT_EQ(fdk_finish(ctx), FDK_OK) << fdk_last_error(ctx);
  return ctx;
}

}  // namespace fdk_test
